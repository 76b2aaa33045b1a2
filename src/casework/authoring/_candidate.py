"""One generator reply: parsed, checked against the rejection rules, ranked to its oracle.

The generator returns a :class:`Candidate` as JSON. :func:`screen` turns a reply into a
:class:`~casework.schema.Case` or a :class:`Rejection` with its reason, checking everything that
needs one reply only (the near-duplicate rule needs every reply of the run: see `_generate`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from casework.schema import (
    Case,
    Generator,
    Label,
    Oracle,
    Outcome,
    Provenance,
    Situation,
    StateAssertion,
    ToolRequirement,
    UnsatisfiableKind,
)
from casework.shapes._names import one_sentence

#: The fixed satisfiable axes a case is generated along.
SATISFIABLE_AXES = (
    "missing-or-malformed-input",
    "two-defensible-readings",
    "mid-task-goal-change",
    "stale-tool-state",
    "adversarial-retrieved-content",
)
#: The five unsatisfiable kinds, as axes (`permission-absent` is `permission_absent` in the schema).
UNSATISFIABLE_AXES = (
    "permission-absent",
    "referent-absent",
    "contradictory",
    "outside-policy",
    "underdetermined",
)
#: Every axis, in the order reports list them.
AXES = SATISFIABLE_AXES + UNSATISFIABLE_AXES

#: The rejection reasons, each counted by `casework shapes author` and its report.
REASONS = (
    "malformed_json",
    "schema_invalid",
    "no_oracle",
    "answer_key",
    "state_without_assertion",
    "not_one_sentence",
    "undeclared_tool",
    "near_duplicate",
)


def unsatisfiable_kind(axis: str) -> UnsatisfiableKind | None:
    """The schema's unsatisfiable kind of an axis, or ``None`` for a satisfiable axis."""
    if axis not in UNSATISFIABLE_AXES:
        return None
    kind: UnsatisfiableKind = axis.replace("-", "_")  # type: ignore[assignment]
    return kind


