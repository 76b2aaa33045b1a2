"""Scoring modes: casework's own checks, or exactly τ²-bench's default reward.

``casework`` runs every default grader (tools, state, outcome, facts, judged assertions, golden
state). ``tau2`` scores as τ²-bench's evaluator does with its default reward basis
(``DB`` and ``COMMUNICATE``): the final database must equal the one the golden actions leave
(the initial one when a task has none), and every ``communicate_info`` string must appear in an
assistant message, compared as τ² compares it (lower case, commas dropped from the message). No
outcome check, no tool lists, and ``nl_assertions`` are left unscored (τ² reads them only in its
opt-in ``all_with_nl_assertions`` mode). Imported τ² cases score ``tau2`` unless their dataset
opts into ``casework``. Entry points: :data:`Scoring`, :func:`graders_for`,
:func:`imported_from_tau2` and the graders :func:`tau2_db` and :func:`tau2_communicate`.
"""

from __future__ import annotations

from typing import Literal

from casework.grading.golden import MAX_SHOWN, state_differences
from casework.grading.graders import DEFAULT_GRADERS, GradeContext, register_grader
from casework.grading.verdict import CheckResult
from casework.schema import Case

__all__ = [
    "SCORINGS",
    "TAU2_GRADERS",
    "Scoring",
    "graders_for",
    "imported_from_tau2",
    "tau2_communicate",
    "tau2_db",
]

Scoring = Literal["casework", "tau2"]
"""How a case is scored: casework's checks, or τ²-bench's default reward basis."""

#: Every scoring mode, for validating configuration.
SCORINGS: tuple[Scoring, ...] = ("casework", "tau2")

#: The graders of τ²'s default reward basis (``DB`` × ``COMMUNICATE``).
TAU2_GRADERS: tuple[str, ...] = ("tau2_db", "tau2_communicate")

# The guideline `casework import tau2` writes on every label it makes: what marks an imported task.
_TAU2_GUIDELINE = "tau2-import"


def imported_from_tau2(case: Case) -> bool:
    """Whether ``case`` came from `casework import tau2` (its label's guideline says so)."""
    return case.label is not None and case.label.guideline_version == _TAU2_GUIDELINE


def graders_for(scoring: Scoring) -> tuple[str, ...]:
    """The graders a scoring mode runs, in order."""
    return TAU2_GRADERS if scoring == "tau2" else DEFAULT_GRADERS


@register_grader("tau2_db")
def tau2_db(ctx: GradeContext) -> CheckResult:
    """τ²'s ``DB`` check: the final state equals the golden actions' one (or the initial state).

    τ² compares hashes of the whole database; here the same databases are compared field by
    field so a failure names where they differ.
    """
    name = "tau2_db"
    golden = ctx.golden_state
    if golden is None:
        if ctx.case.oracle.golden_actions:
            return CheckResult(
                name=name,
                status="undetermined",
                evidence="golden actions were not replayed (grade the trial through `casework run`)",
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
    commas removed. The facts are the label's ``matched_facts`` (τ²'s ``communicate_info``).
    """
    label = ctx.case.label
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
