"""The LLM judge: decides what graders cannot decide from the record (outcome, answer facts).

It speaks to any :class:`casework.llm.base.LLMClient` through ``structured(...)``. A judge is
*admissible* for a slice only when its calibration against human labels reached the configured
agreement; verdicts it gives elsewhere are kept but marked inadmissible and never gate.
Entry point: :class:`Judge`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from casework.llm import LLMClient, Message
from casework.schema import Outcome, Situation, ToolCall, TrajectoryToolCall, Turn

__all__ = [
    "FactFinding",
    "FactsAnswer",
    "Judge",
    "JudgeCalibration",
    "OutcomeAnswer",
]

_OUTCOMES_HELP = (
    "resolve: the assistant completed (or claims to have completed) what the user asked; "
    "clarify: the assistant asks the user a question it needs answered before acting; "
    "refuse: the assistant declines to do what was asked; "
    "escalate: the assistant hands the conversation to a person or another team."
)


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class OutcomeAnswer(_Answer):
    """The judge's reading of which outcome a reply (or a correct reply) takes."""

    outcome: Outcome
    """`resolve`, `clarify`, `refuse` or `escalate`."""
    reason: str = ""
    """One sentence of justification, quoting the reply where possible."""


class FactFinding(_Answer):
    """Whether one expected fact is stated in the reply."""

    index: int
    """0-based index of the fact in the list the judge was given."""
    present: bool
    """True when the reply states the fact (paraphrase allowed, contradiction not)."""
    reason: str = ""
    """One sentence of justification."""


class FactsAnswer(_Answer):
    """The judge's findings for every expected fact."""

    facts: list[FactFinding] = Field(default_factory=list)
    """One finding per fact, by index."""


@dataclass(frozen=True)
class JudgeCalibration:
    """How well a judge agreed with people on one slice (from `casework judge calibrate`)."""

    slice: str
    judge_model: str
    kappa: float | None
    accuracy: float
    n: int
    threshold: float

    @property
    def admissible(self) -> bool:
        """True when kappa reached the threshold."""
        return self.kappa is not None and self.kappa >= self.threshold


def _call_text(call: ToolCall, results: bool) -> str:
    text = f"{call.name}({json.dumps(call.arguments, sort_keys=True)})"
    if results and call.error:
        return f"{text} => error: {call.error}"
    if results and call.result is not None:
        return f"{text} => {_json(call.result)}"
    return text


def _conversation(turns: Sequence[Turn], *, results: bool = False) -> str:
    """``ROLE: content`` lines; ``results`` adds what each earlier tool call returned."""
    lines = []
    for turn in turns:
        text = turn.content
        if turn.tool_calls:
            calls = ", ".join(_call_text(c, results) for c in turn.tool_calls)
            text = f"{text} [tool calls: {calls}]".strip()
        lines.append(f"{turn.role.upper()}: {text}")
    return "\n".join(lines)


def _calls(calls: Sequence[TrajectoryToolCall]) -> str:
    if not calls:
        return "(no tool calls)"
    out = []
    for c in calls:
        status = (
            f"error: {c.error}"
            if c.error
            else f"result: {json.dumps(c.result, sort_keys=True, default=str)[:300]}"
        )
        out.append(f"- {c.name}({json.dumps(c.arguments, sort_keys=True)}) -> {status}")
    return "\n".join(out)


