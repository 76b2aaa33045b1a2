"""Grading one trial: run every grader that applies, combine the checks into a :class:`Verdict`.

Entry points: :func:`grade` and :func:`needed_oracle_class` (the weakest grader a case needs).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from casework.grading.graders import GradeContext, get_grader
from casework.grading.judge import Judge
from casework.grading.programmatic import programmatic as _registers_programmatic  # noqa: F401
from casework.grading.scoring import Scoring, graders_for
from casework.grading.semantics import fact_match as _registers_semantics  # noqa: F401
from casework.grading.verdict import CheckResult, Verdict, combine
from casework.schema import Case, OracleClass, Trajectory

__all__ = ["GRADER_REF_PREFIX", "grade", "needed_oracle_class"]

#: An oracle ``ref`` naming an extra grader: ``grader:tools_in_order`` or ``grader:pkg.mod:fn``.
GRADER_REF_PREFIX = "grader:"


def grade(
    case: Case,
    trajectory: Trajectory,
    *,
    initial_state: Mapping[str, Any] | None = None,
    judge: Judge | None = None,
    no_judge: str | None = None,
    golden_state: Mapping[str, Any] | None = None,
    scoring: Scoring = "casework",
) -> Verdict:
    """Grade one trajectory through a case.

    Args:
        case: The case (its label and oracle decide which graders apply).
        trajectory: What the agent did, with ``tool_calls`` and ``final_state`` from the runner.
        initial_state: The case's initial state (default: ``case.situation.state``).
        judge: LLM judge for what the record cannot decide; ``None`` leaves such checks undetermined.
        no_judge: Why ``judge`` is withheld, shown as those checks' evidence (a frozen case).
        golden_state: Final state of the case's golden actions (the runner replays them).
        scoring: ``casework`` (every default grader) or ``tau2`` (exactly τ²-bench's default
            reward: database and facts to communicate; see :mod:`casework.grading.scoring`).
    """
    ctx = GradeContext(
        case=case,
        trajectory=trajectory,
        initial_state=case.situation.state if initial_state is None else initial_state,
        judge=judge,
        no_judge=no_judge,
        golden_state=golden_state,
    )
    if trajectory.error:
        return combine(
            [CheckResult(name="agent", status="fail", evidence=f"agent failed: {trajectory.error}")]
        )
    names = list(graders_for(scoring))
    ref = case.oracle.ref
    if case.oracle.class_ == "programmatic":
        names.append("programmatic")
    if ref and ref.startswith(GRADER_REF_PREFIX):
        names.append(ref[len(GRADER_REF_PREFIX) :])
    checks: list[CheckResult] = []
    for name in names:
        try:
            grader = get_grader(name)
        except KeyError as exc:
            checks.append(CheckResult(name=name, status="undetermined", evidence=str(exc.args[0])))
            continue
        check = grader(ctx)
        if check is not None:
            checks.append(check)
    if not checks:
        checks.append(
            CheckResult(
                name="oracle",
                status="undetermined",
                evidence="case has no label and no assertions to grade by",
            )
        )
    verdict = combine(checks)
    if case.oracle.class_ == "rubric_judge":
        # The `rubric` grader (or the judged facts) applies the oracle; the verdict names it even
        # when the judge could not be asked and the verdict stays open.
        verdict = verdict.model_copy(update={"oracle_class": "rubric_judge"})
    elif case.oracle.class_ == "programmatic" and verdict.oracle_class == "state_assertion":
        # The named check decided (no judge did): the verdict says which kind of oracle it was.
        verdict = verdict.model_copy(update={"oracle_class": "programmatic"})
    return verdict


def needed_oracle_class(case: Case) -> OracleClass:
    """The weakest grader a case needs.

    `programmatic` when the oracle's named check decides it; `state_assertion` when
    programmatic checks decide it (tools, state, an outcome the agent reports); `rubric_judge` when answer facts or a rubric need a judge; `human` when there is
    nothing to grade by but a person.
    """
    label = case.label
    if case.oracle.class_ == "programmatic" and not (
        case.oracle.rubric or (label is not None and (label.answer_facts or label.nl_assertions))
    ):
        return "programmatic"
    if label is None and not (case.oracle.assertions or case.oracle.golden_actions):
        return "human"
    if case.oracle.rubric or (label is not None and (label.answer_facts or label.nl_assertions)):
        return "rubric_judge"
    return "state_assertion"
