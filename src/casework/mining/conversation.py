"""The importers' common output: one production conversation, raw, held in memory only.

Every importer (generic JSONL/JSON, OTLP GenAI spans, OpenInference spans) yields
:class:`RawConversation` values; :func:`casework.mining.draft_case` scrubs one into a draft case.
Nothing here is ever written to disk.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from casework.decoding import BadJSON, parse_json

__all__ = [
    "RawConversation",
    "RawMessage",
    "RawToolCall",
    "Role",
    "as_arguments",
    "fold_tool_messages",
    "maybe_json",
    "normalise_role",
]

Role = Literal["user", "assistant", "system", "tool"]

_ROLE_SYNONYMS: dict[str, Role] = {
    "user": "user",
    "human": "user",
    "customer": "user",
    "client": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "bot": "assistant",
    "agent": "assistant",
    "model": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}


def normalise_role(value: Any) -> Role | None:
    """The role a trace's speaker name stands for (`human` -> `user`, `model` -> `assistant`...)."""
    if not isinstance(value, str):
        return None
    return _ROLE_SYNONYMS.get(value.strip().lower())


def maybe_json(value: Any) -> Any:
    """Parse a string that holds a JSON object or array; anything else is returned as it is."""
    if isinstance(value, str):
        text = value.strip()
        if text[:1] in ("{", "[") and text[-1:] in ("}", "]"):
            try:
                return parse_json(text)
            except BadJSON:
                return value
    return value


def as_arguments(value: Any) -> dict[str, Any]:
    """Tool-call arguments as a JSON object (a JSON string is parsed; a scalar is wrapped)."""
    parsed = maybe_json(value)
    if parsed is None or parsed == "":
        return {}
    if isinstance(parsed, dict):
        return parsed
    return {"input": parsed}


@dataclass(frozen=True)
class RawToolCall:
    """A tool call as the trace recorded it.

    Attributes:
        name: Tool name.
        arguments: Arguments (a JSON object).
        id: Call id, pairing the call with its result.
        result: What the tool returned (JSON), if recorded.
        error: Error message, if the tool failed.
    """

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str | None = None
    result: Any = None
    error: str | None = None


@dataclass(frozen=True)
class RawMessage:
    """One message of a production conversation.

    Attributes:
        role: `user`, `assistant`, `system` or `tool`.
        content: Text (for a tool message: its result, possibly JSON).
        tool_calls: Calls an assistant message made.
        tool_call_id: For a tool message: the call it answers.
        name: For a tool message: the tool's name.
        error: For a tool message: the error the tool returned.
        feedback: Feedback the user gave on this message (thumbs, rating), if any.
    """

    role: Role
    content: Any = ""
    tool_calls: tuple[RawToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    error: str | None = None
    feedback: Any = None


@dataclass(frozen=True)
class RawConversation:
    """One production conversation, as an importer read it (raw: memory only).

    Attributes:
        session_id: Production session (conversation) id.
        messages: Messages in order.
        origin: Where it was read (`traces.jsonl:3`), for messages.
        trace_id: Trace id, when the source has one.
        feedback: Conversation-level feedback values (thumbs, ratings, labels).
        escalated: The trace says the conversation was handed to a person.
        abandoned: The trace says the customer left without a resolution.
        fixtures: Tool fixtures recorded with the conversation (`tool`, `match`, `response`, `error`).
        state: Data state recorded with the conversation.
        metadata: Session metadata (customer, account...): the source of known values.
        slice: Slice named by the trace (or a `--map slice=...`), if any.
        started_at: When the conversation started, if known.
    """

    session_id: str
    messages: tuple[RawMessage, ...]
    origin: str
    trace_id: str | None = None
    feedback: tuple[Any, ...] = ()
    escalated: bool = False
    abandoned: bool = False
    fixtures: tuple[dict[str, Any], ...] = ()
    state: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    slice: str | None = None
    started_at: datetime | None = None

    def tool_calls(self) -> list[RawToolCall]:
        """Every tool call, in order, with the result or error of its tool message filled in."""
        return fold_tool_messages(self.messages)[0]


def fold_tool_messages(messages: Sequence[RawMessage]) -> tuple[list[RawToolCall], set[int]]:
    """Pair tool messages with the calls they answer.

    A tool message answers the call with its `tool_call_id`, or else (without an id) the oldest
    unanswered call of the same tool, or the oldest unanswered call at all.

    Returns:
        Every tool call in order, with result and error filled in, and the indices of the tool
        messages that were folded into a call.
    """
    calls: list[RawToolCall] = []
    folded: set[int] = set()
    pending: list[int] = []
    for position, m in enumerate(messages):
        for c in m.tool_calls:
            pending.append(len(calls))
            calls.append(c)
        if m.role != "tool" or not pending:
            continue
        if m.tool_call_id:
            index = next((i for i in pending if calls[i].id == m.tool_call_id), None)
        else:
            index = next((i for i in pending if calls[i].name == m.name), pending[0])
        if index is None:
            continue
        pending.remove(index)
        folded.add(position)
        call = calls[index]
        calls[index] = RawToolCall(
            call.name,
            call.arguments,
            call.id,
            call.result if call.result is not None else maybe_json(m.content),
            call.error or m.error,
        )
    return calls, folded
