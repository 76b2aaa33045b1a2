"""Built-in graders, registered by name because case files refer to checks by name.

Each grader takes a :class:`GradeContext` and returns a :class:`CheckResult` (or ``None`` when it does
not apply to the case). Entry points: :func:`register_grader`, :func:`get_grader`, :data:`GRADERS`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casework.errors import CaseworkError, UsageError
from casework.grading.judge import CheckKind, Judge
from casework.grading.matchers import (
    MatcherError,
    call_matches,
    describe_requirement,
    evaluate_assertion,
    match_forbidden,
    match_in_order,
    match_required,
)
from casework.grading.verdict import CheckResult
from casework.llm import LLMError
from casework.plugins import load_object
from casework.schema import (
    Case,
    Outcome,
    ToolRequirement,
    Trajectory,
    TrajectoryToolCall,
    Turn,
)

__all__ = [
    "DEFAULT_GRADERS",
    "ESCALATION_TOOL",
    "GRADERS",
    "GradeContext",
    "Grader",
    "ObservedOutcome",
    "did_nothing",
    "get_grader",
    "looks_like_refusal",
    "observed_outcome",
    "register_grader",
]

#: Tool names that count as handing the conversation to a person.
ESCALATION_TOOL = re.compile(r"(escalat|hand_?off|transfer_to_human|human_agent)", re.IGNORECASE)

_REFUSAL = re.compile(
    r"\b(can ?not|can't|cannot|unable to|not able to|won't be able|not possible|isn't possible|"
    r"not eligible|isn't eligible|is not eligible|no longer eligible|decline|not allowed|"
    r"can only|only the (?:account holder|person)|neither|unfortunately|locked|"
    r"outside (?:the|our) [\w -]*(?:policy|window))\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class GradeContext:
    """Everything a grader may read about one trial."""

    case: Case
    trajectory: Trajectory
    initial_state: Mapping[str, Any] = field(default_factory=dict)
    judge: Judge | None = None
    no_judge: str | None = None
    """Why there is no judge, when it was withheld on purpose (a frozen case, a public endpoint)."""
    golden_state: Mapping[str, Any] | None = None
    """The final state of the case's golden actions, replayed by the runner (tool environments)."""

    @property
    def calls(self) -> list[TrajectoryToolCall]:
        """The recorded tool calls."""
        return self.trajectory.tool_calls

    @property
    def final_state(self) -> Mapping[str, Any]:
        """The data state after the trial (the initial state if the runner recorded none)."""
        return (
            self.trajectory.final_state
            if self.trajectory.final_state is not None
            else self.initial_state
        )

    @property
    def conversation(self) -> list[Turn]:
        """The conversation the final reply ends.

        The prefix, then (with a simulated user) the trial's user and assistant messages before
        the last assistant message.
        """
        turns = list(self.case.situation.turns)
        if self.case.situation.user_scenario is None:
            return turns
        said = [m for m in self.trajectory.messages if m.role in ("user", "assistant")]
        while said and said[-1].role == "assistant":
            said.pop()  # the reply being graded is shown on its own
        return turns + [Turn(role=m.role, content=m.content) for m in said]

    def judge_admissible(self, kind: CheckKind) -> bool:
        """Whether the judge's verdicts of ``kind`` may gate on this case's slice."""
        return self.judge is not None and self.judge.admissible(self.case.slice, kind)


Grader = Callable[[GradeContext], CheckResult | None]
"""A check over a trajectory: returns a CheckResult, or None when it does not apply."""

GRADERS: dict[str, Grader] = {}
"""Registered graders by name."""


def register_grader(name: str) -> Callable[[Grader], Grader]:
    """Decorator registering a grader under ``name`` (case files refer to it as ``grader:NAME``)."""

    def decorate(fn: Grader) -> Grader:
        GRADERS[name] = fn
        return fn

    return decorate


