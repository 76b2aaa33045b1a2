"""Flags, never deletions: scan results become review items; decisions apply as a new version.

The review state lives in `datasets/<name>/leakage.jsonl` (:mod:`casework.leakage.flagfile`), in
git beside the rows, so the gate sees open flags on any clone. Entry points: :func:`scan_dataset`
(scan and record flags), :func:`list_flags`, :func:`decide`, :func:`resolve`, and
:func:`unresolved_flags` (what `casework gate` checks).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import get_args

from casework.dataset import dataset_lock, load_dataset, parse_ref, read_versions, release
from casework.errors import UsageError
from casework.leakage.flagfile import flag_file, read_flags, write_flags
from casework.leakage.scan import Engine, Method, ScanResult, SplitPair, find_split_pairs
from casework.project import Project
from casework.schema import Case, LeakageDecision, LeakageFlagRecord, VersionRecord
from casework.shingling import jaccard, shingles

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

Decision = LeakageDecision
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
    def of(cls, record: LeakageFlagRecord, dataset: str) -> Flag:
        """View of one line of the review file."""
        return cls(
            id=record.id,
            dataset=dataset,
            left_id=record.left_id,
            right_id=record.right_id,
            left_split=record.left_split,
            right_split=record.right_split,
            jaccard=record.jaccard,
            shared_count=record.shared_count,
            shared=tuple(record.shared),
            status=record.status,
            decision=record.decision,
            move_id=record.move_id,
            reviewer=record.reviewer,
            note=record.note,
            resolved_version=record.resolved_version,
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
    """Unresolved flags whose pair this scan no longer finds (at the configured threshold) or
    whose rows changed so that the pair no longer reaches it."""
    configured_threshold: float = 0.0
    """`thresholds.leakage_jaccard`: only a scan at it (or a change to the rows) supersedes flags."""
    held: list[Flag] = field(default_factory=list)
    """Unresolved flags this scan did not find that stay unresolved, because it ran at another
    threshold than the configured one and their rows did not change."""

    @property
    def unresolved(self) -> list[Flag]:
        """Every flag still open or decided after the scan: the ones found and the ones held."""
        return sorted([*self.flags, *self.held], key=lambda f: (-f.jaccard, f.left_id, f.right_id))


def _dataset_name(ref: str) -> str:
    return parse_ref(ref)[0]


def _updated(record: LeakageFlagRecord, **changes: object) -> LeakageFlagRecord:
    """``record`` with ``changes``, validated again (the record's own rules hold after every step)."""
    return LeakageFlagRecord.model_validate({**dict(record), **changes})


def _seen(record: LeakageFlagRecord, pair: SplitPair, hashes: tuple[str, str]) -> LeakageFlagRecord:
    return _updated(
        record,
        left_split=pair.left_split,
        right_split=pair.right_split,
        left_hash=hashes[0],
        right_hash=hashes[1],
        jaccard=pair.jaccard,
        shared_count=pair.shared_count,
        shared=list(pair.shared),
    )


_REOPENED: dict[str, object] = {
    "status": "open",
    "decision": None,
    "move_id": None,
    "reviewer": None,
    "note": None,
    "decided_at": None,
    "resolved_version": None,
}


def _still_close(
    record: LeakageFlagRecord, by_id: dict[str, Case], hashes: dict[str, str], project: Project
) -> bool:
    """Whether a flag that a scan at another threshold did not find stays unresolved.

    It stays while both rows are still in different splits and either unchanged or still at the
    configured Jaccard.
    """
    left, right = by_id.get(record.left_id), by_id.get(record.right_id)
    if left is None or right is None or left.split == right.split:
        return False
    if (hashes[left.id], hashes[right.id]) == (record.left_hash, record.right_hash):
        return True
    k = project.config.leakage.shingle_k
    similar = jaccard(
        shingles(left.situation.user_text(), k), shingles(right.situation.user_text(), k)
    )
    return similar >= project.config.thresholds.leakage_jaccard


def scan_dataset(
    project: Project,
    dataset: str,
    *,
    threshold: float | None = None,
    method: Method = "auto",
    engine: Engine = "local",
    now: datetime | None = None,
) -> ScanReport:
    """Scan ``dataset`` across splits and record every pair found in its review file.

    A pair kept or marked template-like earlier stays suppressed while both rows' situations are
    unchanged; a changed row reopens it. Unresolved flags a scan at the configured threshold
    (``thresholds.leakage_jaccard``) no longer finds become ``gone``; a scan at another threshold
    supersedes only flags whose rows changed (a row left, the rows share a split now, or their
    Jaccard fell below the configured threshold), and holds the others unresolved.

    Args:
        project: The project.
        dataset: Dataset name (or reference) to scan.
        threshold: Jaccard threshold (default: the configured one).
        method: ``exact``, ``lsh`` or ``auto``.
        engine: ``local`` or ``ray``.
        now: Clock for new flags' ``first_seen``.

    Raises:
        UsageError: The threshold is outside (0, 1].
        InputErrors: The review file is bad.
    """
    ds = load_dataset(project, dataset)
    config = project.config
    configured = config.thresholds.leakage_jaccard
    used = threshold if threshold is not None else configured
    result = find_split_pairs(
        ds.cases,
        used,
        k=config.leakage.shingle_k,
        method=method,
        exact_below=config.leakage.exact_below,
        num_perm=config.leakage.num_perm,
        engine=engine,
    )
    at_configured = used == configured
    by_id = {c.id: c for c in ds.cases}
    hashes = {c.id: situation_hash(c) for c in ds.cases}
    now = now or datetime.now(UTC)
    name = ds.name
    new = reopened = gone = 0
    flags: list[Flag] = []
    suppressed: list[Flag] = []
    held: list[Flag] = []
    with dataset_lock(project, name):
        records = {(r.left_id, r.right_id): r for r in read_flags(project, name)}
        next_id = max((r.id for r in records.values()), default=0) + 1
        found = set()
        for pair in result.pairs:
            key = (pair.left_id, pair.right_id)
            found.add(key)
            pair_hashes = (hashes[pair.left_id], hashes[pair.right_id])
            record = records.get(key)
            if record is None:
                record = LeakageFlagRecord(
                    id=next_id,
                    left_id=key[0],
                    right_id=key[1],
                    left_split=pair.left_split,
                    right_split=pair.right_split,
                    left_hash=pair_hashes[0],
                    right_hash=pair_hashes[1],
                    jaccard=pair.jaccard,
                    shared_count=pair.shared_count,
                    shared=list(pair.shared),
                    status="open",
                    first_seen=now,
                )
                next_id += 1
                new += 1
            else:
                unchanged = (record.left_hash, record.right_hash) == pair_hashes
                if record.status == "resolved" and record.decision in _SUPPRESSING and unchanged:
                    records[key] = _seen(record, pair, pair_hashes)
                    suppressed.append(Flag.of(records[key], name))
                    continue
                if record.status in ("resolved", "gone") or (
                    record.status == "decided" and not unchanged
                ):
                    record = _updated(record, **_REOPENED)
                    reopened += 1
                record = _seen(record, pair, pair_hashes)
            records[key] = record
            flags.append(Flag.of(record, name))
        for key, record in records.items():
            if key in found or record.status not in _UNRESOLVED:
                continue
            if not at_configured and _still_close(record, by_id, hashes, project):
                held.append(Flag.of(record, name))
                continue
            records[key] = _updated(record, status="gone")
            gone += 1
        if records or flag_file(project, name).exists():
            write_flags(project, name, records.values())
    flags.sort(key=lambda f: (-f.jaccard, f.left_id, f.right_id))
    held.sort(key=lambda f: (-f.jaccard, f.left_id, f.right_id))
    return ScanReport(name, result, flags, suppressed, new, reopened, gone, configured, held)


def list_flags(project: Project, dataset: str, *, everything: bool = False) -> list[Flag]:
    """Flags of ``dataset``: unresolved ones (open, decided), or all with ``everything``.

    Read from `datasets/<name>/leakage.jsonl`, highest Jaccard first.

    Raises:
        InputErrors: The review file is bad.
    """
    name = _dataset_name(dataset)
    records = [r for r in read_flags(project, name) if everything or r.status in _UNRESOLVED]
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
    name = _dataset_name(dataset)
    with dataset_lock(project, name):
        records = read_flags(project, name)
        index = next((i for i, r in enumerate(records) if r.id == flag_id), None)
        if index is None:
            raise UsageError(
                f"flag {flag_id}: no such flag in dataset '{name}' (see `casework leakage review {name}`)."
            )
        row = records[index]
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
        records[index] = _updated(
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
        records = read_flags(project, name)
        decided = [r for r in records if r.status == "decided"]
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
        superseded = 0
        for i, row in enumerate(records):
            if row.status == "decided":
                records[i] = _updated(row, status="resolved", resolved_version=version)
            elif row.status == "open":
                left, right = by_id.get(row.left_id), by_id.get(row.right_id)
                if left is None or right is None or left.split == right.split:
                    records[i] = _updated(row, status="gone")
                    superseded += 1
        write_flags(project, name, records)
        return ResolveReport(name, record, moved, kept, templates, superseded)
