"""The golden-replay state oracle: the agent's final state must equal the golden actions' one.

The runner replays a case's ``oracle.golden_actions`` on a fresh copy of its initial state (see
:func:`casework.runner.replay_golden`) and hands the result to :func:`grade` as
``golden_state``; the ``golden_state`` grader compares it with the trial's final state, over the
case's ``oracle.state_compare`` JSON Pointers when it names some, so any path to the right state
passes. Entry points: :func:`state_differences` and the grader :func:`golden_state`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from casework.dataset.state import state_diff
from casework.grading.graders import GradeContext, register_grader
from casework.grading.verdict import CheckResult

__all__ = ["MAX_SHOWN", "golden_state", "state_differences"]

#: Differing keys listed in a failed check's evidence (the count says how many more).
MAX_SHOWN = 10

_MISSING = object()


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _resolve(state: Any, pointer: str) -> Any:
    node = state
    for token in pointer.split("/")[1:]:
        key = _unescape(token)
        if isinstance(node, Mapping) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            return _MISSING
    return node


def state_differences(
    golden: Mapping[str, Any], final: Mapping[str, Any], compare: Sequence[str] = ()
) -> list[str]:
    """JSON Pointers where ``final`` differs from ``golden`` (over ``compare`` when given).

    Example:
        >>> state_differences({"a": {"x": 1}, "b": 2}, {"a": {"x": 3}, "b": 9}, ["/a"])
        ['/a/x']
    """
    out: list[str] = []
    for pointer in compare or [""]:
        want, got = _resolve(golden, pointer), _resolve(final, pointer)
        if want is _MISSING and got is _MISSING:
            continue
        if want is _MISSING or got is _MISSING:
            out.append(pointer)
            continue
        out += [op["path"] or "/" for op in state_diff(want, got, pointer)]
    return out


@register_grader("golden_state")
def golden_state(ctx: GradeContext) -> CheckResult | None:
    """The final state equals the golden actions' final state (over `state_compare`)."""
    oracle = ctx.case.oracle
    if not oracle.golden_actions:
        return None
    name = "golden_state"
    if ctx.golden_state is None:
        return CheckResult(
            name=name,
            status="undetermined",
            evidence="golden actions were not replayed (the runner replays them as it grades a trial)",
        )
    differs = state_differences(ctx.golden_state, ctx.final_state, oracle.state_compare)
    over = ", ".join(oracle.state_compare) if oracle.state_compare else "the whole state"
    if not differs:
        return CheckResult(
            name=name, status="pass", evidence=f"final state equals the golden state over {over}"
        )
    shown = ", ".join(differs[:MAX_SHOWN])
    more = f" and {len(differs) - MAX_SHOWN} more" if len(differs) > MAX_SHOWN else ""
    return CheckResult(
        name=name,
        status="fail",
        evidence=f"final state differs from the golden state over {over} at {shown}{more}",
    )
