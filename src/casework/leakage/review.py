"""Flags, never deletions: review decisions on scan flags apply as a new version.

The review state lives in `datasets/<name>/leakage.jsonl` (:mod:`casework.leakage.flagfile`), in
git beside the rows, so the gate sees open flags on any clone. Entry points: :func:`list_flags`,
:func:`decide`, :func:`resolve`, and :func:`unresolved_flags` (what `casework gate` checks); the
scan that records flags is :func:`casework.leakage.scan_dataset`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import get_args

from casework.dataset import load_dataset, read_versions, release
from casework.dataset.lock import dataset_lock
from casework.errors import Hint, UsageError
from casework.leakage.flagfile import read_flags, write_flags
from casework.leakage.flags import (
    UNRESOLVED,
    Decision,
    Flag,
    dataset_name,
    updated,
)
from casework.project import Project
from casework.schema import Case, LeakageFlagRecord, VersionRecord

__all__ = [
    "MovePlan",
    "ResolveReport",
    "decide",
    "list_flags",
    "plan_moves",
    "resolve",
    "settle_flags",
    "unresolved_flags",
]


def _list_pairs(dataset: str) -> Hint:
    """The step that lists a dataset's leakage pairs in the review queue."""
    return Hint("review list", params=(("kind", "leakage-pair"), ("dataset", dataset)))


def list_flags(project: Project, dataset: str, *, everything: bool = False) -> list[Flag]:
    """Flags of ``dataset``: unresolved ones (open, decided), or all with ``everything``.

    Read from `datasets/<name>/leakage.jsonl`, highest Jaccard first.

    Raises:
        InputErrors: The review file is bad.
    """
    name = dataset_name(dataset)
    records = [r for r in read_flags(project, name) if everything or r.status in UNRESOLVED]
    records.sort(key=lambda r: (-r.jaccard, r.id))
    return [Flag.of(r, name) for r in records]


def unresolved_flags(project: Project, dataset: str) -> list[Flag]:
    """Flags of ``dataset`` still open or decided but not applied: the gate fails while any remain.

    They come from the dataset's review file in git, never only from one machine's workbench.
    """
    return list_flags(project, dataset)


def decide(
    project: Project,
    dataset: str,
    flag_id: int,
    decision: Decision,
    *,
    move_id: str | None = None,
    reviewer: str | None = None,
    note: str | None = None,
    now: datetime | None = None,
) -> Flag:
    """Record a review decision on one flag (applied later by :func:`resolve`).

    Raises:
        UsageError: Unknown flag, a flag already resolved, an unknown decision, or a move that
            names no row of the pair or a row already in dev.
    """
    if decision not in get_args(Decision):
        raise UsageError(f"decision: must be one of move, keep, template. Got '{decision}'.")
    name = dataset_name(dataset)
    with dataset_lock(project, name):
        records = read_flags(project, name)
        index = next((i for i, r in enumerate(records) if r.id == flag_id), None)
        if index is None:
            raise UsageError(f"flag {flag_id}: no such flag in dataset '{name}'.").suggest(
                _list_pairs(name)
            )
        row = records[index]
        if row.status not in UNRESOLVED:
            raise UsageError(f"flag {flag_id}: already {row.status}; nothing to decide.")
        if decision == "move":
            splits = {row.left_id: row.left_split, row.right_id: row.right_split}
            if move_id not in splits:
                raise UsageError(
                    f"flag {flag_id}: `move` must name one row of the pair "
                    f"({row.left_id} or {row.right_id}). Got '{move_id}'.",
                    mentions=("move",),
                )
            if splits[move_id] == "dev":
                raise UsageError(
                    f"flag {flag_id}: {move_id} is already in dev; move the other row."
                )
        elif move_id is not None:
            raise UsageError(f"flag {flag_id}: only a move names a row. Got '{move_id}'.")
        records[index] = updated(
            row,
            decision=decision,
            move_id=move_id,
            reviewer=reviewer,
            note=note,
            decided_at=now or datetime.now(UTC),
            status="decided",
        )
        write_flags(project, name, records)
        return Flag.of(records[index], name)


@dataclass(frozen=True)
class ResolveReport:
    """What :func:`resolve` applied."""

    dataset: str
    version: VersionRecord | None
    """The new release, or ``None`` when no row had to move."""
    moved: list[str]
    """Ids of rows moved to dev."""
    kept: int
    """Pairs kept as they are."""
    templates: int
    """Pairs marked template-like (suppressed until a row changes)."""
    superseded: int
    """Other unresolved flags whose pair no longer crosses splits after the moves."""


