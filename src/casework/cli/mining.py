"""Mining and privacy commands: mine (traces -> scrubbed drafts), forget, expire."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import click

from casework.cli._progress import Bar, stages
from casework.cli.context import FORMAT, console, emit_json, pass_project
from casework.erasure import Erasure, expire_everywhere, forget_everywhere
from casework.mining import FORMATS, MineOptions, MineReport, mine
from casework.privacy import history_recipe
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
        emit_json(_mine_json(report))
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


def _removal_json(erasure: Erasure) -> dict[str, Any]:
    removals = erasure.removals
    return {
        "dry_run": erasure.dry_run,
        "datasets": [
            {
                "dataset": r.dataset,
                "removed": r.removed,
                "expired": r.expired,
                "kept": r.kept,
                "version": r.version.model_dump(mode="json") if r.version else None,
                "purge_file": str(r.purge_file) if r.purge_file else None,
                "cache_purged": r.cache_purged,
            }
            for r in removals
        ],
        "stores": [{"store": c.store, "kind": c.kind, "count": c.count} for c in erasure.stores],
        "run_logs": [
            {"path": str(log.path), "run_id": log.run_id, "trials": log.trials}
            for log in erasure.run_logs
        ],
        "reports_regenerated": [str(p) for p in erasure.reports],
        "reports_deleted": [str(p) for p in erasure.reports_deleted],
        "not_reached": {
            "copies": [
                {"path": c.path, "kind": c.kind, "dataset": c.dataset, "rows": len(c.case_ids)}
                for c in erasure.copies
            ],
            "judge_sheets_of": list(erasure.judge_sheets),
            "files": [str(p) for p in erasure.leftovers],
            "elsewhere": list(erasure.out_of_reach) if erasure.reached else [],
        },
        "history_recipe": history_recipe(removals),
    }


def _erasure_lines(project: Project, erasure: Erasure) -> list[str]:
    """What else went, store by store, and what casework could not reach (no identifiers)."""
    if not erasure.reached:
        return []
    dry = erasure.dry_run
    verb = "would remove" if dry else "removed"
    lines = [
        f"{c.kind} {c.store}: {verb} {c.count} {'row' if c.kind == 'table' else 'item'}(s)"
        for c in erasure.stores
        if c.count
    ]
    empty = [c.store for c in erasure.stores if not c.count]
    if empty:
        lines.append(f"held none: {', '.join(empty)}")
    lines += [
        f"{project.relative(log.path)}: {verb} {log.trials} trial(s) (run log rewritten)"
        for log in erasure.run_logs
    ]
    lines += [
        f"{project.relative(p)}: {'would regenerate' if dry else 'regenerated'} from the redacted run"
        for p in erasure.reports
    ]
    lines += [
        f"{project.relative(p)}: {'would delete' if dry else 'deleted'} (held removed rows; "
        "no run to regenerate it from)"
        for p in erasure.reports_deleted
    ]
    lines.append("casework cannot reach these copies: delete or redact them yourself")
    lines += [
        f"  {project.relative(Path(c.path))} ({c.kind} of {c.dataset}, "
        f"written {c.written_at:%Y-%m-%d}: held {len(c.case_ids)} removed row(s))"
        for c in erasure.copies
    ]
    lines += [
        f"  judge verdict sheets of {name} (`judge sample --out`: verdicts-{name}.*)"
        for name in erasure.judge_sheets
    ]
    lines += [f"  {project.relative(p)} (holds removed rows)" for p in erasure.leftovers]
    lines += [f"  {what}" for what in erasure.out_of_reach]
    return lines


def _render_removals(project: Project, erasure: Erasure, fmt: str) -> None:
    if fmt == "json":
        emit_json(_removal_json(erasure))
        return
    removals, dry_run = erasure.removals, erasure.dry_run
    for r in removals:
        verb = "would remove" if dry_run else "removed"
        line = f"{r.dataset}: {verb} {r.removed} row(s)"
        if r.expired:
            line += f" ({r.expired} past their retention date)"
        line += f", {r.kept} left"
        if r.version is not None:
            line += f"; released {r.dataset}@{r.version.number} ({r.version.hash[:12]})"
        console.print(line)
        if r.cache_purged:
            console.print(f"  deleted {r.cache_purged} cached old version(s) holding those rows")
    for line in _erasure_lines(project, erasure):
        console.print(line, markup=False)
    recipe = history_recipe(removals)
    if recipe:
        console.print()
        console.print(recipe, markup=False)


@click.command("forget")
@click.option("--email", "emails", multiple=True, help="Customer email (repeatable).")
@click.option("--account", "accounts", multiple=True, help="Customer account id (repeatable).")
@click.option("--session", "sessions", multiple=True, help="Production session id (repeatable).")
@click.option(
    "--dataset", "datasets", multiple=True, help="Only this dataset (repeatable; default: all)."
)
@click.option("--dry-run", is_flag=True, help="Count the rows that would go; change nothing.")
@FORMAT
@pass_project
def forget_cmd(
    project: Project,
    emails: tuple[str, ...],
    accounts: tuple[str, ...],
    sessions: tuple[str, ...],
    datasets: tuple[str, ...],
    dry_run: bool,
    fmt: str,
) -> None:
    """Remove every row naming a customer (a deletion request) and release new versions.

    The identifiers are turned into their keyed pseudonyms (same key as `casework mine`); rows
    whose subjects, session or text hold one leave. The changelog counts rows, never names them.
    Every other store that can hold the customer's data is reached too (each workbench table,
    run logs, reports, shape sets, leakage flags, judge tuning keys; a session only a shape set
    holds included): the output counts what each lost, and lists by path the exported copies
    it cannot reach (labelling sheets, ADK eval sets). See docs/guarantees.md.
    """
    with stages("forget", fmt) as on_progress:
        erasure = forget_everywhere(
            project,
            emails=emails,
            accounts=accounts,
            sessions=sessions,
            datasets=datasets,
            dry_run=dry_run,
            on_progress=on_progress,
        )
    _render_removals(project, erasure, fmt)


@click.command("expire")
@click.option(
    "--dataset", "datasets", multiple=True, help="Only this dataset (repeatable; default: all)."
)
@click.option(
    "--as-of",
    "as_of",
    type=click.DateTime(formats=["%Y-%m-%d"]),
    default=None,
    help="Judge expiry as of this UTC date (default: today), e.g. with --dry-run to look ahead.",
)
@click.option("--dry-run", is_flag=True, help="Count the rows that would go; change nothing.")
@FORMAT
@pass_project
def expire_cmd(
    project: Project,
    datasets: tuple[str, ...],
    as_of: datetime | None,
    dry_run: bool,
    fmt: str,
) -> None:
    """Remove rows past their retain_until date and release new versions.

    A row may stay in versions released on or before its retain_until date; the first version
    released after it must not hold it. Its other copies go as with `casework forget`.
    """
    with stages("expire", fmt) as on_progress:
        erasure = expire_everywhere(
            project,
            datasets=datasets,
            today=as_of.date() if as_of else None,
            dry_run=dry_run,
            on_progress=on_progress,
        )
    _render_removals(project, erasure, fmt)


COMMANDS: list[click.Command] = [mine_cmd, forget_cmd, expire_cmd]