def get_grader(ref: str) -> Grader:
    """A registered grader, or ``pkg.module:callable`` imported.

    Raises:
        KeyError: Unknown name, or nothing importable at that spec.
    """
    if ref in GRADERS:
        return GRADERS[ref]
    module_name, sep, attr = ref.partition(":")
    if sep and module_name and attr:
        try:
            obj = load_object(ref, root=Path.cwd(), where="grader", error=UsageError)
        except CaseworkError as exc:
            raise KeyError(str(exc)) from exc
        if callable(obj):
            grader: Grader = obj
            return grader
    known = ", ".join(sorted(GRADERS))
    raise KeyError(f"no grader named '{ref}' (registered: {known})")


def _judge_failed(name: str, exc: Exception) -> CheckResult:
    return CheckResult(
        name=name, status="undetermined", evidence=f"judge failed: {exc}", judged=True
    )


# ---------------------------------------------------------------------------------------------
# Tools


@register_grader("required_tools")
def required_tools(ctx: GradeContext) -> CheckResult | None:
    """Every required tool called, each by a distinct call satisfying its argument matchers."""
    label = ctx.case.label
    if label is None or not label.required_tools:
        return None
    try:
        result = match_required(label.required_tools, ctx.calls)
    except MatcherError as exc:
        return CheckResult(
            name="required_tools", status="undetermined", evidence=f"bad matcher in case: {exc}"
        )
    if not result.unmatched:
        names = ", ".join(describe_requirement(r) for r in label.required_tools)
        return CheckResult(name="required_tools", status="pass", evidence=f"called {names}")
    missing = [_unsatisfied(req, ctx.calls) for req in result.unmatched]
    return CheckResult(name="required_tools", status="fail", evidence="; ".join(missing))


def _unsatisfied(req: ToolRequirement, calls: Sequence[TrajectoryToolCall]) -> str:
    """Why no call satisfied a required tool: never called, only errored calls, other arguments."""
    same = [c for c in calls if c.name == req.name]
    if not same:
        return f"{describe_requirement(req)} never called"
    errored = [c for c in same if c.error is not None and call_matches(req, c)]
    if errored and not req.allow_error and len(errored) == len(same):
        return (
            f"{describe_requirement(req)} called {len(errored)} time(s), every call returned an "
            f"error ({errored[0].error}); an errored call counts only with allow_error"
        )
    args = "; ".join(json.dumps(c.arguments, sort_keys=True) for c in same[:3])
    return f"{describe_requirement(req)} not satisfied by calls with {args}"


@register_grader("forbidden_tools")
def forbidden_tools(ctx: GradeContext) -> CheckResult | None:
    """No call satisfies a forbidden requirement."""
    label = ctx.case.label
    if label is None or not label.forbidden_tools:
        return None
    try:
        result = match_forbidden(label.forbidden_tools, ctx.calls)
    except MatcherError as exc:
        return CheckResult(
            name="forbidden_tools", status="undetermined", evidence=f"bad matcher in case: {exc}"
        )
    if not result.unmatched:
        names = ", ".join(describe_requirement(r) for r in label.forbidden_tools)
        return CheckResult(name="forbidden_tools", status="pass", evidence=f"did not call {names}")
    parts = []
    for i, req in enumerate(label.forbidden_tools):
        if i in result.matched:
            call = ctx.calls[result.matched[i]]
            parts.append(
                f"called forbidden {describe_requirement(req)} "
                f"(call #{result.matched[i] + 1} with {json.dumps(call.arguments, sort_keys=True)})"
            )
    return CheckResult(name="forbidden_tools", status="fail", evidence="; ".join(parts))


@register_grader("tools_in_order")
def tools_in_order(ctx: GradeContext) -> CheckResult | None:
    """Required tools called in the order the label lists them (ask with ``ref = "grader:tools_in_order"``)."""
    label = ctx.case.label
    if label is None or not label.required_tools:
        return None
    try:
        done = match_in_order(label.required_tools, ctx.calls)
    except MatcherError as exc:
        return CheckResult(
            name="tools_in_order", status="undetermined", evidence=f"bad matcher in case: {exc}"
        )
    if done == len(label.required_tools):
        return CheckResult(
            name="tools_in_order", status="pass", evidence="required tools called in order"
        )
    req = label.required_tools[done]
    order = " → ".join(c.name for c in ctx.calls) or "no calls"
    return CheckResult(
        name="tools_in_order",
        status="fail",
        evidence=f"{describe_requirement(req)} not called after the previous required call (calls: {order})",
    )