def _changes(moved: list[str], moved_from: dict[str, str], kept: int, templates: int) -> list[str]:
    lines = []
    if moved:
        by_split: dict[str, list[str]] = {}
        for case_id in moved:
            by_split.setdefault(moved_from[case_id], []).append(case_id)
        for split, ids in sorted(by_split.items()):
            lines.append(
                f"leakage: moved {len(ids)} row{'s' if len(ids) != 1 else ''} from {split} to dev "
                f"(near-duplicates across splits): {', '.join(sorted(ids))}"
            )
    if kept:
        lines.append(
            f"leakage: kept {kept} near-duplicate pair{'s' if kept != 1 else ''} as they are"
        )
    if templates:
        lines.append(
            f"leakage: marked {templates} pair{'s' if templates != 1 else ''} template-like"
        )
    return lines


@dataclass(frozen=True)
class MovePlan:
    """What the decided flags do to a dataset's rows, before anything is written."""

    cases: dict[str, Case]
    """Every row by id, moved rows already in dev."""
    moved: tuple[str, ...]
    """Ids of rows moved to dev, sorted."""
    kept: int
    """Pairs kept as they are."""
    templates: int
    """Pairs marked template-like."""
    changes: tuple[str, ...]
    """Changelog lines (none when no row moves)."""


def plan_moves(records: Sequence[LeakageFlagRecord], cases: Iterable[Case]) -> MovePlan:
    """Apply the decided flags of ``records`` to ``cases`` in memory (nothing is written).

    The one place decided moves become rows in dev: :func:`resolve` releases the result, and the
    review queue's apply folds it into one version with the other decided work.
    """
    by_id = {c.id: c for c in cases}
    decided = [r for r in records if r.status == "decided"]
    moved_from: dict[str, str] = {}
    for row in decided:
        if row.decision == "move" and row.move_id is not None:
            case = by_id.get(row.move_id)
            if case is not None and case.split != "dev":
                moved_from.setdefault(case.id, case.split)
                by_id[case.id] = case.model_copy(update={"split": "dev"})
    kept = sum(r.decision == "keep" for r in decided)
    templates = sum(r.decision == "template" for r in decided)
    moved = sorted(moved_from)
    changes = _changes(moved, moved_from, kept, templates) if moved else []
    return MovePlan(by_id, tuple(moved), kept, templates, tuple(changes))


def settle_flags(
    project: Project,
    name: str,
    records: Sequence[LeakageFlagRecord],
    cases: Mapping[str, Case],
    version: int | None,
) -> int:
    """Mark decided flags resolved at ``version``; write the review file.

    An open flag whose pair no longer crosses splits in ``cases`` is marked gone. Returns how
    many open flags went that way.
    """
    out = list(records)
    superseded = 0
    for i, row in enumerate(out):
        if row.status == "decided":
            out[i] = updated(row, status="resolved", resolved_version=version)
        elif row.status == "open":
            left, right = cases.get(row.left_id), cases.get(row.right_id)
            if left is None or right is None or left.split == right.split:
                out[i] = updated(row, status="gone")
                superseded += 1
    write_flags(project, name, out)
    return superseded


def resolve(
    project: Project, dataset: str, *, message: str | None = None, now: datetime | None = None
) -> ResolveReport:
    """Apply every decided flag: moves become a new dataset version with a changelog line.

    A dataset never released before gets its first release this way (the changelog says so).

    Raises:
        UsageError: The working tree differs from the latest release (release it first, so the
            new version holds only the review's moves), or nothing is decided.
    """
    name = dataset_name(dataset)
    with dataset_lock(project, name):
        ds = load_dataset(project, name)
        released = read_versions(ds.path, f"{project.relative(ds.path)}/versions.jsonl")
        if ds.version is None and released:
            raise UsageError(
                f"{project.relative(ds.path)}: the working tree holds unreleased changes; "
                "release them first, then resolve."
            )
        now = now or datetime.now(UTC)
        records = read_flags(project, name)
        if not any(r.status == "decided" for r in records):
            raise UsageError(f"{name}: no decided flags to resolve.").suggest(_list_pairs(name))
        plan = plan_moves(records, ds.cases)
        by_id = dict(plan.cases)
        record = None
        if plan.moved:
            record = release(
                project,
                name,
                list(by_id.values()),
                message
                or f"leakage review: {len(plan.moved)} row{'s' if len(plan.moved) != 1 else ''} "
                "moved to dev",
                changes=([] if released else [f"first release: {len(by_id)} cases"])
                + list(plan.changes),
                now=now,
            )
        version = record.number if record else (ds.version.number if ds.version else None)
        superseded = settle_flags(project, name, records, by_id, version)
        moved, kept, templates = list(plan.moved), plan.kept, plan.templates
        return ResolveReport(name, record, moved, kept, templates, superseded)
