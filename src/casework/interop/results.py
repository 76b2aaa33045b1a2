"""Other eval tools' per-trial results, format-neutral: what every results reader produces.

:class:`ExternalResults` holds :class:`ExternalTrial` values; the readers live with their
formats (``generic``, ``inspect``, ``tau2``) and share what is here: located problems
(:class:`ResultProblem`), scores (:func:`score_value`) and chat messages (:func:`read_messages`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, get_args

from casework.decoding import BadJSON, parse_json
from casework.errors import Problem
from casework.interop._paths import MISSING
from casework.runner.user_sim import UserSimRecord
from casework.schema import Message, TrajectoryToolCall

ResultFormat = Literal["generic", "inspect", "tau", "tau2"]
#: The per-trial result formats `import run` reads.
RESULT_FORMATS: tuple[ResultFormat, ...] = get_args(ResultFormat)

_TEXT_VALUES = {"c": 1.0, "correct": 1.0, "i": 0.0, "incorrect": 0.0, "p": 0.5, "partial": 0.5}
_TEXT_VALUES |= {"n": 0.0, "noanswer": 0.0, "true": 1.0, "yes": 1.0, "false": 0.0, "no": 0.0}


@dataclass(frozen=True)
class ExternalTrial:
    """One trial another tool ran and scored.

    Attributes:
        task_id: The tool's task or sample id (a case id when the run is pinned to a dataset).
        trial: Trial number, 0-based (Inspect epochs are 1-based and shifted).
        passed: The tool's pass/fail, when it gave one; else ``reward`` decides with a threshold.
        reward: The tool's score in [0, 1] (or any number, compared with the threshold).
        messages: The trial's messages, when the file holds them.
        tool_calls: Every tool call of the trial, in order.
        reply: The agent's last reply.
        explanation: The tool's reason for the score, if any.
        where: Where the trial was read (``file:line`` or ``file#/pointer``).
        metadata: Other fields kept with the trial.
        started_at: When the trial started, when the file says.
        duration_s: How long it took, in seconds, when the file says.
        input_tokens: Prompt tokens the trial used, when the file says.
        output_tokens: Completion tokens the trial used, when the file says.
        cost_usd: What the agent's model calls cost, in US dollars, when the file says.
        seed: Seed of the trial, when the file says.
        user_sim: What the simulated user did, when the file says (τ²'s simulations).
    """

    task_id: str
    trial: int
    passed: bool | None
    reward: float | None
    messages: tuple[Message, ...] = ()
    tool_calls: tuple[TrajectoryToolCall, ...] = ()
    reply: str = ""
    explanation: str = ""
    where: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    started_at: datetime | None = None
    duration_s: float | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    seed: int | None = None
    user_sim: UserSimRecord | None = None


@dataclass(frozen=True)
class ExternalResults:
    """Every trial of one results file, and what the file says about the run.

    Attributes:
        format: The format read.
        trials: The trials, in file order.
        dataset_hash: A dataset content hash the file names, if any.
        agent: The agent or model the file names, if any.
    """

    format: ResultFormat
    trials: list[ExternalTrial]
    dataset_hash: str | None = None
    agent: str | None = None


class ResultProblem(Exception):
    """What is wrong in a results file: a JSON pointer (or ``--map`` path), a message, the value."""

    def __init__(self, pointer: str, message: str, got: Any = MISSING) -> None:
        super().__init__(message)
        self.pointer = pointer
        self.message = message
        self.got = got


def problem_at(shown: str, line: int | None, exc: ResultProblem) -> Problem:
    """``exc`` as a located problem of file ``shown`` (at ``line`` when the file has lines)."""
    has = exc.got is not MISSING
    return Problem(shown, line, exc.pointer or None, exc.message, exc.got if has else None, has)


def task_id_of(value: Any, where: str) -> str:
    """A task id as text (a non-empty string or an integer).

    Raises:
        ResultProblem: Anything else.
    """
    if isinstance(value, bool) or not isinstance(value, (str, int)) or value == "":
        raise ResultProblem(where, "task id must be a non-empty string or an integer", value)
    return str(value)


def whole_number(value: Any, where: str, minimum: int = 0) -> int:
    """An integer of at least ``minimum`` (a trial number, an epoch).

    Raises:
        ResultProblem: Anything else (booleans included).
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ResultProblem(where, f"must be an integer of at least {minimum}", value)
    return value


def score_value(value: Any, where: str) -> float:
    """A score as a number: numbers as they are; Inspect's C/I/P/N letters; yes/no; booleans."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        try:
            number = float(value)
        except OverflowError:  # an integer past a float's range
            number = float("inf")
        if number != number or number in (float("inf"), float("-inf")):
            raise ResultProblem(where, "score must be a finite number", value)
        return number
    if isinstance(value, str) and value.strip().lower() in _TEXT_VALUES:
        return _TEXT_VALUES[value.strip().lower()]
    raise ResultProblem(
        where, "score must be a number, a boolean or one of C, I, P, N, yes, no", value
    )


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, str):
        try:
            raw = parse_json(raw)
        except BadJSON:
            return {"_raw": raw}
    return dict(raw) if isinstance(raw, Mapping) else ({} if raw is None else {"_value": raw})


def content_text(value: Any) -> str:
    """Text of a message content: a string, or the text parts of a list of parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [p.get("text") for p in value if isinstance(p, Mapping)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return json.dumps(value, ensure_ascii=False, default=str)


def tool_call(raw: Any, where: str) -> tuple[TrajectoryToolCall, str | None]:
    """An OpenAI-style (``function.name``/``arguments``) or flat (``name``/``arguments``) call."""
    if not isinstance(raw, Mapping):
        raise ResultProblem(where, "tool call must be an object", raw)
    fn: Mapping[str, Any] = raw["function"] if isinstance(raw.get("function"), Mapping) else raw
    name = fn.get("name")
    if name is None and isinstance(raw.get("function"), str):
        name = raw["function"]  # Inspect: `function` is the tool's name
    if not isinstance(name, str) or not name:
        raise ResultProblem(f"{where}/function/name", "tool call needs a name", name)
    args = fn.get("arguments", fn.get("args", raw.get("arguments")))
    call_id = raw.get("id")
    return (
        TrajectoryToolCall(name=name, arguments=_arguments(args)),
        call_id if isinstance(call_id, str) else None,
    )


_ROLES: dict[str, Literal["user", "assistant", "system", "tool"]] = {
    "user": "user",
    "assistant": "assistant",
    "system": "system",
    "tool": "tool",
}
_ROLES |= {"human": "user", "model": "assistant", "ai": "assistant", "function": "tool"}


def read_messages(raw: Any, where: str) -> tuple[list[Message], list[TrajectoryToolCall]]:
    """Messages of a trial (OpenAI chat shape) and every tool call, results paired by call id."""
    if not isinstance(raw, list):
        raise ResultProblem(where, "messages must be a list", raw)
    messages: list[Message] = []
    calls: list[TrajectoryToolCall] = []
    by_id: dict[str, int] = {}
    for i, m in enumerate(raw):
        here = f"{where}/{i}"
        if not isinstance(m, Mapping):
            raise ResultProblem(here, "message must be an object", m)
        role = _ROLES.get(str(m.get("role", "")).lower())
        if role is None:
            raise ResultProblem(
                f"{here}/role", "role must be user, assistant, system or tool", m.get("role")
            )
        own: list[TrajectoryToolCall] = []
        raw_calls = m.get("tool_calls") or []
        if not isinstance(raw_calls, list):
            raise ResultProblem(f"{here}/tool_calls", "must be a list", raw_calls)
        for j, c in enumerate(raw_calls):
            call, call_id = tool_call(c, f"{here}/tool_calls/{j}")
            own.append(call)
            if call_id is not None:
                by_id[call_id] = len(calls)
            calls.append(call)
        content = content_text(m.get("content"))
        result_of = m.get("tool_call_id")
        if role == "tool" and isinstance(result_of, str) and result_of in by_id:
            k = by_id[result_of]
            error = m.get("error")
            update: dict[str, Any] = {"result": _maybe_json(content)}
            if error:
                update = {
                    "error": content_text(
                        error.get("message") if isinstance(error, Mapping) else error
                    )
                }
            calls[k] = calls[k].model_copy(update=update)
        messages.append(Message(role=role, content=content, tool_calls=own))
    return messages, calls


def _maybe_json(text: str) -> Any:
    try:
        return parse_json(text)
    except BadJSON:
        return text


def last_reply(messages: Sequence[Message]) -> str:
    """The last assistant message with text (``""`` when there is none)."""
    for m in reversed(messages):
        if m.role == "assistant" and m.content.strip():
            return m.content
    return ""