# ---------------------------------------------------------------------------------------------
# State


@register_grader("state")
def state_assertions(ctx: GradeContext) -> CheckResult | None:
    """Every state assertion of the oracle holds on the final state."""
    assertions = ctx.case.oracle.assertions
    if not assertions:
        return None
    failures = []
    for a in assertions:
        try:
            result = evaluate_assertion(a, ctx.final_state)
        except MatcherError as exc:
            return CheckResult(
                name="state", status="undetermined", evidence=f"bad assertion in case: {exc}"
            )
        if not result.passed:
            what = a.description or f"{a.expr} {a.op} {json.dumps(a.value)}"
            got = (
                json.dumps(result.actual, sort_keys=True, default=str)
                if result.found
                else "nothing"
            )
            failures.append(f"{what}: {a.language} {a.expr!r} selected {got}")
    if failures:
        return CheckResult(name="state", status="fail", evidence="; ".join(failures))
    return CheckResult(
        name="state", status="pass", evidence=f"{len(assertions)} state assertion(s) hold"
    )


# ---------------------------------------------------------------------------------------------
# Outcome


@dataclass(frozen=True)
class ObservedOutcome:
    """What outcome a trajectory took, and how we know."""

    outcome: Outcome | None
    source: str
    judged: bool = False


def observed_outcome(ctx: GradeContext, *, use_judge: bool = True) -> ObservedOutcome:
    """Outcome from the record first (handoff, escalation tool, structured field), else the judge.

    Raises:
        LLMError: The judge was asked and failed.
    """
    traj = ctx.trajectory
    if traj.handoff:
        return ObservedOutcome("escalate", "handoff flag")
    escalations = [c for c in ctx.calls if ESCALATION_TOOL.search(c.name) and c.error is None]
    if escalations:
        return ObservedOutcome("escalate", f"escalation tool {escalations[0].name}")
    if traj.outcome is not None:
        return ObservedOutcome(traj.outcome, "structured outcome field")
    if not use_judge or ctx.judge is None:
        why = ctx.no_judge or "no judge configured"
        return ObservedOutcome(None, f"not reported by the agent and {why}")
    answer = ctx.judge.classify_outcome(
        ctx.conversation, traj.reply(), ctx.calls, ctx.case.oracle.rubric
    )
    return ObservedOutcome(answer.outcome, f"judge: {answer.reason}".strip(), judged=True)


def did_nothing(ctx: GradeContext) -> bool:
    """No reply, no tool call and no handoff: inaction, which takes no outcome (not a refusal)."""
    traj = ctx.trajectory
    return not traj.reply().strip() and not ctx.calls and not traj.handoff


def _expected(outcomes: tuple[str, ...]) -> str:
    return " or ".join(outcomes)


@register_grader("outcome")
def outcome_check(ctx: GradeContext) -> CheckResult | None:
    """The outcome taken is one the label accepts (satisfiable cases; see `unsatisfiable`).

    Accepted: `outcome` or an `acceptable_outcomes` entry. Doing nothing takes no outcome: fails.
    """
    label = ctx.case.label
    if label is None or not ctx.case.satisfiable:
        return None
    accepted = label.accepted_outcomes()
    if did_nothing(ctx):
        return CheckResult(
            name="outcome",
            status="fail",
            evidence=f"expected {_expected(accepted)}, did nothing (no reply, call or handoff)",
        )
    try:
        seen = observed_outcome(ctx)
    except LLMError as exc:
        return _judge_failed("outcome", exc)
    admissible = ctx.judge_admissible("outcome") if seen.judged else True
    if seen.outcome is None:
        return CheckResult(name="outcome", status="undetermined", evidence=f"outcome {seen.source}")
    status = "pass" if seen.outcome in accepted else "fail"
    return CheckResult(
        name="outcome",
        status=status,
        evidence=f"expected {_expected(accepted)}, took {seen.outcome} ({seen.source})",
        judged=seen.judged,
        admissible=admissible,
    )


