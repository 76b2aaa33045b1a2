"""Scanning a dataset for near-duplicates across splits, recorded as review flags.

Entry point: :func:`scan_dataset` (`casework leakage scan`): found pairs become or refresh flags
in `datasets/<name>/leakage.jsonl`; a scan at the configured threshold may supersede flags it no
longer finds, a scan at another threshold never does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from casework.atomic import PROJECT_TMP
from casework.dataset import load_dataset
from casework.dataset.lock import dataset_lock
from casework.leakage.flagfile import flag_file, read_flags, write_flags
from casework.leakage.flags import (
    SUPPRESSING,
    UNRESOLVED,
    Flag,
    situation_hash,
    updated,
)
from casework.leakage.scan import Engine, Method, ScanResult, SplitPair, find_split_pairs
from casework.leakage.text import compared_text
from casework.project import Project
from casework.schema import Case, LeakageFlagRecord
from casework.shingling import jaccard, shingles

__all__ = ["ScanReport", "scan_dataset"]


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


def _seen(record: LeakageFlagRecord, pair: SplitPair, hashes: tuple[str, str]) -> LeakageFlagRecord:
    return updated(
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
        shingles(compared_text(left.situation), k), shingles(compared_text(right.situation), k)
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
        memory_mb=config.leakage.memory_mb,
        scratch=project.root / PROJECT_TMP / "leakage",
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
                if record.status == "resolved" and record.decision in SUPPRESSING and unchanged:
                    records[key] = _seen(record, pair, pair_hashes)
                    suppressed.append(Flag.of(records[key], name))
                    continue
                if record.status in ("resolved", "gone") or (
                    record.status == "decided" and not unchanged
                ):
                    record = updated(record, **_REOPENED)
                    reopened += 1
                record = _seen(record, pair, pair_hashes)
            records[key] = record
            flags.append(Flag.of(record, name))
        for key, record in records.items():
            if key in found or record.status not in UNRESOLVED:
                continue
            if not at_configured and _still_close(record, by_id, hashes, project):
                held.append(Flag.of(record, name))
                continue
            records[key] = updated(record, status="gone")
            gone += 1
        if records or flag_file(project, name).exists():
            write_flags(project, name, records.values())
    flags.sort(key=lambda f: (-f.jaccard, f.left_id, f.right_id))
    held.sort(key=lambda f: (-f.jaccard, f.left_id, f.right_id))
    return ScanReport(name, result, flags, suppressed, new, reopened, gone, configured, held)
