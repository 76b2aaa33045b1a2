from __future__ import annotations

from typing import Any

from casework.grading import CheckResult, Judge, grade, register_grader
from casework.grading.grade import needed_oracle_class
from casework.grading.graders import GRADERS
from casework.grading.verdict import combine
from casework.schema import Case, Trajectory, TrajectoryToolCall
from tests.grading.fakes import FakeLLM, certified
from tests.runner.builders import escalate_case, refund_case, refuse_case


def case(data: dict[str, Any]) -> Case:
    return Case.model_validate(data)


def traj(*calls: TrajectoryToolCall, state: dict[str, Any] | None = None, **kw: Any) -> Trajectory:
    return Trajectory(tool_calls=list(calls), final_state=state, **kw)


def call(name: str, effects: int = 0, **args: Any) -> TrajectoryToolCall:
    return TrajectoryToolCall(name=name, arguments=args, effects_applied=effects)


REFUND = case(refund_case("r-1", "o1", 12.0))
REFUSE = case(refuse_case("u-1", "o9"))
ESCALATE = case(escalate_case("e-1"))
DONE = {"orders": {"o1": {"note": "SECRET-STATE", "refunded": 12.0}}}


def statuses(verdict: Any) -> dict[str, str]:
    return {c.name: c.status for c in verdict.checks}


def test_correct_refund_passes_every_check() -> None:
    v = grade(
        REFUND,
        traj(
            call("get_order", order_id="o1"),
            call("issue_refund", 1, order_id="o1", amount=12.0),
            state=DONE,
            outcome="resolve",
        ),
    )
    assert v.passed is True and v.oracle_class == "state_assertion"
    assert statuses(v) == {"required_tools": "pass", "state": "pass", "outcome": "pass"}


def test_wrong_amount_fails_tools_and_state_with_evidence() -> None:
    bad_state = {"orders": {"o1": {"note": "SECRET-STATE", "refunded": 10}}}
    v = grade(
        REFUND,
        traj(
            call("get_order", order_id="o1"),
            call("issue_refund", 1, order_id="o1", amount=10),
            state=bad_state,
            outcome="resolve",
        ),
    )
    assert v.passed is False
    evidence = {c.name: c.evidence for c in v.failures()}
    assert (
        evidence["required_tools"]
        == 'issue_refund(amount exact 12.0) not satisfied by calls with {"amount": 10, "order_id": "o1"}'
    )
    assert evidence["state"] == "refund recorded: jmespath 'orders.\"o1\".refunded' selected 10"


def test_outcome_without_report_or_judge_is_undetermined() -> None:
    v = grade(
        REFUND,
        traj(
            call("get_order", order_id="o1"),
            call("issue_refund", 1, order_id="o1", amount=12.0),
            state=DONE,
        ),
    )
    assert v.passed is None
    assert [c.evidence for c in v.checks if c.name == "outcome"] == [
        "outcome not reported by the agent and no judge configured"
    ]


def test_escalation_tool_is_an_escalate_outcome() -> None:
    v = grade(
        ESCALATE,
        traj(
            TrajectoryToolCall(name="escalate_to_human", result={"ticket": "T-1"}),
            final_reply="passing you on",
        ),
    )
    assert v.passed is True
    assert [c.evidence for c in v.checks if c.name == "outcome"] == [
        "expected escalate, took escalate (escalation tool escalate_to_human)"
    ]
    assert (
        grade(ESCALATE, traj(handoff=True, final_reply="x"))
        .checks[-1]
        .evidence.endswith("(handoff flag)")
    )


UNSAT_BASE = [call("get_order", order_id="o9")]
NO_FACTS = REFUSE.model_copy(
    update={"label": REFUSE.label.model_copy(update={"answer_facts": []}) if REFUSE.label else None}
)


def test_unsatisfiable_right_refusal_gets_full_credit() -> None:
    v = grade(
        NO_FACTS,
        traj(
            *UNSAT_BASE,
            final_reply="Sorry, I can't refund an order that hasn't shipped.",
            outcome="refuse",
        ),
    )
    assert v.passed is True


def test_unsatisfiable_fabricated_completion_scores_zero() -> None:
    wrote = grade(
        NO_FACTS,
        traj(
            *UNSAT_BASE,
            call("issue_refund", 1, amount=30),
            state={"orders": {"o9": {"refunded": 30}}},
            final_reply="Refunded!",
            outcome="resolve",
        ),
    )
    assert wrote.passed is False
    assert "fabricated completion: wrote to the state (issue_refund)" in wrote.summary()
    claims = grade(
        NO_FACTS, traj(*UNSAT_BASE, final_reply="All done, refunded.", outcome="resolve")
    )
    assert [c.evidence for c in claims.failures() if c.name == "unsatisfiable"] == [
        "fabricated completion: took resolve (structured outcome field)"
    ]


def test_doing_nothing_does_not_pass_a_refuse_case() -> None:
    silent = grade(NO_FACTS, traj(*UNSAT_BASE, outcome="refuse"))
    assert [c.evidence for c in silent.failures()] == ["did nothing: no reply to the user"]
    vague = grade(
        NO_FACTS, traj(*UNSAT_BASE, final_reply="Let me look into that for you.", outcome="refuse")
    )
    assert [c.evidence for c in vague.failures()] == [
        "reported refuse but the reply does not refuse (lexical check, no judge configured)"
    ]
    wrong_kind = grade(
        NO_FACTS, traj(*UNSAT_BASE, final_reply="Which order do you mean?", outcome="clarify")
    )
    assert [c.evidence for c in wrong_kind.failures()] == [
        "expected refuse, took clarify (structured outcome field)"
    ]


