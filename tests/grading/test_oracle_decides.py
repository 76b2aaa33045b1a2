"""The case's own oracle decides its verdict; an errored call does not satisfy a required tool."""

from __future__ import annotations

import json
from typing import Any

import pytest

from casework.dataset import read_cases
from casework.errors import InputError
from casework.grading import Judge, grade
from casework.interop.adk import ImportOptions
from casework.interop.adk._convert import cases_from_adk
from casework.interop.adk._format import parse_adk
from casework.schema import Case, Label, Trajectory, TrajectoryToolCall
from tests.grading.fakes import FakeLLM, certified

REFERENCE = "you have one bag of Standard Potting Soil in your cart"

#: An ADK eval case in the older list form: one query, one expected tool use, a reference reply.
ADK = [
    {
        "query": "tell me what is in my cart?",
        "expected_tool_use": [
            {"tool_name": "access_cart_information", "tool_input": {"customer_id": "123"}}
        ],
        "reference": REFERENCE,
    }
]


def adk_case(reference: Any = "judge") -> Case:
    """The ADK case imported with its reference reply in a judge's rubric (``--reference judge``)."""
    adk_file = parse_adk(ADK, shown="cart.test.json", file_name="cart.test.json")
    (imported,) = cases_from_adk([adk_file], ImportOptions(slice="adk", reference=reference))
    return imported.case


def cart_call(error: str | None = None) -> TrajectoryToolCall:
    return TrajectoryToolCall(
        name="access_cart_information",
        arguments={"customer_id": "123"},
        result=None if error else {"items": ["potting soil"]},
        error=error,
    )


CONTRADICTS = Trajectory(
    final_reply="Your cart is empty.", outcome="resolve", tool_calls=[cart_call()]
)


def statuses(verdict: Any) -> dict[str, str]:
    return {c.name: c.status for c in verdict.checks}


def facts_judge(present: bool, slices: dict[str, bool] | None = None) -> tuple[Judge, FakeLLM]:
    """A judge whose fact findings all come out ``present``; certified per ``slices``."""
    llm = FakeLLM(lambda _: {"facts": [{"index": 0, "present": present, "reason": "compared"}]})
    return Judge(llm, **certified("judge-1", slices or {"adk": True})), llm


def test_adk_rubric_case_without_a_judge_is_undetermined_not_passed() -> None:
    case = adk_case()
    assert case.oracle.class_ == "rubric_judge"
    v = grade(case, CONTRADICTS)
    # Before: passed on required_tools and the reported outcome; the rubric was never applied.
    assert v.passed is None
    assert v.oracle_class == "rubric_judge"
    assert statuses(v) == {"required_tools": "pass", "outcome": "pass", "rubric": "undetermined"}
    rubric = next(c for c in v.checks if c.name == "rubric")
    assert rubric.evidence == (
        "the case's oracle is rubric_judge and its rubric needs a judge; none configured"
    )


def test_withheld_judge_says_why() -> None:
    v = grade(adk_case(), CONTRADICTS, no_judge="the case is frozen")
    assert v.passed is None
    assert next(c for c in v.checks if c.name == "rubric").evidence.endswith("the case is frozen")


def test_judge_applies_the_rubric_and_a_contradiction_fails() -> None:
    judge, llm = facts_judge(present=False)
    v = grade(adk_case(), CONTRADICTS, judge=judge)
    assert v.passed is False and v.admissible is True and v.oracle_class == "rubric_judge"
    rubric = next(c for c in v.checks if c.name == "rubric")
    assert rubric.judged and rubric.findings == [False]
    assert rubric.evidence == "reply does not meet the rubric (compared)"
    # The judge read the reference reply (inside the rubric) against the agent's reply.
    assert REFERENCE in llm.prompts[0] and "Your cart is empty." in llm.prompts[0]


def test_judge_finds_the_rubric_met() -> None:
    judge, _ = facts_judge(present=True)
    agrees = CONTRADICTS.model_copy(update={"final_reply": REFERENCE})
    v = grade(adk_case(), agrees, judge=judge)
    assert v.passed is True and v.admissible is True
    assert statuses(v)["rubric"] == "pass"


