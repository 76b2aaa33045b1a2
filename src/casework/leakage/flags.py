"""A leakage review flag: the view commands show, and the helpers every step of the review uses.

Entry points: :class:`Flag`, :func:`situation_hash`; the flow is in :mod:`.dataset_scan` (scan
and record flags) and :mod:`.review` (list, decide, resolve).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from casework.dataset import parse_ref
from casework.schema import Case, LeakageDecision, LeakageFlagRecord

__all__ = [
    "SUPPRESSING",
    "UNRESOLVED",
    "Decision",
    "Flag",
    "dataset_name",
    "situation_hash",
    "updated",
]

Decision = LeakageDecision
"""Review decisions: move one row to dev, keep both as they are, or mark the pair template-like."""

#: Statuses of a flag still waiting for (or holding) a decision that is not applied yet.
UNRESOLVED = ("open", "decided")
#: Decisions that keep a pair as it is: a later scan finding it unchanged stays quiet.
SUPPRESSING = ("keep", "template")


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


def dataset_name(ref: str) -> str:
    """The dataset a ``name[@version]`` reference names."""
    return parse_ref(ref)[0]


def updated(record: LeakageFlagRecord, **changes: object) -> LeakageFlagRecord:
    """``record`` with ``changes``, validated again (the record's own rules hold after every step)."""
    return LeakageFlagRecord.model_validate({**dict(record), **changes})
