"""The example's labelling history: who labelled what, where they disagreed, who adjudicated.

Follows the assignment policy of `casework.toml`: every row of a slice gets two blind labellers
until the slice's kappa reaches the gate (calibration; `refunds` never got there), after that a
content-independent 20% share keeps a second labeller (audit: a hash of salt and case id).
Disagreements go to a third person who labelled neither. Outcome disagreements cluster where the
guideline has a gap (`refunds`: partially shipped orders older than 30 days; `order_status`:
whether `get_order` is required next to `track_shipment`).
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from casework.schema import Label, LabelRecord, ToolRequirement

LABELLERS = ["lab-03", "lab-07", "lab-11", "lab-14", "lab-19", "lab-22", "lab-27", "lab-31"]
ADJUDICATORS = ["lab-02", "lab-05", "lab-14", "lab-22"]
GUIDELINES = {"refunds": "refunds-g7", "order_status": "order_status-g3", "account": "account-g2"}
#: refunds-g7 replaced refunds-g6 on this day; rows labelled before it carry g6.
REFUNDS_G7_SINCE = datetime.fromisoformat("2026-01-12T00:00:00+00:00")
#: Double-labelled rows a slice needs before its kappa can release it from full overlap.
CALIBRATION_ROWS = 52
AUDIT_SHARE = 0.2
AUDIT_SALT = "larkspur-2026"


def audit_draw(case_id: str) -> float:
    """Content-independent, reproducible number in [0, 1) choosing audit rows."""
    digest = hashlib.sha256(f"{AUDIT_SALT}:{case_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


@dataclass
class Row:
    """One case going through labelling."""

    case_id: str
    slice: str
    drafted_at: datetime
    truth: Label
    alt: Label
    ambiguous: bool
    get_order_optional: bool
    """True when `track_shipment` answers the question and `get_order` is not in the label."""
    labels: list[LabelRecord] = field(default_factory=list)
    final: Label | None = None


def _with_get_order(label: Label) -> Label:
    return label.model_copy(
        update={"required_tools": [ToolRequirement(name="get_order"), *label.required_tools]}
    )


def _record(
    row: Row, label: Label, who: str, role: str, reason: str | None, at: datetime, version: str
) -> LabelRecord:
    return LabelRecord.model_validate(
        {
            "case_id": row.case_id,
            "labeller": who,
            "role": role,
            "overlap_reason": reason,
            "outcome": label.outcome,
            "required_tools": [t.model_dump(mode="json") for t in label.required_tools],
            "forbidden_tools": [t.model_dump(mode="json") for t in label.forbidden_tools],
            "answer_facts": label.answer_facts,
            "guideline_version": version,
            "labelled_at": at,
        }
    )


def same_label(a: LabelRecord | Label, b: LabelRecord | Label) -> bool:
    """Whether two labels agree on outcome and tools (answer facts are free text and may differ)."""

    def key(x: LabelRecord | Label) -> tuple[str, list[object], list[object]]:
        return (
            x.outcome,
            [t.model_dump(mode="json") for t in x.required_tools],
            [t.model_dump(mode="json") for t in x.forbidden_tools],
        )

    return key(a) == key(b)


@dataclass(frozen=True)
class SlicePlan:
    """How much disagreement a slice's labelling history holds."""

    ambiguous_split: float = 0.0
    """Share of the guideline-gap rows on which the two labellers split."""
    other_disagreements: int = 0
    """Outcome disagreements elsewhere in the slice (all adjudicated)."""
    get_order_disagreements: int = 0
    """Rows where labellers split on whether `get_order` is required."""
    adjudicate_share: float = 0.4
    """Share of gap and tool disagreements already adjudicated (the rest wait in the queue)."""


PLANS = {
    "refunds": SlicePlan(ambiguous_split=0.9, other_disagreements=8),
    "order_status": SlicePlan(other_disagreements=3, get_order_disagreements=11),
    "account": SlicePlan(other_disagreements=2),
}


