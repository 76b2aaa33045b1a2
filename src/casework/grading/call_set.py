"""Graders over the whole set of calls, for benchmarks that score it as one answer (BFCL).

``exact_calls``: the calls are exactly the required ones (as many calls as requirements, each
satisfying its own requirement and passing no argument it does not list). ``any_call``: at least
one call was made, whichever (BFCL's relevance categories). A case asks for one with
``oracle.ref = "grader:exact_calls"`` or ``"grader:any_call"``.
"""

from __future__ import annotations

import json

from casework.grading.graders import GradeContext, register_grader
from casework.grading.matchers import MatcherError, describe_requirement, match_exactly
from casework.grading.verdict import CheckResult

__all__ = ["any_call", "exact_calls"]


@register_grader("exact_calls")
def exact_calls(ctx: GradeContext) -> CheckResult | None:
    """The calls are exactly the label's required tools: no call and no argument beyond them."""
    label = ctx.case.label
    if label is None:
        return None
    calls, required = ctx.calls, label.required_tools
    if len(calls) != len(required):
        made = ", ".join(c.name for c in calls) or "none"
        return CheckResult(
            name="exact_calls",
            status="fail",
            evidence=f"made {len(calls)} call(s) ({made}); the label requires exactly "
            f"{len(required)}",
        )
    try:
        result = match_exactly(required, calls)
    except MatcherError as exc:
        return CheckResult(
            name="exact_calls", status="undetermined", evidence=f"bad matcher in case: {exc}"
        )
    if result.unmatched:
        args = "; ".join(f"{c.name} {json.dumps(c.arguments, sort_keys=True)}" for c in calls)
        wanted = ", ".join(describe_requirement(r) for r in result.unmatched)
        return CheckResult(
            name="exact_calls",
            status="fail",
            evidence=f"no call is exactly {wanted} (calls: {args})",
        )
    return CheckResult(
        name="exact_calls",
        status="pass",
        evidence=f"the {len(calls)} call(s) are exactly the required ones",
    )


@register_grader("any_call")
def any_call(ctx: GradeContext) -> CheckResult | None:
    """At least one tool call was made (whichever tool: a relevance question)."""
    if ctx.calls:
        names = ", ".join(c.name for c in ctx.calls)
        return CheckResult(name="any_call", status="pass", evidence=f"called {names}")
    return CheckResult(name="any_call", status="fail", evidence="made no tool call")
