"""Flags, never deletions: scan results become review items; decisions apply as a new version.

Entry points: :func:`scan_dataset` (scan and record flags), :func:`list_flags`, :func:`decide`,
:func:`resolve`, and :func:`unresolved_flags` (what `casework gate` checks).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, get_args

from sqlalchemy import select

from casework.dataset import dataset_lock, load_dataset, parse_ref, read_versions, release
from casework.errors import UsageError
from casework.leakage.scan import Engine, Method, ScanResult, SplitPair, find_split_pairs
from casework.project import Project
from casework.schema import Case, VersionRecord
from casework.workbench import LeakageFlag, open_workbench

__all__ = [
    "Decision",
    "Flag",
    "ResolveReport",
    "ScanReport",
    "decide",
    "list_flags",
    "resolve",
    "scan_dataset",
    "situation_hash",
    "unresolved_flags",
]

Decision = Literal["move", "keep", "template"]
"""Review decisions: move one row to dev, keep both as they are, or mark the pair template-like."""

_UNRESOLVED = ("open", "decided")
_SUPPRESSING = ("keep", "template")


def situation_hash(case: Case) -> str:
    """sha256 of a row's situation (what similarity is measured on) in canonical JSON."""
    body = json.dumps(case.situation.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Flag:
    """A review item: two rows in different splits that look alike."""

    id: int
    dataset: str
    left_id: str
    right_id: str
    left_split: str
    right_split: str
    jaccard: float
    shared_count: int
    shared: tuple[str, ...]
    status: str
    decision: str | None
    move_id: str | None
    reviewer: str | None
    note: str | None
    resolved_version: int | None

    @classmethod
    def of(cls, row: LeakageFlag) -> Flag:
        """View of a workbench row."""
        return cls(
            id=row.id,
            dataset=row.dataset,
            left_id=row.left_id,
            right_id=row.right_id,
            left_split=row.left_split,
            right_split=row.right_split,
            jaccard=row.jaccard,
            shared_count=row.shared_count,
            shared=tuple(json.loads(row.shared)),
            status=row.status,
            decision=row.decision,
            move_id=row.move_id,
            reviewer=row.reviewer,
            note=row.note,
            resolved_version=row.resolved_version,
        )


@dataclass(frozen=True)
class ScanReport:
    """A scan's result and what it did to the review queue."""

    dataset: str
    result: ScanResult
    flags: list[Flag]
    """Unresolved flags (open or decided) for the pairs this scan found, highest Jaccard first."""
    suppressed: list[Flag] = field(default_factory=list)
    """Pairs found again but kept or marked template-like earlier, with both rows unchanged."""
    new: int = 0
    """Flags created by this scan."""
    reopened: int = 0
    """Flags reopened because a row changed or the pair came back."""
    gone: int = 0
    """Unresolved flags whose pair this scan no longer finds."""


def _dataset_name(ref: str) -> str:
    return parse_ref(ref)[0]


def _apply_pair(row: LeakageFlag, pair: SplitPair, hashes: tuple[str, str], now: datetime) -> None:
    row.left_split, row.right_split = pair.left_split, pair.right_split
    row.left_hash, row.right_hash = hashes
    row.jaccard = pair.jaccard
    row.shared_count = pair.shared_count
    row.shared = json.dumps(list(pair.shared), ensure_ascii=False)
    row.last_seen = now


def scan_dataset(
    project: Project,
    dataset: str,
    *,
    threshold: float | None = None,
    method: Method = "auto",
    engine: Engine = "local",
    now: datetime | None = None,
) -> ScanReport:
    """Scan ``dataset`` across splits and record every pair found as a flag in the workbench.

    A pair kept or marked template-like earlier stays suppressed while both rows' situations are
    unchanged; a changed row reopens it. Unresolved flags the scan no longer finds become ``gone``.
    """
    ds = load_dataset(project, dataset)
    config = project.config
    result = find_split_pairs(
        ds.cases,
        threshold if threshold is not None else config.thresholds.leakage_jaccard,
        k=config.leakage.shingle_k,
        method=method,
        exact_below=config.leakage.exact_below,
        num_perm=config.leakage.num_perm,
        engine=engine,
    )
    hashes = {c.id: situation_hash(c) for c in ds.cases}
    now = now or datetime.now(UTC)
    name = ds.name
    new = reopened = gone = 0
    flags: list[Flag] = []
    suppressed: list[Flag] = []
    with open_workbench(project) as workbench, workbench.session() as session:
        existing = {
            (r.left_id, r.right_id): r
            for r in session.scalars(select(LeakageFlag).where(LeakageFlag.dataset == name))
        }
        found = set()
        for pair in result.pairs:
            key = (pair.left_id, pair.right_id)
            found.add(key)
            pair_hashes = (hashes[pair.left_id], hashes[pair.right_id])
            row = existing.get(key)
            if row is None:
                row = LeakageFlag(
                    dataset=name, left_id=key[0], right_id=key[1], status="open", first_seen=now
                )
                _apply_pair(row, pair, pair_hashes, now)
                session.add(row)
                new += 1
            else:
                unchanged = (row.left_hash, row.right_hash) == pair_hashes
                if row.status == "resolved" and row.decision in _SUPPRESSING and unchanged:
                    _apply_pair(row, pair, pair_hashes, now)
                    session.flush()
                    suppressed.append(Flag.of(row))
                    continue
                if row.status in ("resolved", "gone") or (
                    row.status == "decided" and not unchanged
                ):
                    row.status, row.decision, row.move_id = "open", None, None
                    row.reviewer, row.note, row.decided_at, row.resolved_version = (
                        None,
                        None,
                        None,
                        None,
                    )
                    reopened += 1
                _apply_pair(row, pair, pair_hashes, now)
            session.flush()
            flags.append(Flag.of(row))
        for key, row in existing.items():
            if key not in found and row.status in _UNRESOLVED:
                row.status = "gone"
                gone += 1
    flags.sort(key=lambda f: (-f.jaccard, f.left_id, f.right_id))
    return ScanReport(name, result, flags, suppressed, new, reopened, gone)


def list_flags(project: Project, dataset: str, *, everything: bool = False) -> list[Flag]:
    """Flags of ``dataset``: unresolved ones (open, decided), or all with ``everything``."""
    with open_workbench(project) as workbench, workbench.session() as session:
        query = select(LeakageFlag).where(LeakageFlag.dataset == _dataset_name(dataset))
        if not everything:
            query = query.where(LeakageFlag.status.in_(_UNRESOLVED))
        rows = session.scalars(query.order_by(LeakageFlag.jaccard.desc(), LeakageFlag.id)).all()
        return [Flag.of(r) for r in rows]


def unresolved_flags(project: Project, dataset: str) -> list[Flag]:
    """Flags of ``dataset`` still open or decided but not applied: the gate fails while any remain."""
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
    name = _dataset_name(dataset)
    with open_workbench(project) as workbench, workbench.session() as session:
        row = session.get(LeakageFlag, flag_id)
        if row is None or row.dataset != name:
            raise UsageError(
                f"flag {flag_id}: no such flag in dataset '{name}' (see `casework leakage review {name}`)."
            )
        if row.status not in _UNRESOLVED:
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
        row.decision = decision
        row.move_id = move_id
        row.reviewer = reviewer
        row.note = note
        row.decided_at = now or datetime.now(UTC)
        row.status = "decided"
        session.flush()
        return Flag.of(row)


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


def resolve(
    project: Project, dataset: str, *, message: str | None = None, now: datetime | None = None
) -> ResolveReport:
    """Apply every decided flag: moves become a new dataset version with a changelog line.

    A dataset never released before gets its first release this way (the changelog says so).

    Raises:
        UsageError: The working tree differs from the latest release (release it first, so the
            new version holds only the review's moves), or nothing is decided.
    """
    name = _dataset_name(dataset)
    with dataset_lock(project, name):
        ds = load_dataset(project, name)
        released = read_versions(ds.path, f"{project.relative(ds.path)}/versions.jsonl")
        if ds.version is None and released:
            raise UsageError(
                f"{project.relative(ds.path)}: the working tree holds unreleased changes; "
                "release them first, then resolve."
            )
        by_id = {c.id: c for c in ds.cases}
        now = now or datetime.now(UTC)
        with open_workbench(project) as workbench, workbench.session() as session:
            decided = session.scalars(
                select(LeakageFlag)
                .where(LeakageFlag.dataset == name, LeakageFlag.status == "decided")
                .order_by(LeakageFlag.id)
            ).all()
            if not decided:
                raise UsageError(
                    f"{name}: no decided flags to resolve (see `casework leakage review {name}`)."
                )
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
            record = None
            if moved:
                record = release(
                    project,
                    name,
                    list(by_id.values()),
                    message
                    or f"leakage review: {len(moved)} row{'s' if len(moved) != 1 else ''} moved to dev",
                    changes=([] if released else [f"first release: {len(by_id)} cases"])
                    + _changes(moved, moved_from, kept, templates),
                    now=now,
                )
            version = record.number if record else (ds.version.number if ds.version else None)
            for row in decided:
                row.status = "resolved"
                row.resolved_version = version
            superseded = 0
            for row in session.scalars(
                select(LeakageFlag).where(LeakageFlag.dataset == name, LeakageFlag.status == "open")
            ):
                left, right = by_id.get(row.left_id), by_id.get(row.right_id)
                if left is None or right is None or left.split == right.split:
                    row.status = "gone"
                    superseded += 1
        return ResolveReport(name, record, moved, kept, templates, superseded)
