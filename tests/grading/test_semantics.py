"""Label semantics: several acceptable outcomes, deterministic facts, NL assertions, inaction."""

from __future__ import annotations

import json
import re
import string
import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from casework.dataset.jsonl import canonical_line
from casework.grading import Judge, grade
from casework.grading.grade import needed_oracle_class
from casework.grading.semantics import fact_matches, normalise_text
from casework.schema import AnswerFact, Case, Label, Trajectory, TrajectoryToolCall
from tests.grading.fakes import FakeLLM, certified
from tests.runner.builders import default_cases, escalate_case, refund_case, refuse_case


def case(data: dict[str, Any]) -> Case:
    return Case.model_validate(data)


def statuses(verdict: Any) -> dict[str, str]:
    return {c.name: c.status for c in verdict.checks}


def refuse_or_escalate(satisfiable: bool = True) -> Case:
    data = escalate_case("e-1")
    data["satisfiable"] = satisfiable
    data["label"] = {"outcome": ["refuse", "escalate"], "guideline_version": "g1"}
    return case(data)


# --- several acceptable outcomes ---------------------------------------------------------------


def test_an_outcome_list_reads_as_outcome_and_acceptable_outcomes() -> None:
    label = refuse_or_escalate().label
    assert label is not None
    assert (label.outcome, label.acceptable_outcomes) == ("refuse", ["escalate"])
    assert label.accepted_outcomes() == ("refuse", "escalate")
    line = json.loads(canonical_line(refuse_or_escalate()))
    assert line["label"]["outcome"] == "refuse"
    assert line["label"]["acceptable_outcomes"] == ["escalate"]


@pytest.mark.parametrize("satisfiable", [True, False])
def test_every_accepted_outcome_passes_and_others_fail(satisfiable: bool) -> None:
    c = refuse_or_escalate(satisfiable)
    check = "outcome" if satisfiable else "unsatisfiable"
    refused = grade(c, Trajectory(final_reply="I can't do that.", outcome="refuse"))
    escalated = grade(c, Trajectory(final_reply="A colleague takes over.", handoff=True))
    resolved = grade(c, Trajectory(final_reply="Done, all sorted.", outcome="resolve"))
    assert statuses(refused)[check] == statuses(escalated)[check] == "pass"
    assert statuses(resolved)[check] == "fail"
    if satisfiable:
        assert "expected refuse or escalate, took resolve" in resolved.summary()


def test_acceptable_outcomes_cannot_repeat_or_let_an_unsatisfiable_case_resolve() -> None:
    with pytest.raises(ValidationError, match="repeats outcome"):
        Label(outcome="refuse", acceptable_outcomes=["refuse"])
    data = refuse_case("u-1", "o9")
    data["label"]["acceptable_outcomes"] = ["resolve"]
    with pytest.raises(ValidationError, match="cannot have outcome 'resolve'"):
        case(data)


# --- inaction ----------------------------------------------------------------------------------


def test_doing_nothing_is_no_refusal_even_when_it_reports_one() -> None:
    c = refuse_or_escalate()
    silent = grade(c, Trajectory(outcome="refuse"))
    assert statuses(silent)["outcome"] == "fail" and "did nothing" in silent.summary()
    unsat = grade(case(refuse_case("u-1", "o9")), Trajectory(outcome="refuse"))
    assert unsat.passed is False


def test_inaction_passes_only_where_the_oracle_asks_for_no_change() -> None:
    # No label, only the state assertion "no refund recorded": doing nothing is the right thing.
    data = refund_case("r-1", "o1", 12.0)
    data.pop("label")
    data["oracle"]["assertions"][0].update({"op": "eq", "value": 0, "description": "no refund"})
    assert grade(case(data), Trajectory()).passed is True
    labelled = refund_case("r-1", "o1", 12.0)
    labelled["label"] = {"outcome": "refuse", "guideline_version": "g1"}
    labelled["oracle"]["assertions"][0].update({"value": 0})
    assert grade(case(labelled), Trajectory()).passed is False


# --- deterministic facts -----------------------------------------------------------------------


def with_facts(*facts: dict[str, Any], oracle_class: str = "state_assertion") -> Case:
    data = refund_case("r-1", "o1", 12.0)
    data["label"]["matched_facts"] = list(facts)
    data["oracle"]["class"] = oracle_class
    data["oracle"].pop("rubric")
    return case(data)


DONE_CALLS = [
    TrajectoryToolCall(name="get_order", arguments={"order_id": "o1"}),
    TrajectoryToolCall(
        name="issue_refund", arguments={"order_id": "o1", "amount": 12.0}, effects_applied=1
    ),
]
DONE = {"orders": {"o1": {"note": "SECRET-STATE", "refunded": 12.0}}}


def done(reply: str) -> Trajectory:
    return Trajectory(final_reply=reply, outcome="resolve", tool_calls=DONE_CALLS, final_state=DONE)


