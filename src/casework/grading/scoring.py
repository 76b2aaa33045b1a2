"""Scoring modes: casework's own checks, or exactly τ²-bench's reward.

``casework`` runs every default grader (tools, state, outcome, facts, judged assertions, golden
state). ``tau2`` scores as τ²-bench's evaluator does (its ``EvaluationType.ALL``), by the case's
own reward basis (``oracle.tau2.reward_basis``; τ²'s default ``DB`` × ``COMMUNICATE`` for a case
that carries none): ``DB``, the final databases equal the ones every golden action leaves (the
initial ones when a task has none); ``ENV_ASSERTION``, τ²'s own assertion functions hold on the
final environment; ``ACTION``, each golden action is among the calls made, compared as τ²
compares them; ``COMMUNICATE``, every ``communicate_info`` string appears in an assistant message
(lower case, commas dropped from the message). A part outside the basis is not scored; no outcome
check, no tool lists, and ``nl_assertions`` are informative only (τ² reads them only in its
opt-in ``all_with_nl_assertions`` mode). Imported τ² cases score ``tau2`` unless their dataset
opts into ``casework``. Entry points: :data:`Scoring`, :func:`graders_for`,
:func:`imported_from_tau2` and the graders :func:`tau2_db`, :func:`tau2_env_assertions`,
:func:`tau2_action` and :func:`tau2_communicate`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from casework.grading.golden import MAX_SHOWN, state_differences
from casework.grading.graders import DEFAULT_GRADERS, GradeContext, register_grader
from casework.grading.tau2_state import tau2_domain_of, tau2_environment, tau2_module
from casework.grading.verdict import CheckResult
from casework.schema import Case

__all__ = [
    "SCORINGS",
    "TAU2_GRADERS",
    "Scoring",
    "graders_for",
    "imported_from_tau2",
    "tau2_action",
    "tau2_communicate",
    "tau2_db",
    "tau2_env_assertions",
]

Scoring = Literal["casework", "tau2"]
"""How a case is scored: casework's checks, or τ²-bench's default reward basis."""

#: Every scoring mode, for validating configuration.
SCORINGS: tuple[Scoring, ...] = ("casework", "tau2")

#: The graders of τ²'s reward parts; each scores only a case whose reward basis names its part.
TAU2_GRADERS: tuple[str, ...] = (
    "tau2_db",
    "tau2_env_assertions",
    "tau2_action",
    "tau2_communicate",
)

# τ²'s reward basis when a task names none (its `EvaluationCriteria` default).
_DEFAULT_BASIS = ("DB", "COMMUNICATE")


def imported_from_tau2(case: Case) -> bool:
    """Whether ``case`` carries τ²-bench's own scoring (``oracle.tau2``, set by the import)."""
    return case.oracle.tau2 is not None


def _basis(case: Case) -> tuple[str, ...]:
    tau2 = case.oracle.tau2
    return tuple(tau2.reward_basis) if tau2 is not None else _DEFAULT_BASIS


def _criteria(case: Case) -> Mapping[str, Any] | None:
    tau2 = case.oracle.tau2
    return tau2.evaluation_criteria if tau2 is not None else None


def graders_for(scoring: Scoring) -> tuple[str, ...]:
    """The graders a scoring mode runs, in order."""
    return TAU2_GRADERS if scoring == "tau2" else DEFAULT_GRADERS


@register_grader("tau2_db")
def tau2_db(ctx: GradeContext) -> CheckResult | None:
    """τ²'s ``DB`` check: the final state equals the golden actions' one (or the initial state).

    τ² compares hashes of the whole databases (the user's device too); here the same databases
    are compared field by field so a failure names where they differ. As τ²'s evaluator, a task
    that publishes neither ``actions`` nor ``env_assertions`` passes it.
    """
    name = "tau2_db"
    if "DB" not in _basis(ctx.case):
        return None
    criteria = _criteria(ctx.case)
    if (
        criteria is not None
        and criteria.get("actions") is None
        and criteria.get("env_assertions") is None
    ):
        return CheckResult(
            name=name, status="pass", evidence="the task has no actions or env assertions"
        )
    golden = ctx.golden_state
    if golden is None:
        if ctx.case.oracle.golden_actions:
            return CheckResult(
                name=name,
                status="undetermined",
                evidence="golden actions were not replayed (the runner replays them as it grades a trial)",
            )
        golden = ctx.initial_state
    differs = state_differences(golden, ctx.final_state)
    if not differs:
        return CheckResult(
            name=name, status="pass", evidence="final database equals the golden database"
        )
    shown = ", ".join(differs[:MAX_SHOWN])
    more = f" and {len(differs) - MAX_SHOWN} more" if len(differs) > MAX_SHOWN else ""
    return CheckResult(
        name=name,
        status="fail",
        evidence=f"final database differs from the golden database at {shown}{more}",
    )


def _assistant_texts(ctx: GradeContext) -> list[str]:
    texts = [m.content for m in ctx.trajectory.messages if m.role == "assistant" and m.content]
    if not texts and ctx.trajectory.final_reply:
        texts.append(ctx.trajectory.final_reply)
    return texts


