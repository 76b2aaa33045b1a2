"""`dataset forget` and `dataset expire`: rows leave every dataset and every other store.

Loaded only when one of them runs (the erasure reaches the workbench, run logs and reports).
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any

import click

from casework.cli._moved import moved
from casework.cli._output import emit
from casework.cli._progress import stages
from casework.cli.context import FORMAT, console, example, pass_project
from casework.erasure import Erasure, expire_everywhere, forget_everywhere
from casework.privacy import history_recipe
from casework.project import Project

__all__ = ["ALIASES", "expire_cmd", "forget_cmd"]


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
        from casework.erasure.outputs import ErasureOutput  # here: only JSON output needs it

        emit(ErasureOutput.model_validate(_removal_json(erasure)))
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


@example(
    "casework dataset forget --email jane@example.com --dry-run",
    "casework dataset forget --account A-1042",
)
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


@example("casework dataset expire --as-of 2026-01-31 --dry-run")
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
    released after it must not hold it. Its other copies go as with `casework dataset forget`.
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


#: The old top-level spellings, hidden for one release.
ALIASES: list[click.Command] = [
    moved(forget_cmd, "forget", "dataset forget"),
    moved(expire_cmd, "expire", "dataset expire"),
]