def test_matched_facts_are_checked_beside_state_assertions_without_a_judge() -> None:
    c = with_facts(
        {"text": "$12.00", "match": "exact"},
        {"text": "5-10 business days", "match": "normalised"},
        {"text": r"\bREF-\d{4}\b", "match": "regex"},
    )
    good = grade(c, done("Refunded $12.00 (ref REF-1234); it shows in 5–10 Business  Days."))
    assert good.passed is True and statuses(good)["fact_match"] == "pass"
    assert good.oracle_class == "state_assertion" and needed_oracle_class(c) == "state_assertion"
    bad = grade(c, done("Refunded $12 (ref REF-12); it shows within a week."))
    assert statuses(bad) == {
        "required_tools": "pass",
        "state": "pass",
        "outcome": "pass",
        "fact_match": "fail",
    }
    assert "'$12.00' (exact)" in bad.summary() and "(regex)" in bad.summary()


def test_normalised_facts_match_whole_words() -> None:
    fact = AnswerFact(text="order 79", match="normalised")
    assert fact_matches(fact, "Your ORDER-79 is on its way")
    assert not fact_matches(fact, "order 790 is on its way")


def test_a_bad_regex_is_a_file_error() -> None:
    with pytest.raises(ValidationError, match="invalid regular expression"):
        AnswerFact(text="(unclosed", match="regex")


_WORDS = st.text(
    alphabet=st.characters(categories=("L", "N", "P", "Zs")), min_size=1, max_size=30
).filter(lambda s: normalise_text(s) != "")


@given(_WORDS)
def test_normalising_is_idempotent_and_leaves_single_spaces(text: str) -> None:
    once = normalise_text(text)
    assert normalise_text(once) == once
    assert "  " not in once and once == once.strip()
    assert normalise_text(unicodedata.normalize("NFKC", text)) == once


@given(st.text(alphabet=string.ascii_letters + string.digits + string.punctuation + " \t\n"))
def test_normalising_ignores_ascii_case_punctuation_and_spacing(text: str) -> None:
    respaced = re.sub(r"[^A-Za-z0-9]+", " ", text.swapcase())
    assert normalise_text(text) == normalise_text(respaced) == normalise_text(text.upper()).lower()


@given(_WORDS, st.text(max_size=20), st.text(max_size=20))
def test_a_fact_is_found_wherever_the_reply_holds_it(fact: str, before: str, after: str) -> None:
    reply = f"{before} {fact} {after}"
    assert fact_matches(AnswerFact(text=fact, match="exact"), reply)
    assert fact_matches(AnswerFact(text=fact, match="normalised"), reply)
    assert fact_matches(AnswerFact(text=re.escape(fact), match="regex"), reply)
    # Changing (ASCII) case and spacing keeps a normalised fact found.
    if fact.isascii():
        loose = f"{before}\n{fact.swapcase().replace(' ', '   ')}\t{after}"
        assert fact_matches(AnswerFact(text=fact, match="normalised"), loose)


@given(_WORDS)
def test_an_exact_match_is_also_a_normalised_match(text: str) -> None:
    reply = f"the reply says {text} here"
    if fact_matches(AnswerFact(text=text, match="exact"), reply):
        assert fact_matches(AnswerFact(text=text, match="normalised"), reply)


# --- NL assertions -----------------------------------------------------------------------------


def nl_judge(present: list[bool], calibrated: bool = True) -> tuple[Judge, FakeLLM]:
    def answer(prompt: str) -> dict[str, Any]:
        return {"facts": [{"index": i, "present": p} for i, p in enumerate(present)]}

    llm = FakeLLM(answer)
    return Judge(llm, **certified("judge-1", {"refunds": calibrated})), llm


def nl_case() -> Case:
    data = refund_case("r-1", "o1", 12.0)
    data["label"]["nl_assertions"] = ["The agent says when the money arrives", "No upsell"]
    return case(data)


def test_nl_assertions_are_judge_findings_one_per_assertion() -> None:
    c = nl_case()
    assert needed_oracle_class(c) == "rubric_judge"
    judge, llm = nl_judge([True, False])
    v = grade(c, done("Refunded; it arrives in 5 days. Want our premium plan?"), judge=judge)
    nl = next(ch for ch in v.checks if ch.name == "nl_assertions")
    assert nl.status == "fail" and nl.judged and nl.admissible and nl.findings == [True, False]
    assert "'No upsell'" in nl.evidence and "No upsell" in llm.prompts[0]
    uncertified, _ = nl_judge([True, True], calibrated=False)
    v2 = grade(c, done("Refunded; it arrives in 5 days."), judge=uncertified)
    assert v2.passed is True and v2.admissible is False  # an uncertified judge never gates
    assert statuses(grade(c, done("Refunded.")))["nl_assertions"] == "undetermined"