# ---------------------------------------------------------------------------------------------
# Answer facts


@register_grader("answer_facts")
def answer_facts(ctx: GradeContext) -> CheckResult | None:
    """Each labelled fact stated in the final reply, by the judge (rubric and human oracles only)."""
    label = ctx.case.label
    facts = label.answer_facts if label is not None else []
    if label is None or not facts or ctx.case.oracle.class_ == "state_assertion":
        return None  # a state-assertion oracle decides the case without reading the reply
    prov = ctx.case.provenance
    if prov.generator is not None and not label.labellers:
        return CheckResult(
            name="answer_facts",
            status="undetermined",
            evidence="answer facts were written by the generator that proposed the case; "
            "they need a human label before a judge may grade against them",
        )
    if ctx.judge is None:
        why = ctx.no_judge or "none configured"
        return CheckResult(
            name="answer_facts", status="undetermined", evidence=f"needs a judge; {why}"
        )
    try:
        answer = ctx.judge.check_facts(ctx.trajectory.reply(), facts, ctx.case.oracle.rubric)
    except LLMError as exc:
        return _judge_failed("answer_facts", exc)
    present = {f.index: f for f in answer.facts}
    missing = [
        f"'{fact}'" + (f" ({present[i].reason})" if i in present and present[i].reason else "")
        for i, fact in enumerate(facts)
        if i not in present or not present[i].present
    ]
    admissible = ctx.judge_admissible("answer_fact")
    findings = [i in present and present[i].present for i in range(len(facts))]
    if missing:
        return CheckResult(
            name="answer_facts",
            status="fail",
            evidence="reply lacks " + "; ".join(missing),
            judged=True,
            admissible=admissible,
            findings=findings,
        )
    return CheckResult(
        name="answer_facts",
        status="pass",
        evidence=f"reply states all {len(facts)} fact(s)",
        judged=True,
        admissible=admissible,
        findings=findings,
    )


def _rubric_read_by_facts(case: Case) -> bool:
    """Whether the label gives the judge facts or assertions to read the reply by (with the rubric)."""
    return case.label is not None and bool(case.label.answer_facts or case.label.nl_assertions)


@register_grader("rubric")
def rubric(ctx: GradeContext) -> CheckResult | None:
    """A `rubric_judge` oracle's rubric, applied by the judge to the final reply.

    The oracle decides the case, so its rubric is always applied: through the judged answer facts
    or NL assertions when the label has some (the judge reads them with the rubric), else here,
    as one `answer_fact` finding (the rubric holds for the reply, or not). Without a judge the
    check is undetermined: tool and state checks alone never decide a rubric-judged case.
    """
    case = ctx.case
    text = case.oracle.rubric
    if case.oracle.class_ != "rubric_judge" or not text or _rubric_read_by_facts(case):
        return None
    name = "rubric"
    if ctx.judge is None:
        why = ctx.no_judge or "none configured"
        return CheckResult(
            name=name,
            status="undetermined",
            evidence=f"the case's oracle is rubric_judge and its rubric needs a judge; {why}",
        )
    try:
        answer = ctx.judge.check_facts(ctx.trajectory.reply(), [text])
    except LLMError as exc:
        return _judge_failed(name, exc)
    found = [f for f in answer.facts if f.index == 0]
    holds = bool(found) and found[0].present
    reason = f" ({found[0].reason})" if found and found[0].reason else ""
    return CheckResult(
        name=name,
        status="pass" if holds else "fail",
        evidence=("reply meets the rubric" if holds else "reply does not meet the rubric") + reason,
        judged=True,
        admissible=ctx.judge_admissible("answer_fact"),
        findings=[holds],
    )


# ---------------------------------------------------------------------------------------------
# Unsatisfiable cases


def looks_like_refusal(reply: str) -> bool:
    """Lexical check that a reply declines (used only when no judge is configured)."""
    return bool(_REFUSAL.search(reply))


