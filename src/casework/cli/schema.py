"""`casework schema`: the JSON Schema of each file format, for editors and validators."""

from __future__ import annotations

import click

from casework.cli.context import emit_json, example

__all__ = ["COMMANDS"]


@example("casework schema case > case.schema.json", "casework schema run")
@click.command("schema")
@click.argument(
    "what", required=False, type=click.Choice(["case", "label", "version", "run"]), default=None
)
@click.option(
    "--record",
    type=click.Choice(["case", "label", "version", "run"]),
    default="case",
    show_default=True,
    help="Which file format: a line of cases.jsonl, labels.jsonl, versions.jsonl or a run log.",
)
def schema_cmd(what: str | None, record: str) -> None:
    """Print the JSON Schema of a file format, for editors and validators.

    WHAT (or `--record`) is `case`, `label`, `version` or `run` (a line of runs/<id>.jsonl).

    See docs/formats.md.
    """
    from casework.schema import LabelRecord, VersionRecord, case_json_schema  # the models, here

    record = what or record
    if record == "case":
        emit_json(case_json_schema())
    elif record == "run":
        from casework.interop import run_log_schema  # here: the runner stays unloaded otherwise

        emit_json(run_log_schema())
    else:
        model = LabelRecord if record == "label" else VersionRecord
        emit_json(model.model_json_schema(by_alias=True))


COMMANDS: list[click.Command] = [schema_cmd]
