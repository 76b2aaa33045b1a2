from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from casework.labelling.model import Assignment
from casework.labelling.rounds import decide_round, differing_fields, final_label, latest_round
from casework.schema import Label, LabelRecord

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def rec(labeller: str, role: str = "first", **kw: Any) -> LabelRecord:
    data: dict[str, Any] = {
        "case_id": "c-1",
        "labeller": labeller,
        "role": role,
        "outcome": "resolve",
        "required_tools": ["get_order"],
        "guideline_version": "refunds-g7",
        "labelled_at": T0
        + timedelta(minutes=len(labeller) + {"first": 0, "second": 1, "adjudicator": 2}[role]),
    }
    data.update(kw)
    return LabelRecord.model_validate(data)


def held(
    labeller: str, role: str = "first", done: bool = True, version: str = "refunds-g7"
) -> Assignment:
    return Assignment("c-1", labeller, role, None, version, T0, done)  # type: ignore[arg-type]


def test_differing_fields_ignores_order_and_free_text_facts() -> None:
    a = rec("a", required_tools=["get_order", "issue_refund"], answer_facts=["Refund issued."])
    b = rec("b", "second", required_tools=["issue_refund", "get_order"], answer_facts=["x"])
    assert differing_fields([a, b]) == ()
    c = rec("c", "second", outcome="escalate", forbidden_tools=["issue_refund"])
    assert differing_fields([a, c]) == ("outcome", "required_tools", "forbidden_tools")


def test_states() -> None:
    a, b = rec("a"), rec("b", "second")
    assert (
        decide_round("c-1", "refunds-g7", [held("a"), held("b", "second", False)], [a]).state
        == "labelling"
    )
    agreed = decide_round("c-1", "refunds-g7", [], [b, a])
    assert (agreed.state, agreed.labellers, agreed.decided_by) == ("final", ("a", "b"), a)
    split = [a, rec("b", "second", outcome="refuse")]
    assert decide_round("c-1", "refunds-g7", [], split).state == "contested"
    assert (
        decide_round("c-1", "refunds-g7", [held("z", "adjudicator", False)], split).state
        == "adjudicating"
    )
    judge = rec("z", "adjudicator", outcome="refuse", overlap_reason="disagreement")
    decided = decide_round("c-1", "refunds-g7", [], [*split, judge])
    assert (decided.state, decided.adjudicated, decided.labellers) == (
        "final",
        True,
        ("a", "b", "z"),
    )


def test_latest_round_is_the_newest_guideline_version() -> None:
    old = rec("a", guideline_version="refunds-g9")
    new = rec("a", guideline_version="refunds-g10", outcome="escalate")
    found = latest_round("c-1", [held("b", version="refunds-g10", done=False)], [old, new])
    assert found is not None
    assert (found.guideline_version, found.state) == ("refunds-g10", "labelling")
    assert latest_round("c-1", [], []) is None


def test_final_label_keeps_argument_matchers_of_tools_still_named() -> None:
    previous = Label.model_validate(
        {
            "outcome": "resolve",
            "required_tools": [
                {"name": "issue_refund", "arguments": {"amount": {"value": 12}}},
                "get_order",
            ],
            "guideline_version": "refunds-g6",
        }
    )
    found = decide_round(
        "c-1",
        "refunds-g7",
        [],
        [
            rec("a", required_tools=["issue_refund"], answer_facts=["refund of 12"]),
            rec("b", "second", required_tools=["issue_refund"]),
        ],
    )
    label = final_label(found, previous)
    assert label.model_dump(mode="json") == {
        "outcome": "resolve",
        "required_tools": [
            {"name": "issue_refund", "arguments": {"amount": {"match": "exact", "value": 12}}}
        ],
        "forbidden_tools": [],
        "answer_facts": ["refund of 12"],
        "guideline_version": "refunds-g7",
        "labellers": ["a", "b"],
        "adjudicated": False,
    }
    with pytest.raises(ValueError, match="contested, not final"):
        final_label(
            decide_round("c-1", "refunds-g7", [], [rec("a"), rec("b", "second", outcome="refuse")]),
            None,
        )