def label_slice(rows: list[Row], plan: SlicePlan, rng: random.Random) -> None:
    """Fill ``labels`` and ``final`` of one slice's rows (in place)."""
    rows = sorted(rows, key=lambda r: (r.drafted_at, r.case_id))
    full_overlap = rows[0].slice == "refunds"  # its kappa never reached the gate
    doubled: list[Row] = []
    reasons: dict[str, str | None] = {}
    for index, row in enumerate(rows):
        if full_overlap or index < CALIBRATION_ROWS:
            reasons[row.case_id] = "calibration"
        elif audit_draw(row.case_id) < AUDIT_SHARE:
            reasons[row.case_id] = "audit"
        else:
            reasons[row.case_id] = None
        if reasons[row.case_id]:
            doubled.append(row)

    gap = [r for r in doubled if r.ambiguous]
    split_gap = set(r.case_id for r in rng.sample(gap, round(len(gap) * plan.ambiguous_split)))
    plain = [r for r in doubled if not r.ambiguous and r.truth.outcome != r.alt.outcome]
    split_other = set(r.case_id for r in rng.sample(plain, plan.other_disagreements))
    optional = [r for r in doubled if r.get_order_optional and r.case_id not in split_other]
    split_tool = set(r.case_id for r in rng.sample(optional, plan.get_order_disagreements))

    for row in rows:
        at = row.drafted_at + timedelta(
            days=rng.randint(1, 6), hours=rng.randint(0, 8), minutes=rng.randint(0, 59)
        )
        version = GUIDELINES[row.slice]
        if row.slice == "refunds" and at < REFUNDS_G7_SINCE:
            version = "refunds-g6"
        first, second = rng.sample(LABELLERS, 2)
        reason = reasons[row.case_id]
        chosen_first = chosen_second = row.truth
        adjudicate = False
        if row.ambiguous:
            # Both readings are defensible; agreeing pairs land on either.
            if row.case_id in split_gap:
                chosen_first, chosen_second = rng.choice(
                    [(row.truth, row.alt), (row.alt, row.truth)]
                )
                adjudicate = rng.random() < plan.adjudicate_share
            else:
                chosen_first = chosen_second = rng.choice([row.truth, row.alt])
        elif row.case_id in split_other:
            chosen_first, chosen_second = rng.choice([(row.truth, row.alt), (row.alt, row.truth)])
            adjudicate = True
        elif row.case_id in split_tool:
            chosen_first, chosen_second = rng.choice(
                [(row.truth, _with_get_order(row.truth)), (_with_get_order(row.truth), row.truth)]
            )
            adjudicate = rng.random() < plan.adjudicate_share
        row.labels.append(_record(row, chosen_first, first, "first", None, at, version))
        if reason is None:
            row.final = chosen_first.model_copy(update={"labellers": [first]})
        else:
            at2 = at + timedelta(hours=rng.randint(2, 70), minutes=rng.randint(0, 59))
            row.labels.append(_record(row, chosen_second, second, "second", reason, at2, version))
            if same_label(chosen_first, chosen_second):
                row.final = chosen_first.model_copy(update={"labellers": [first, second]})
            elif adjudicate:
                judge = rng.choice([a for a in ADJUDICATORS if a not in (first, second)])
                at3 = max(at, at2) + timedelta(days=rng.randint(1, 5), hours=rng.randint(0, 8))
                row.labels.append(
                    _record(row, row.truth, judge, "adjudicator", "disagreement", at3, version)
                )
                row.final = row.truth.model_copy(
                    update={"labellers": [first, second, judge], "adjudicated": True}
                )
            else:
                # Waiting for adjudication: the case keeps the first label until someone decides.
                row.final = chosen_first.model_copy(update={"labellers": [first]})
        row.final = row.final.model_copy(update={"guideline_version": version})
