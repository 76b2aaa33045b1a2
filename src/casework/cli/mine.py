"""`casework mine`: production traces in, scrubbed draft cases of a dataset out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from casework.cli._output import emit
from casework.cli._progress import Bar
from casework.cli.context import FORMAT, console, example, pass_project
from casework.mining import FORMATS, MineOptions, MineReport, mine
from casework.project import Project
from casework.schema import SPLITS

__all__ = ["COMMANDS"]


def _mine_json(report: MineReport) -> dict[str, Any]:
    return {
        "dataset": report.dataset,
        "files": report.files,
        "formats": report.formats,
        "conversations": report.conversations,
        "drafted": report.drafted,
        "already_present": report.already_present,
        "not_failing": report.not_failing,
        "no_user_turn": report.no_user_turn,
        "signals": report.signals,
        "expired": report.expired,
        "version": report.version.model_dump(mode="json") if report.version else None,
        "key_fingerprint": report.key_fingerprint,
    }


@example(
    "casework mine traces/2026-04/ --dataset refunds --failing-only --slice refunds",
    "casework mine export.jsonl --dataset refunds --map messages=conversation",
)
@click.command("mine")
@click.argument("traces", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--dataset", required=True, help="Dataset the drafts are added to (created if new).")
@click.option(
    "--trace-format",
    "trace_format",
    type=click.Choice(FORMATS),
    default=None,
    help="Trace format: jsonl (the generic JSONL/JSON format), otel (OTLP JSON GenAI spans) or "
    "openinference (OTLP JSON OpenInference spans). Default: detected per file.",
)
@click.option(
    "--map",
    "mapping",
    multiple=True,
    metavar="DST=SRC.PATH",
    help="Read field DST from SRC.PATH in the generic format (repeatable), "
    "e.g. --map session_id=meta.sid --map messages=conversation.",
)
@click.option("--failing-only", is_flag=True, help="Keep only conversations with a failure signal.")
@click.option(
    "--slice", "slice_", default="unsorted", show_default=True, help="Slice of the drafts."
)
@click.option(
    "--split",
    type=click.Choice(SPLITS),
    default="dev",
    show_default=True,
    help="Split of the drafts.",
)
@click.option("-m", "--message", default=None, help="Release message.")
@FORMAT
@pass_project
def mine_cmd(
    project: Project,
    traces: tuple[Path, ...],
    dataset: str,
    trace_format: Any,
    mapping: tuple[str, ...],
    failing_only: bool,
    slice_: str,
    split: Any,
    message: str | None,
    fmt: str,
) -> None:
    """Mine production TRACES (files or folders) into scrubbed draft cases of a dataset.

    Every conversation is scrubbed in memory with keyed pseudonyms before anything is written;
    the key comes from CASEWORK_PSEUDONYM_KEY or privacy.key_file (outside the repository).
    Drafts are unlabelled and stop at the customer's last message.

    See docs/privacy.md.
    """
    options = MineOptions(
        trace_format=trace_format,
        mapping=mapping,
        failing_only=failing_only,
        slice=slice_,
        split=split,
        message=message,
    )
    with Bar("scrubbing conversations", fmt) as bar:
        report = mine(
            project,
            list(traces),
            dataset,
            options,
            on_progress=lambda done, total: bar.update(completed=done, total=total),
        )
    if fmt == "json":
        from casework.mining.outputs import MineOutput  # here: only JSON output needs it

        emit(MineOutput.model_validate(_mine_json(report)))
        return
    formats = ", ".join(f"{n} {fmt}" for fmt, n in sorted(report.formats.items()))
    console.print(
        f"read {report.conversations} conversation(s) from {len(report.files)} file(s) ({formats})"
    )
    if report.signals:
        console.print(
            "failure signals: " + ", ".join(f"{k} {v}" for k, v in report.signals.items())
        )
    skipped = [
        (report.not_failing, "without a failure signal (--failing-only)"),
        (report.no_user_turn, "without a user message"),
        (report.already_present, "already in the dataset"),
    ]
    for count, why in skipped:
        if count:
            console.print(f"skipped {count} {why}")
    console.print(
        f"drafted {len(report.drafted)} case(s), scrubbed with key {report.key_fingerprint}"
    )
    if report.expired:
        console.print(f"removed {report.expired} row(s) past their retention date")
    if report.version is None:
        console.print(f"{report.dataset}: nothing new; no release.")
    else:
        v = report.version
        console.print(
            f"{report.dataset}@{v.number} released: {v.hash[:12]} ({v.counts.cases} cases)"
        )


COMMANDS: list[click.Command] = [mine_cmd]
