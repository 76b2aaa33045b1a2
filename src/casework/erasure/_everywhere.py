"""Complete deletion: `casework dataset forget` and `casework dataset expire` reach every store of customer data.

:func:`casework.privacy.forget` and :func:`casework.privacy.expire` release dataset versions
without the rows; the rows also live in every other store the registry
(:mod:`casework.erasure._registry`) names: workbench tables, run logs, reports, shape sets,
leakage flags, judge tuning keys. Entry points :func:`forget_everywhere` and
:func:`expire_everywhere` remove those copies as well (a session that only a shape set or the
workbench holds included), list the exported copies out of reach by path, the files in the
project that still hold the rows, and the copies no command can see.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Literal

from casework.dataset import StageProgress
from casework.dataset.copies import CopyRecord
from casework.erasure._files import discover_in_shapes
from casework.erasure._registry import FILES, TABLES
from casework.erasure._target import Context, Target
from casework.privacy.retention import Removal, expire, forget
from casework.project import Project
from casework.runner.redact import LogRedaction
from casework.workbench import open_workbench

__all__ = [
    "OUT_OF_REACH",
    "Erasure",
    "StoreCount",
    "expire_everywhere",
    "forget_everywhere",
]

#: Copies no casework command can see: the user must delete or redact them.
OUT_OF_REACH = (
    "labelling sheets sent to labellers (`casework label export`) and their replies",
    "ADK eval sets written by `casework export adk`",
    "reports written with `casework report -o` outside the runs folder, and reports passed on",
    "run logs and reports kept as CI artefacts or copied elsewhere",
    "other workbenches (another CASEWORK_DB_URL, a colleague's machine)",
    "git history, clones and forks (see the purge recipe)",
)

#: Folders never searched for leftover copies (besides hidden ones: `.git`, `.casework`…).
_SKIP_DIRS = frozenset({"venv", "node_modules", "__pycache__"})
_MAX_SCANNED = 64 * 1024 * 1024


@dataclass(frozen=True)
class StoreCount:
    """What one registered store lost.

    Attributes:
        store: The table's name, or the file kind's (:data:`FILES`).
        kind: `table` or `file`.
        count: Rows or items removed (or rewritten, for run headers and calibrations; listed,
            for exported copies).
    """

    store: str
    kind: Literal["table", "file"]
    count: int


@dataclass(frozen=True)
class Erasure:
    """What a deletion request or an expiry removed, everywhere.

    Attributes:
        removals: Per dataset: rows removed and the new release.
        stores: Per registered store reached (every table and file kind that can hold a
            customer's data): what it lost, in registry order.
        run_logs: Run logs rewritten without the removed trials.
        reports: Reports regenerated from the redacted runs.
        reports_deleted: Reports that held removed rows and no longer match a run (deleted).
        copies: Exported copies out of reach (recorded when written) that held removed rows.
        judge_sheets: Reviewers whose judge verdict sheets showed removed rows.
        leftovers: Files in the project, not rewritten by casework, that still hold removed
            rows (including files of a registered kind it could not read).
        out_of_reach: Copies casework cannot see at all.
        reached: Whether the request named anything at all (rows, or conversations only
            shapes or the workbench held).
        dry_run: Whether nothing was changed.
    """

    removals: list[Removal]
    stores: tuple[StoreCount, ...] = ()
    run_logs: list[LogRedaction] = field(default_factory=list)
    reports: list[Path] = field(default_factory=list)
    reports_deleted: list[Path] = field(default_factory=list)
    copies: list[CopyRecord] = field(default_factory=list)
    judge_sheets: tuple[str, ...] = ()
    leftovers: list[Path] = field(default_factory=list)
    out_of_reach: tuple[str, ...] = OUT_OF_REACH
    reached: bool = False
    dry_run: bool = False

    def count(self, store: str) -> int:
        """What the store named ``store`` lost (0 when it was not reached)."""
        return sum(c.count for c in self.stores if c.store == store)


def _workbench_exists(project: Project) -> bool:
    url = project.workbench_url()
    default = f"sqlite:///{project.state_dir / 'workbench.db'}"
    return url != default or (project.state_dir / "workbench.db").exists()


def _leftovers(project: Project, needles: Sequence[bytes], handled: set[Path]) -> list[Path]:
    """Files under the project root that still hold any of ``needles``.

    Not the datasets (released anew) nor what casework rewrote (``handled``): an exported sheet,
    an ADK eval set, a run log it could not read, a log of a dataset not named by `--dataset`.
    """
    if not needles:
        return []
    out = []
    datasets = project.datasets_dir.resolve()
    for folder, dirs, files in os.walk(project.root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        here = Path(folder)
        for name in sorted(files):
            path = here / name
            resolved = path.resolve()
            if resolved in handled:
                continue
            if resolved.is_relative_to(datasets):
                continue  # released data: the new versions no longer hold the rows
            try:
                if path.stat().st_size > _MAX_SCANNED:
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            if any(n in data for n in needles):
                out.append(path)
    return out


def _erase(project: Project, removals: list[Removal], dry_run: bool, now: datetime) -> Erasure:
    target = Target(
        by_dataset={r.dataset: set(r.removed_ids) for r in removals if r.removed_ids},
        needles={n for r in removals for n in (*r.needles, *r.removed_ids)},
    )
    discover_in_shapes(project, target)
    if not target:
        return Erasure(removals, dry_run=dry_run)
    ctx = Context(project, target, dry_run, now)
    counts: list[StoreCount] = []
    if _workbench_exists(project):
        with open_workbench(project) as wb:
            for table in TABLES:
                if table.erase is not None:
                    counts.append(StoreCount(table.table, "table", table.erase(wb, ctx)))
    for kind in FILES:
        if kind.erase is not None:
            counts.append(StoreCount(kind.name, "file", kind.erase(ctx)))
    needles = sorted({n.encode() for n in target.needles if n})
    leftovers = _leftovers(project, needles, ctx.handled)
    leftovers += [p for p in ctx.unreadable if p not in leftovers and p.exists()]
    return Erasure(
        removals,
        tuple(counts),
        ctx.run_logs,
        ctx.reports,
        ctx.reports_deleted,
        ctx.copies,
        tuple(sorted(ctx.judge_sheets)),
        leftovers,
        reached=True,
        dry_run=dry_run,
    )


def forget_everywhere(
    project: Project,
    *,
    emails: Sequence[str] = (),
    accounts: Sequence[str] = (),
    sessions: Sequence[str] = (),
    datasets: Sequence[str] = (),
    now: datetime | None = None,
    dry_run: bool = False,
    environ: Mapping[str, str] | None = None,
    on_progress: StageProgress | None = None,
) -> Erasure:
    """:func:`casework.privacy.forget`, and every other copy of the removed rows goes too.

    The copies go first, then the rows leave the datasets: if anything fails half-way, running
    the command again still finds the rows, and so their copies.

    Raises:
        UsageError: No identifier given, or a named dataset does not exist.
        ConfigError: No usable pseudonym key, or one the dataset's rows were not mined with.
    """
    when = now or datetime.now(UTC)

    def run(dry: bool) -> list[Removal]:
        return forget(
            project,
            emails=emails,
            accounts=accounts,
            sessions=sessions,
            datasets=datasets,
            now=when,
            dry_run=dry,
            environ=environ,
            on_progress=on_progress,
        )

    return _copies_then_rows(project, run, dry_run, when)


def expire_everywhere(
    project: Project,
    *,
    datasets: Sequence[str] = (),
    now: datetime | None = None,
    today: date | None = None,
    dry_run: bool = False,
    on_progress: StageProgress | None = None,
) -> Erasure:
    """:func:`casework.privacy.expire`, and every other copy of the expired rows goes too.

    Raises:
        UsageError: A named dataset does not exist.
    """
    when = now or datetime.now(UTC)

    def run(dry: bool) -> list[Removal]:
        return expire(
            project, datasets=datasets, now=when, today=today, dry_run=dry, on_progress=on_progress
        )

    return _copies_then_rows(project, run, dry_run, when)


def _copies_then_rows(
    project: Project, remove: Callable[[bool], list[Removal]], dry_run: bool, now: datetime
) -> Erasure:
    planned = remove(True)
    erasure = _erase(project, planned, dry_run, now)
    if dry_run or not any(r.removed for r in planned):
        return erasure
    return replace(erasure, removals=remove(False))
