"""`casework schema`: the JSON Schema of each file format and of each command's JSON output."""

from __future__ import annotations

import click

from casework.cli._output import OUTPUTS, emit_document, output_model
from casework.cli.context import console, example
from casework.errors import UsageError

__all__ = ["COMMANDS"]

_RECORDS = ["case", "label", "version", "run"]


@example(
    "casework schema case > case.schema.json",
    "casework schema run",
    "casework schema output gate-decision",
    "casework schema --output run-results",
)
@click.command("schema")
@click.argument("what", required=False, type=click.Choice([*_RECORDS, "output"]), default=None)
@click.argument("kind", required=False, default=None)
@click.option(
    "--record",
    type=click.Choice(_RECORDS),
    default="case",
    show_default=True,
    help="Which file format: a line of cases.jsonl, labels.jsonl, versions.jsonl or a run log.",
)
@click.option(
    "--output",
    "output",
    metavar="KIND",
    default=None,
    help="Instead, the JSON output of a command (`casework schema output` lists the kinds).",
)
def schema_cmd(what: str | None, kind: str | None, record: str, output: str | None) -> None:
    """Print the JSON Schema of a file format, for editors and validators.

    WHAT (or `--record`) is `case`, `label`, `version` or `run` (a line of runs/<id>.jsonl).
    `output KIND` (or `--output KIND`) prints the schema of what commands print with
    `--format json`; `output` alone lists the kinds and the commands that print each.

    See docs/formats.md.
    """
    if kind is not None and what != "output":
        raise UsageError(f"takes no second argument after {what!r}. Got {kind!r}.", param="kind")
    if what == "output" or output is not None:
        _print_output_schema(kind or output)
        return
    from casework.schema import LabelRecord, VersionRecord, case_json_schema  # the models, here

    record = what or record
    if record == "case":
        emit_document(case_json_schema())
    elif record == "run":
        from casework.interop import run_log_schema  # here: the runner stays unloaded otherwise

        emit_document(run_log_schema())
    else:
        model = LabelRecord if record == "label" else VersionRecord
        emit_document(model.model_json_schema(by_alias=True))


def _print_output_schema(kind: str | None) -> None:
    if kind is None:
        for entry in OUTPUTS.values():
            console.print(f"{entry.kind}: {', '.join(entry.commands)}", markup=False)
        return
    if kind not in OUTPUTS:
        known = ", ".join(sorted(OUTPUTS))
        raise UsageError(
            f"no command output of this kind (one of: {known}). Got {kind!r}.", param="kind"
        )
    emit_document(output_model(kind).model_json_schema(by_alias=True))


COMMANDS: list[click.Command] = [schema_cmd]