def test_uncertified_judge_decides_nothing_that_gates() -> None:
    judge, _ = facts_judge(present=True, slices={"adk": False})
    agrees = CONTRADICTS.model_copy(update={"final_reply": REFERENCE})
    v = grade(adk_case(), agrees, judge=judge)
    assert v.passed is True and v.admissible is False


def test_rubric_read_through_answer_facts_is_not_asked_twice() -> None:
    data = adk_case().model_dump(mode="json", by_alias=True)
    data["label"]["answer_facts"] = ["one bag of potting soil"]
    case = Case.model_validate(data)
    judge, llm = facts_judge(present=True)
    v = grade(case, CONTRADICTS, judge=judge)
    assert "rubric" not in statuses(v) and statuses(v)["answer_facts"] == "pass"
    assert len(llm.prompts) == 1


def test_required_tool_whose_every_call_errored_fails() -> None:
    errored = CONTRADICTS.model_copy(
        update={"tool_calls": [cart_call("backend timeout"), cart_call("backend timeout")]}
    )
    judge, _ = facts_judge(present=True)
    v = grade(adk_case(), errored, judge=judge)
    assert v.passed is False
    required = next(c for c in v.checks if c.name == "required_tools")
    assert required.status == "fail"
    assert required.evidence == (
        'access_cart_information(customer_id exact "123") called 2 time(s), every call '
        "returned an error (backend timeout); an errored call counts only with allow_error"
    )


def test_in_order_check_skips_errored_calls() -> None:
    data = adk_case().model_dump(mode="json", by_alias=True)
    data["label"]["required_tools"] = ["lookup", "access_cart_information"]
    data["oracle"]["ref"] = "grader:tools_in_order"
    case = Case.model_validate(data)
    calls = [
        TrajectoryToolCall(name="lookup", error="no such customer"),
        cart_call(),
    ]
    v = grade(case, CONTRADICTS.model_copy(update={"tool_calls": calls}))
    assert statuses(v)["required_tools"] == "fail"
    assert statuses(v)["tools_in_order"] == "fail"


def test_allow_error_lets_an_errored_call_satisfy_the_label() -> None:
    data = adk_case().model_dump(mode="json", by_alias=True)
    data["label"]["required_tools"][0]["allow_error"] = True
    data["oracle"]["ref"] = "grader:tools_in_order"
    case = Case.model_validate(data)
    errored = CONTRADICTS.model_copy(update={"tool_calls": [cart_call("backend timeout")]})
    v = grade(case, errored)
    assert statuses(v)["required_tools"] == "pass"
    assert statuses(v)["tools_in_order"] == "pass"


def test_allow_error_round_trips_and_is_left_out_when_off() -> None:
    label = Label.model_validate(
        {
            "outcome": "resolve",
            "required_tools": ["a", {"name": "b", "allow_error": True}],
        }
    )
    dumped = label.model_dump(mode="json")
    assert dumped["required_tools"] == ["a", {"name": "b", "arguments": {}, "allow_error": True}]
    assert Label.model_validate(dumped) == label
    assert "allow_error" not in json.dumps(
        Label.model_validate({"outcome": "resolve", "required_tools": ["a"]}).model_dump(
            mode="json"
        )
    )


def test_allow_error_on_a_forbidden_tool_is_a_located_error(tmp_path: Any) -> None:
    data = adk_case().model_dump(mode="json", by_alias=True)
    data["label"]["forbidden_tools"] = [{"name": "delete_cart", "allow_error": True}]
    path = tmp_path / "cases.jsonl"
    path.write_text(json.dumps(data) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as info:
        read_cases(path, shown="datasets/adk/cases.jsonl")
    assert str(info.value).startswith(
        "datasets/adk/cases.jsonl:1: label: forbidden_tools: allow_error applies to "
        'required_tools only. Got {"outcome": "resolve"'
    )


def test_by_default_adks_own_response_match_fails_a_reply_contradicting_the_reference() -> None:
    case = adk_case(reference="response_match")
    assert case.oracle.class_ == "programmatic"
    verdict = grade(case, CONTRADICTS)
    assert verdict.passed is False
    same = Trajectory(final_reply=REFERENCE, outcome="resolve", tool_calls=[cart_call()])
    assert grade(case, same).passed is True