def test_review_items_number_nl_findings_after_the_judged_facts() -> None:
    from casework.review._items import run_items
    from casework.runner import RunHeader, TrialRecord
    from casework.runner.records import JudgeInfo, LoadedRun

    data = refund_case("r-1", "o1", 12.0)
    data["label"]["answer_facts"] = ["fact zero"]
    data["label"]["nl_assertions"] = ["assertion one"]
    data["oracle"]["class"] = "rubric_judge"
    c = case(data)
    judge, _ = nl_judge([True])
    verdict = grade(c, done("Refunded."), judge=judge)
    header = RunHeader.model_validate(
        {
            "run_id": "run-1",
            "dataset": "refunds",
            "dataset_ref": "refunds@working",
            "dataset_hash": "0" * 64,
            "agent_spec": "python:a:b",
            "k": 1,
            "seed": 0,
            "concurrency": 1,
            "case_ids": ["r-1"],
            "judge": JudgeInfo(model="judge-1").model_dump(),
            "timeout_s": 1,
            "started_at": "2026-12-01T00:00:00Z",
            "casework_version": "0",
        }
    )
    trial = TrialRecord.model_validate(
        {
            "run_id": "run-1",
            "case_id": "r-1",
            "trial": 0,
            "slice": "refunds",
            "split": "dev",
            "source": "hand",
            "seed": 1,
            "started_at": "2026-12-01T00:00:00Z",
            "duration_s": 0.1,
            "verdict": verdict.model_dump(),
            "trajectory": done("Refunded.").model_dump(),
        }
    )
    run = LoadedRun(header=header, trials=[trial], end=None, source="test")
    facts = [(i.key, i.fact) for i in run_items(run, [c], private=True) if i.kind == "answer_fact"]
    assert facts == [
        ("run-1/r-1/0/answer_fact/0", "fact zero"),
        ("run-1/r-1/0/answer_fact/1", "assertion one"),
    ]


# --- old files ---------------------------------------------------------------------------------


def test_old_cases_keep_their_canonical_bytes() -> None:
    for data in default_cases():
        c = case(data)
        line = canonical_line(c)
        for field in ("acceptable_outcomes", "matched_facts", "nl_assertions", "user_scenario"):
            assert field not in line
        assert canonical_line(Case.model_validate_json(line)) == line
        assert "tools_file" not in json.dumps(c.model_dump(mode="json"))


# --- labelling: one outcome per labeller, the accepted set authored on the case ------------------


def _round(outcome: str) -> Any:
    from datetime import UTC, datetime, timedelta

    from casework.labelling.rounds import decide_round
    from casework.schema import LabelRecord

    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    records = [
        LabelRecord.model_validate(
            {
                "case_id": "c-1",
                "labeller": name,
                "role": role,
                "outcome": outcome,
                "guideline_version": "g2",
                "labelled_at": t0 + timedelta(minutes=i),
            }
        )
        for i, (name, role) in enumerate([("a", "first"), ("b", "second")])
    ]
    return decide_round("c-1", "g2", [], records)


def test_a_relabelling_round_keeps_the_accepted_set_only_while_people_stay_inside_it() -> None:
    from casework.labelling.rounds import final_label

    previous = Label.model_validate(
        {
            "outcome": ["refuse", "escalate"],
            "matched_facts": [{"text": "30 days"}],
            "nl_assertions": ["No promise"],
        }
    )
    same = final_label(_round("refuse"), previous)
    assert (same.outcome, same.acceptable_outcomes) == ("refuse", ["escalate"])
    assert same.matched_facts == previous.matched_facts
    assert same.nl_assertions == ["No promise"]
    swapped = final_label(_round("escalate"), previous)
    assert (swapped.outcome, swapped.acceptable_outcomes) == ("escalate", ["refuse"])
    overruled = final_label(_round("clarify"), previous)
    assert (overruled.outcome, overruled.acceptable_outcomes) == ("clarify", [])


# --- blind views -------------------------------------------------------------------------------


def test_sheets_and_the_judge_s_labeller_view_show_the_scenario_and_the_offered_tools() -> None:
    from casework.dataset.tools import ToolDecl
    from casework.grading import prompt_blocks
    from casework.grading.calibration import labeller_view
    from casework.labelling.sheets import render_csv, sheet_line

    data = refund_case("r-1", "o1", 12.0)
    data["situation"]["turns"] = []
    data["situation"]["tools"] = ["get_order"]
    data["situation"]["user_scenario"] = {"goal": "SCENARIO-GOAL", "known_info": "order o1"}
    c = case(data)
    tools = {n: ToolDecl(n) for n in ("get_order", "issue_refund")}
    line = sheet_line("label", "refunds", "lab-1", c, "g1", tools)
    assert line["situation"]["user_scenario"]["goal"] == "SCENARIO-GOAL"
    assert [t["name"] for t in line["tools"]] == ["get_order"]
    assert list(line["required"]) == ["get_order"]
    assert "SCENARIO-GOAL" not in json.dumps({k: v for k, v in line.items() if k != "situation"})
    cell = render_csv([line], "label", ["get_order"]).decode()
    assert "[simulated user, up to 10 turns] goal: SCENARIO-GOAL; knows: order o1" in cell
    assert "[tools offered] get_order" in cell
    llm = FakeLLM(lambda prompt: {"outcome": "resolve", "reason": ""})
    Judge(llm).label_outcome(labeller_view(c, tools, "g1"))
    assert "SCENARIO-GOAL" in prompt_blocks(llm.prompts[0])["user_scenario"]
    assert "SECRET-FACT" not in llm.prompts[0] and "SECRET-RUBRIC" not in llm.prompts[0]