@dataclass
class Judge:
    """An LLM judge with its per-slice calibration.

    Args:
        client: Any LLM client (OpenAI-compatible, litellm, scripted).
        calibration: Calibration per slice; a slice without one is inadmissible.
        temperature: Sampling temperature of judge requests (0 for repeatable verdicts).
    """

    client: LLMClient
    calibration: Mapping[str, JudgeCalibration] = field(default_factory=dict)
    temperature: float = 0.0

    @property
    def model(self) -> str:
        """Model id of the judge."""
        return self.client.model

    def admissible(self, slice_name: str) -> bool:
        """Whether this judge's verdicts may gate on a slice."""
        cal = self.calibration.get(slice_name)
        return cal is not None and cal.judge_model == self.model and cal.admissible

    def _ask(self, system: str, user: str, model: type[Any]) -> Any:
        messages = [Message("system", system), Message("user", user)]
        return self.client.structured(messages, model, temperature=self.temperature)

    def classify_outcome(
        self,
        turns: Sequence[Turn],
        reply: str,
        calls: Sequence[TrajectoryToolCall],
        rubric: str | None = None,
    ) -> OutcomeAnswer:
        """Which outcome did the assistant's final reply take?"""
        system = (
            "You grade a customer-service assistant. Classify the outcome of its final reply. "
            + _OUTCOMES_HELP
            + " Judge what the reply does, not what it should have done."
        )
        user = (
            f"Conversation before the assistant acted:\n{_conversation(turns)}\n\n"
            f"Tool calls the assistant made:\n{_calls(calls)}\n\n"
            f"Assistant's final reply:\n{reply or '(empty)'}\n"
        )
        if rubric:
            user += f"\nRubric:\n{rubric}\n"
        answer: OutcomeAnswer = self._ask(system, user, OutcomeAnswer)
        return answer

    def check_facts(
        self, reply: str, facts: Sequence[str], rubric: str | None = None
    ) -> FactsAnswer:
        """Which expected facts does the reply state?"""
        system = (
            "You check whether a customer-service reply states each expected fact. A paraphrase "
            "counts; a vague, hedged or contradicting statement does not. Answer for every fact by index."
        )
        listed = "\n".join(f"{i}. {fact}" for i, fact in enumerate(facts))
        user = f"Reply:\n{reply or '(empty)'}\n\nExpected facts:\n{listed}\n"
        if rubric:
            user += f"\nRubric:\n{rubric}\n"
        answer: FactsAnswer = self._ask(system, user, FactsAnswer)
        return answer

    def label_outcome(self, view: Mapping[str, Any], guideline: str = "") -> OutcomeAnswer:
        """Which outcome should a correct assistant take here? (what labellers decide; calibration).

        Args:
            view: The labeller's blind view of the case
                (:func:`casework.grading.calibration.labeller_view`): ``situation`` (goal, turns,
                fixtures, state, injected, as in ``cases.jsonl``), ``tools`` (declared names and
                descriptions), ``slice`` and ``guideline_version``. Nothing else is shown.
            guideline: The slice's guideline text.
        """
        system = (
            "You label cases for a customer-service assistant's evaluation set, as the human "
            "labellers do: from the situation alone (the conversation so far, what each tool "
            "returns in this situation, the data state and any injected adversity) and the "
            "labelling guideline. Decide which outcome a correct assistant takes next. "
            + _OUTCOMES_HELP
            + " A tool fixture answers the calls whose arguments contain its `match`; the most "
            "specific one wins, so a fixture without `match` answers every other call. `effects` "
            "are the changes a call makes to the data state."
        )
        answer: OutcomeAnswer = self._ask(system, _labeller_prompt(view, guideline), OutcomeAnswer)
        return answer


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _labeller_prompt(view: Mapping[str, Any], guideline: str) -> str:
    """The situation as a labeller's sheet shows it, as text: one section per part."""
    situation = Situation.model_validate(view["situation"])
    parts: list[str] = []
    if guideline.strip():
        parts.append(f"Labelling guideline:\n{guideline.strip()}")
    about = [f"slice {view['slice']}"] if view.get("slice") else []
    if view.get("guideline_version"):
        about.append(f"guideline {view['guideline_version']}")
    if about:
        parts.append(f"Case:\n{', '.join(about)}")
    parts.append(f"Goal:\n{situation.goal}")
    parts.append(f"Conversation so far:\n{_conversation(situation.turns, results=True)}")
    fixtures = [
        _json(f.model_dump(mode="json", by_alias=True, exclude_defaults=True))
        for f in situation.fixtures
    ]
    parts.append("Tool fixtures:\n" + ("\n".join(fixtures) or "(none)"))
    parts.append("Data state:\n" + (_json(situation.state) if situation.state else "(empty)"))
    injected = [_json(i.model_dump(mode="json", exclude_defaults=True)) for i in situation.injected]
    parts.append("Injected adversity:\n" + ("\n".join(injected) or "(none)"))
    tools = [f"- {t['name']}: {t.get('description', '')}".rstrip() for t in view.get("tools", [])]
    parts.append("Declared tools:\n" + ("\n".join(tools) or "(none)"))
    return "\n\n".join(parts) + "\n"