class _Reply(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProposedOracle(_Reply):
    """The oracle a generator proposes: state assertions, a rubric, or human-only.

    `answer_key` is here only so that a reply carrying one is recognised and rejected: the
    generator may propose how to judge, never what the right answer is.
    """

    state_assertions: list[StateAssertion] = Field(default_factory=list)
    """Checks over the final state (drafted by the generator, reviewed by a person)."""
    rubric: str | None = None
    """What a calibrated judge should look for, when the outcome is not a state."""
    human_only: bool = False
    """Neither a state nor a rubric can decide: a person grades."""
    answer_key: Any = None
    """Never allowed (a reply with one is rejected)."""


class Candidate(_Reply):
    """What the generator returns for one case."""

    situation: dict[str, Any]
    """The situation, in the case schema's `Situation` format."""
    outcome: str
    """The correct outcome, in one sentence."""
    expected: Outcome
    """What the agent should do: `resolve`, `clarify`, `refuse` or `escalate`."""
    outcome_is_state: bool = False
    """Whether the correct outcome is a change of the data state (then a state assertion is due)."""
    required_tools: list[ToolRequirement] = Field(default_factory=list)
    """Calls the correct trajectory makes."""
    forbidden_tools: list[ToolRequirement] = Field(default_factory=list)
    """Calls it must not make."""
    oracle: ProposedOracle | None = None
    """The proposed oracle."""


@dataclass(frozen=True)
class Rejection:
    """A candidate the rules refused.

    Attributes:
        index: Its number in the run (1-based).
        reason: One of :data:`REASONS`.
        detail: What was wrong, for people.
    """

    index: int
    reason: str
    detail: str


@dataclass(frozen=True)
class Brief:
    """What one candidate is generated from (and what its provenance records)."""

    shape_set: str
    shape: str
    source_trace: str
    axis: str
    dataset: str
    slice: str
    model: str
    prompt_version: str
    family: str | None
    frozen: bool


def _parse(text: str) -> Candidate | str:
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        return f"the reply is not JSON ({exc})"
    try:
        return Candidate.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "reply"
        return f"the reply is not a candidate: {where}: {first['msg']}"


def rank_oracle(candidate: Candidate) -> Oracle | tuple[str, str]:
    """The strongest oracle the candidate supports, or (reason, detail) when it supports none.

    State assertions whenever the outcome is a state; else a rubric for a calibrated judge;
    else human-only. An answer key is never accepted, with or without a rubric.
    """
    proposed = candidate.oracle
    if proposed is None:
        return "no_oracle", "the reply proposes no oracle"
    if proposed.answer_key is not None:
        both = " beside a rubric" if proposed.rubric else ""
        return (
            "answer_key",
            f"the generator wrote an answer key{both}; it may propose a rubric only",
        )
    if proposed.state_assertions:
        return Oracle.model_validate(
            {"class": "state_assertion", "assertions": proposed.state_assertions}
        )
    if candidate.outcome_is_state:
        return "state_without_assertion", "the outcome is a state but no state assertion decides it"
    if proposed.rubric and proposed.rubric.strip():
        return Oracle.model_validate({"class": "rubric_judge", "rubric": proposed.rubric.strip()})
    if proposed.human_only:
        return Oracle.model_validate({"class": "human"})
    return "no_oracle", "the proposed oracle has no assertion, no rubric and is not human-only"


def _tools_named(situation: Situation, candidate: Candidate) -> set[str]:
    names = set(situation.tools or ())
    names |= {f.tool for f in situation.fixtures}
    names |= {c.name for t in situation.turns for c in t.tool_calls}
    names |= {t.name for t in (*candidate.required_tools, *candidate.forbidden_tools)}
    return names


def _case_id(brief: Brief, situation: Situation) -> str:
    digest = orjson.dumps(situation.model_dump(mode="json"), option=orjson.OPT_SORT_KEYS)
    return f"auth-{brief.shape}-{brief.axis}-{hashlib.sha256(digest).hexdigest()[:10]}"


def _build(brief: Brief, candidate: Candidate, situation: Situation, oracle: Oracle) -> Case:
    kind = unsatisfiable_kind(brief.axis)
    provenance = Provenance(
        shape=f"{brief.shape_set}/{brief.shape}",
        source_trace=brief.source_trace,
        generator=Generator(
            model=brief.model, prompt_version=brief.prompt_version, family=brief.family
        ),
        axis=brief.axis,
        unsatisfiable_kind=kind,
    )
    label = Label(
        outcome=candidate.expected,
        required_tools=candidate.required_tools,
        forbidden_tools=candidate.forbidden_tools,
    )
    return Case(
        id=_case_id(brief, situation),
        slice=brief.slice,
        split="dev",
        frozen=brief.frozen,
        source="synthetic",
        satisfiable=kind is None,
        situation=situation,
        label=label,
        oracle=oracle,
        provenance=provenance,
    )


def screen(
    index: int, text: str, brief: Brief, declared: Collection[str]
) -> tuple[Case, str] | Rejection:
    """A reply as a case with its one-sentence outcome, or the first rule it breaks.

    Rules, in order: JSON of a :class:`Candidate`; a valid situation (and case); an oracle, never
    an answer key, a state assertion when the outcome is a state; an outcome of one sentence;
    only tools the agent declares.
    """
    parsed = _parse(text)
    if isinstance(parsed, str):
        return Rejection(index, "malformed_json", parsed)
    try:
        situation = Situation.model_validate(parsed.situation)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        return Rejection(index, "schema_invalid", f"situation.{where}: {first['msg']}")
    oracle = rank_oracle(parsed)
    if isinstance(oracle, tuple):
        return Rejection(index, *oracle)
    sentence = one_sentence(parsed.outcome)
    if sentence is None:
        return Rejection(
            index, "not_one_sentence", f"the outcome is not one sentence: {parsed.outcome!r}"
        )
    unknown = sorted(_tools_named(situation, parsed) - set(declared))
    if unknown:
        return Rejection(
            index, "undeclared_tool", f"tools the agent does not declare: {', '.join(unknown)}"
        )
    try:
        case = _build(brief, parsed, situation, oracle)
    except ValidationError as exc:
        first = exc.errors()[0]
        return Rejection(index, "schema_invalid", f"case: {first['msg']}")
    return case, sentence
