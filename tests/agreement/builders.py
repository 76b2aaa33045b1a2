"""A dataset built on the design notes' worked example, for the report and CLI tests.

Slice `refunds` under guideline `refunds-g7`: 60 calibration rows with the outcome table
[[4, 0, 0], [0, 29, 7], [0, 8, 12]] (resolve, clarify, escalate): p_o 0.75, p_e 0.48,
kappa 0.519; 11 of the 15 disagreements are on orders older than 30 days. The 20 old-order rows
are relabelled under `refunds-g8` (escalate on even rows, clarify on odd) with one disagreement. Slice `status` (guideline `status-g2`)
has 12 rows everyone labelled `resolve`: kappa is undefined there.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from casework.schema import Case, LabelRecord

T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)

TOOLS_FOR: dict[str, tuple[list[str], list[str]]] = {
    "resolve": (["get_order", "issue_refund"], []),
    "clarify": (["get_order"], ["issue_refund"]),
    "escalate": (["get_order", "escalate_to_human"], ["issue_refund"]),
}

# (first, second) outcome per refunds row, in row order: the 15 disagreements come first.
REFUNDS_PAIRS: list[tuple[str, str]] = (
    [("clarify", "escalate")] * 7
    + [("escalate", "clarify")] * 8
    + [("resolve", "resolve")] * 4
    + [("clarify", "clarify")] * 29
    + [("escalate", "escalate")] * 12
)
OLD_ROWS = set(range(11)) | set(range(15, 24))  # 11 disagreeing + 9 agreeing rows
TOOL_ONLY_ROWS = {30, 31, 32}  # the second labeller forgot get_order on these


def refunds_id(i: int) -> str:
    return f"r-{i:03d}"


def age_days(i: int) -> int:
    if i in OLD_ROWS:
        return 31 + (i * 7) % 40
    # Half the young rows at exactly 30 days, so 30 is the median and a bin edge.
    return 30 if i % 2 == 0 else 1 + i % 20


def make_case(case_id: str, slice_name: str, state: dict[str, Any], outcome: str) -> Case:
    required, forbidden = TOOLS_FOR[outcome]
    return Case.model_validate(
        {
            "id": case_id,
            "slice": slice_name,
            "split": "dev",
            "source": "mined",
            "satisfiable": True,
            "situation": {
                "goal": "sort out an order",
                "turns": [{"role": "user", "content": f"About my order ({case_id})."}],
                "state": state,
            },
            "label": {
                "outcome": outcome,
                "required_tools": required,
                "forbidden_tools": forbidden,
                "guideline_version": f"{slice_name}-g7" if slice_name == "refunds" else "status-g2",
            },
        }
    )


def make_label(
    case_id: str,
    labeller: str,
    role: str,
    outcome: str,
    guideline: str,
    *,
    reason: str | None = None,
    minutes: int = 0,
    drop_tool: str | None = None,
) -> LabelRecord:
    required, forbidden = TOOLS_FOR[outcome]
    return LabelRecord.model_validate(
        {
            "case_id": case_id,
            "labeller": labeller,
            "role": role,
            "overlap_reason": reason,
            "outcome": outcome,
            "required_tools": [t for t in required if t != drop_tool],
            "forbidden_tools": forbidden,
            "guideline_version": guideline,
            "labelled_at": (T0 + timedelta(minutes=minutes)).isoformat(),
        }
    )


def seed_dataset() -> tuple[list[Case], list[LabelRecord]]:
    """Cases and raw labels of the worked example (see the module docstring)."""
    cases: list[Case] = []
    labels: list[LabelRecord] = []
    for i, (first, second) in enumerate(REFUNDS_PAIRS):
        cid = refunds_id(i)
        state = {"orders": {f"ord_{i}": {"age_days": age_days(i), "status": "delivered"}}}
        cases.append(make_case(cid, "refunds", state, first))
        labels.append(make_label(cid, "lab-a", "first", first, "refunds-g7", minutes=i))
        labels.append(
            make_label(
                cid,
                "lab-b",
                "second",
                second,
                "refunds-g7",
                reason="calibration",
                minutes=100 + i,
                drop_tool="get_order" if i in TOOL_ONLY_ROWS else None,
            )
        )
        if first != second:
            labels.append(
                make_label(
                    cid,
                    "lab-c",
                    "adjudicator",
                    "escalate",
                    "refunds-g7",
                    reason="disagreement",
                    minutes=300 + i,
                )
            )
        if i in OLD_ROWS:
            g8_first = "escalate" if i % 2 == 0 else "clarify"
            g8_second = g8_first if i != 15 else "escalate"
            labels.append(
                make_label(cid, "lab-d", "first", g8_first, "refunds-g8", minutes=500 + i)
            )
            labels.append(
                make_label(
                    cid,
                    "lab-e",
                    "second",
                    g8_second,
                    "refunds-g8",
                    reason="calibration",
                    minutes=600 + i,
                )
            )
    # Rows a third labeller also rated under g7 (multi-rater statistics).
    for i in (40, 41, 42):
        labels.append(
            make_label(
                refunds_id(i),
                "lab-f",
                "second",
                "clarify",
                "refunds-g7",
                reason="audit",
                minutes=700 + i,
            )
        )
    # Singly labelled rows, and a row doubled only because of a disagreement.
    for i in range(60, 64):
        cid = refunds_id(i)
        cases.append(make_case(cid, "refunds", {"orders": {}}, "resolve"))
        labels.append(make_label(cid, "lab-a", "first", "resolve", "refunds-g7", minutes=800 + i))
    labels.append(
        make_label(
            refunds_id(63),
            "lab-b",
            "second",
            "clarify",
            "refunds-g7",
            reason="disagreement",
            minutes=900,
        )
    )
    for j in range(12):
        cid = f"s-{j:02d}"
        cases.append(make_case(cid, "status", {"orders": {}}, "resolve"))
        labels.append(make_label(cid, "lab-a", "first", "resolve", "status-g2", minutes=1000 + j))
        labels.append(
            make_label(
                cid,
                "lab-b",
                "second",
                "resolve",
                "status-g2",
                reason="calibration",
                minutes=1100 + j,
            )
        )
    return cases, labels