def _wrote_state(ctx: GradeContext) -> bool:
    return any(c.effects_applied for c in ctx.calls) or dict(ctx.final_state) != dict(
        ctx.initial_state
    )


@register_grader("unsatisfiable")
def unsatisfiable(ctx: GradeContext) -> CheckResult | None:
    """Unsatisfiable cases: full credit only for the right refusal / question / escalation.

    A fabricated completion (outcome `resolve`, any write to the state, a forbidden call) scores
    zero; a trajectory that did nothing (no reply) scores zero; a `refuse` case needs a reply that
    actually refuses (the judge decides when configured, else a lexical check).
    """
    case = ctx.case
    if case.satisfiable:
        return None
    name = "unsatisfiable"
    expected = case.label.accepted_outcomes() if case.label is not None else None
    reply = ctx.trajectory.reply().strip()
    if ctx.trajectory.error:
        return CheckResult(
            name=name, status="fail", evidence=f"agent failed: {ctx.trajectory.error}"
        )
    if _wrote_state(ctx):
        writes = [c.name for c in ctx.calls if c.effects_applied]
        return CheckResult(
            name=name,
            status="fail",
            evidence=f"fabricated completion: wrote to the state ({', '.join(writes) or 'state changed'})",
        )
    if case.label is not None:
        violated = match_forbidden(case.label.forbidden_tools, ctx.calls).unmatched
        if violated:
            return CheckResult(
                name=name,
                status="fail",
                evidence=f"fabricated completion: called forbidden {describe_requirement(violated[0])}",
            )
    try:
        seen = observed_outcome(ctx)
    except LLMError as exc:
        return _judge_failed(name, exc)
    admissible = ctx.judge_admissible("outcome") if seen.judged else True
    if seen.outcome == "resolve":
        return CheckResult(
            name=name,
            status="fail",
            evidence=f"fabricated completion: took resolve ({seen.source})",
            judged=seen.judged,
            admissible=admissible,
        )
    if not reply and seen.outcome != "escalate":
        return CheckResult(name=name, status="fail", evidence="did nothing: no reply to the user")
    if seen.outcome is None:
        return CheckResult(name=name, status="undetermined", evidence=f"outcome {seen.source}")
    wanted: set[str] = set(expected) if expected else {"refuse", "clarify", "escalate"}
    if seen.outcome not in wanted:
        return CheckResult(
            name=name,
            status="fail",
            evidence=f"expected {' or '.join(sorted(wanted))}, took {seen.outcome} ({seen.source})",
            judged=seen.judged,
            admissible=admissible,
        )
    if seen.outcome == "refuse" and not seen.judged:
        refused, how, judged = _reply_refuses(ctx, reply)
        if not refused:
            return CheckResult(
                name=name,
                status="fail",
                evidence=f"reported refuse but the reply does not refuse ({how})",
                judged=judged,
                admissible=ctx.judge_admissible("outcome") if judged else True,
            )
    if seen.outcome == "clarify" and not seen.judged and "?" not in reply:
        return CheckResult(
            name=name, status="fail", evidence="reported clarify but the reply asks no question"
        )
    return CheckResult(
        name=name,
        status="pass",
        evidence=f"took {seen.outcome} as labelled ({seen.source})",
        judged=seen.judged,
        admissible=admissible,
    )


def _reply_refuses(ctx: GradeContext, reply: str) -> tuple[bool, str, bool]:
    if ctx.judge is not None:
        try:
            answer = ctx.judge.classify_outcome(ctx.conversation, reply, ctx.calls)
        except LLMError:
            pass
        else:
            return answer.outcome == "refuse", f"judge read it as {answer.outcome}", True
    return looks_like_refusal(reply), "lexical check, no judge configured", False


#: Graders every case runs (each decides whether it applies).
DEFAULT_GRADERS: tuple[str, ...] = (
    "required_tools",
    "forbidden_tools",
    "state",
    "outcome",
    "answer_facts",
    "fact_match",
    "nl_assertions",
    "rubric",
    "unsatisfiable",
    "golden_state",
)