@register_grader("tau2_communicate")
def tau2_communicate(ctx: GradeContext) -> CheckResult | None:
    """τ²'s ``COMMUNICATE`` check: each fact to communicate is in some assistant message.

    As τ² compares: the fact in lower case is a substring of the message in lower case with its
    commas removed. The facts are τ²'s ``communicate_info`` as published (a case without
    ``oracle.tau2``: the label's ``matched_facts``).
    """
    if "COMMUNICATE" not in _basis(ctx.case):
        return None
    criteria = _criteria(ctx.case)
    label = ctx.case.label
    if criteria is not None:
        facts = [str(f) for f in criteria.get("communicate_info") or []]
    else:
        facts = [f.text for f in label.matched_facts] if label is not None else []
    if not facts:
        return None
    said = [t.lower().replace(",", "") for t in _assistant_texts(ctx)]
    missing = [f for f in facts if not any(f.lower() in text for text in said)]
    if missing:
        return CheckResult(
            name="tau2_communicate",
            status="fail",
            evidence="not said in any assistant message: " + "; ".join(repr(f) for f in missing),
        )
    return CheckResult(
        name="tau2_communicate",
        status="pass",
        evidence=f"all {len(facts)} fact(s) to communicate were said",
    )


@register_grader("tau2_env_assertions")
def tau2_env_assertions(ctx: GradeContext) -> CheckResult | None:
    """τ²'s ``ENV_ASSERTION`` check: τ²'s own assertion functions hold on the final environment.

    The final state is loaded into the installed τ² domain's environment and each published
    ``env_assertions`` entry runs as τ²'s evaluator runs it (its result must equal
    ``assert_value``). An assertion that cannot run fails (τ² scores it 0).
    """
    name = "tau2_env_assertions"
    tau2 = ctx.case.oracle.tau2
    if tau2 is None or "ENV_ASSERTION" not in tau2.reward_basis:
        return None
    assertions = tau2.evaluation_criteria.get("env_assertions") or []
    if not assertions:
        return CheckResult(name=name, status="pass", evidence="the task has no env assertions")
    domain = tau2.domain or tau2_domain_of(ctx.final_state)
    if domain is None:
        return CheckResult(
            name=name, status="undetermined", evidence="the final state is no τ²-bench database"
        )
    env = tau2_environment(domain, ctx.final_state)
    env_assertion = tau2_module("tau2.data_model.tasks").EnvAssertion

    failed = []
    for i, raw in enumerate(assertions):
        assertion = env_assertion.model_validate(raw)
        try:
            met = env.run_env_assertion(assertion, raise_assertion_error=False)
        except Exception as exc:  # τ²'s own function refused this state: the assertion is unmet
            met, why = False, f"{assertion.func_name}: {exc}"
        else:
            why = f"{assertion.func_name}({assertion.arguments}) is not {assertion.assert_value}"
        if not met:
            failed.append(f"#{i} {why}")
    if failed:
        return CheckResult(name=name, status="fail", evidence="; ".join(failed[:MAX_SHOWN]))
    return CheckResult(
        name=name, status="pass", evidence=f"all {len(assertions)} env assertion(s) hold"
    )


def _action_found(action: Mapping[str, Any], calls: list[tuple[str, dict[str, Any]]]) -> bool:
    """τ²'s ``Action.compare_with_tool_call`` over the calls made (any one matching)."""
    wanted = action.get("arguments") or {}
    keys = action.get("compare_args")
    for name, args in calls:
        if name != action.get("name"):
            continue
        compared = list(args) if keys is None else list(keys)
        if not compared:
            return True
        if {k: v for k, v in args.items() if k in compared} == {
            k: v for k, v in wanted.items() if k in compared
        }:
            return True
    return False


@register_grader("tau2_action")
def tau2_action(ctx: GradeContext) -> CheckResult | None:
    """τ²'s ``ACTION`` check: every golden action (the user's too) is among the calls made.

    As τ² compares: same tool name, and the arguments named by ``compare_args`` (all the call's
    arguments when it is absent) equal; the calls are the agent's and the simulated user's,
    failed ones included, whoever made them.
    """
    name = "tau2_action"
    tau2 = ctx.case.oracle.tau2
    if tau2 is None or "ACTION" not in tau2.reward_basis:
        return None
    actions = [a for a in tau2.evaluation_criteria.get("actions") or [] if isinstance(a, Mapping)]
    calls = [(c.name, dict(c.arguments)) for c in ctx.trajectory.tool_calls]
    calls += [
        (c.name, dict(c.arguments))
        for m in ctx.trajectory.messages
        if m.role == "user"
        for c in m.tool_calls
    ]
    missing = [str(a.get("name")) for a in actions if not _action_found(a, calls)]
    if missing:
        return CheckResult(
            name=name, status="fail", evidence="golden action(s) not made: " + ", ".join(missing)
        )
    return CheckResult(
        name=name, status="pass", evidence=f"all {len(actions)} golden action(s) were made"
    )