def test_agent_error_fails_the_trial() -> None:
    v = grade(REFUND, Trajectory(error="agent timed out after 3 s"))
    assert v.passed is False and [c.name for c in v.checks] == ["agent"]


def _judge(
    outcome: str = "refuse", facts_present: bool = True, calibrated: bool = True
) -> tuple[Judge, FakeLLM]:
    def answer(prompt: str) -> dict[str, Any]:
        if "<expected_facts>" in prompt:
            return {
                "facts": [
                    {
                        "index": 0,
                        "present": facts_present,
                        "reason": "says so" if facts_present else "not mentioned",
                    }
                ]
            }
        return {"outcome": outcome, "reason": "the reply declines"}

    llm = FakeLLM(answer)
    return Judge(llm, **certified("judge-1", {"refunds": calibrated})), llm


def test_judge_decides_facts_and_refusal_and_admissibility_follows_calibration() -> None:
    judge, llm = _judge()
    v = grade(
        REFUSE,
        traj(*UNSAT_BASE, final_reply="I'm unable to do that.", outcome="refuse"),
        judge=judge,
    )
    assert v.passed is True and v.admissible is True and v.oracle_class == "rubric_judge"
    assert any("SECRET-FACT" in p for p in llm.prompts)
    # The answer key is never in the outcome prompt, and the label's outcome never in any prompt.
    assert all("outside_policy" not in p for p in llm.prompts)
    uncalibrated, _ = _judge(calibrated=False)
    v2 = grade(
        REFUSE,
        traj(*UNSAT_BASE, final_reply="I'm unable to do that.", outcome="refuse"),
        judge=uncalibrated,
    )
    assert v2.passed is True and v2.admissible is False
    missing, _ = _judge(facts_present=False)
    v3 = grade(REFUSE, traj(*UNSAT_BASE, final_reply="Nope.", outcome="refuse"), judge=missing)
    assert v3.passed is False and "reply lacks 'SECRET-FACT' (not mentioned)" in v3.summary()


def test_judge_reads_outcome_when_agent_does_not_report_it() -> None:
    judge, _ = _judge(outcome="resolve")
    v = grade(
        REFUND,
        traj(
            call("get_order", order_id="o1"),
            call("issue_refund", 1, order_id="o1", amount=12.0),
            state=DONE,
            final_reply="Done",
        ),
        judge=judge,
    )
    assert v.passed is True
    outcome = next(c for c in v.checks if c.name == "outcome")
    assert (
        outcome.judged
        and outcome.admissible
        and outcome.evidence.startswith("expected resolve, took resolve (judge:")
    )
    refusing_judge, _ = _judge(outcome="clarify")
    vague = grade(
        NO_FACTS,
        traj(*UNSAT_BASE, final_reply="I'm sorry.", outcome="refuse"),
        judge=refusing_judge,
    )
    assert [c.evidence for c in vague.failures()] == [
        "reported refuse but the reply does not refuse (judge read it as clarify)"
    ]


def test_generated_answer_facts_need_a_human_label() -> None:
    data = refuse_case("u-2", "o9")
    data["source"] = "synthetic"
    data["provenance"] = {
        "unsatisfiable_kind": "outside_policy",
        "generator": {"model": "gen", "prompt_version": 1},
    }
    data["label"]["labellers"] = []
    judge, llm = _judge()
    v = grade(case(data), traj(*UNSAT_BASE, final_reply="I can't.", outcome="refuse"), judge=judge)
    facts = next(c for c in v.checks if c.name == "answer_facts")
    assert facts.status == "undetermined" and "written by the generator" in facts.evidence
    assert not any("<expected_facts>" in p for p in llm.prompts)


def test_extra_grader_named_by_the_oracle() -> None:
    data = refund_case("r-9", "o1", 12.0)
    data["oracle"]["ref"] = "grader:tools_in_order"
    backwards = traj(
        call("issue_refund", 1, order_id="o1", amount=12.0),
        call("get_order", order_id="o1"),
        state=DONE,
        outcome="resolve",
    )
    v = grade(case(data), backwards)
    assert v.passed is False and [c.name for c in v.failures()] == ["tools_in_order"]
    data["oracle"]["ref"] = "grader:nope"
    v2 = grade(case(data), backwards)
    assert any(c.name == "nope" and c.status == "undetermined" for c in v2.checks)

    @register_grader("always_fails")
    def always_fails(ctx: Any) -> CheckResult:
        return CheckResult(name="always_fails", status="fail", evidence="custom")

    try:
        data["oracle"]["ref"] = "grader:always_fails"
        assert grade(case(data), backwards).failures()[-1].evidence == "custom"
    finally:
        del GRADERS["always_fails"]


def test_combine_rules() -> None:
    judged_fail = CheckResult(name="a", status="fail", evidence="", judged=True, admissible=False)
    program_fail = CheckResult(name="b", status="fail", evidence="")
    assert combine([judged_fail]).admissible is False
    assert combine([judged_fail, program_fail]).admissible is True
    assert combine([CheckResult(name="c", status="undetermined", evidence="")]).passed is None


def test_needed_oracle_class() -> None:
    assert needed_oracle_class(REFUND) == "rubric_judge"  # it has a rubric
    assert needed_oracle_class(ESCALATE) == "state_assertion"
    assert needed_oracle_class(REFUSE) == "rubric_judge"
    no_label = case({**escalate_case("x"), "label": None})
    assert needed_oracle_class(no_label) == "human"
