"""OpenInference spans (OTLP JSON) as conversations.

Reads `openinference.span.kind` LLM spans (`llm.input_messages.N.message.*`,
`llm.output_messages.N.message.*`), TOOL spans (`tool.name`, `input.value`, `output.value`) and
AGENT / CHAIN spans (`input.value` / `output.value` when no LLM span carries messages), grouped by
`session.id`. Entry point: :func:`conversations_from_openinference`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from casework.mining.conversation import (
    RawConversation,
    RawMessage,
    RawToolCall,
    as_arguments,
    maybe_json,
    normalise_role,
)
from casework.mining.otlp import Span
from casework.mining.spantrees import SpanGroup, conversation_of, group_spans

__all__ = ["SPAN_KIND", "conversations_from_openinference", "openinference_messages"]

#: The attribute naming an OpenInference span's kind.
SPAN_KIND = "openinference.span.kind"

_INDEXED = re.compile(r"^(\d{1,9})\.(.+)\Z", re.DOTALL)
_ANNOTATION = re.compile(
    r"^(?:(?:session|trace)\.)?(?:annotations|evaluations)\.(\d{1,9})\.(?:annotation|evaluation)\.(\w+)\Z"
)


def _unflatten(attrs: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """`prefix.0.a.b` style attributes as a list of nested objects (index order)."""
    items: dict[int, dict[str, Any]] = {}
    for key, value in attrs.items():
        if not key.startswith(prefix + "."):
            continue
        m = _INDEXED.match(key[len(prefix) + 1 :])
        if m is None:
            continue
        items.setdefault(int(m.group(1)), {})[m.group(2)] = value
    return [items[i] for i in sorted(items)]


def _message(flat: Mapping[str, Any]) -> RawMessage | None:
    role = normalise_role(flat.get("message.role"))
    if role is None:
        return None
    content = flat.get("message.content")
    if content is None:
        parts = _unflatten(flat, "message.contents")
        content = "\n".join(
            str(p["message_content.text"])
            for p in parts
            if p.get("message_content.type", "text") == "text" and p.get("message_content.text")
        )
    calls = tuple(
        RawToolCall(
            name=str(c.get("tool_call.function.name", "")),
            arguments=as_arguments(c.get("tool_call.function.arguments")),
            id=str(c["tool_call.id"]) if c.get("tool_call.id") else None,
        )
        for c in _unflatten(flat, "message.tool_calls")
        if c.get("tool_call.function.name")
    )
    call_id = flat.get("message.tool_call_id")
    name = flat.get("message.name")
    return RawMessage(
        role=role,
        content=maybe_json(content) if role == "tool" else (content or ""),
        tool_calls=calls if role == "assistant" else (),
        tool_call_id=str(call_id) if call_id else None,
        name=str(name) if name else None,
    )


def openinference_messages(attrs: Mapping[str, Any], direction: str) -> list[RawMessage]:
    """Messages of `llm.input_messages` (``direction="input"``) or `llm.output_messages`."""
    out = []
    for flat in _unflatten(attrs, f"llm.{direction}_messages"):
        message = _message(flat)
        if message is not None:
            out.append(message)
    return out


def _kind(span: Span) -> str:
    return str(span.attributes.get(SPAN_KIND, "")).upper()


def _tool(span: Span) -> RawToolCall | None:
    if _kind(span) != "TOOL":
        return None
    name = span.attributes.get("tool.name") or span.name
    call_id = span.attributes.get("tool_call.id", span.attributes.get("tool.id"))
    error = span.attributes.get("exception.message")
    for event in span.events:
        error = error or event.attributes.get("exception.message")
    return RawToolCall(
        name=str(name),
        arguments=as_arguments(span.attributes.get("input.value")),
        id=str(call_id) if call_id else None,
        result=maybe_json(span.attributes.get("output.value")),
        error=(span.status_message or str(error or "error")) if span.error else None,
    )


def _agent_history(span: Span) -> list[RawMessage]:
    """User input and final output of an AGENT or CHAIN span, when no LLM span has messages."""
    out = []
    question = maybe_json(span.attributes.get("input.value"))
    if isinstance(question, Mapping):
        question = question.get("input", question.get("query", question.get("question")))
    if isinstance(question, str) and question:
        out.append(RawMessage(role="user", content=question))
    answer = maybe_json(span.attributes.get("output.value"))
    if isinstance(answer, Mapping):
        answer = answer.get("output", answer.get("answer"))
    if isinstance(answer, str) and answer:
        out.append(RawMessage(role="assistant", content=answer))
    return out


def _annotation_feedback(spans: Sequence[Span]) -> list[Any]:
    out: list[Any] = []
    for span in spans:
        notes: dict[tuple[str, int], dict[str, Any]] = {}
        for key, value in span.attributes.items():
            m = _ANNOTATION.match(key)
            if m:
                notes.setdefault((key.split(".")[0], int(m.group(1))), {})[m.group(2)] = value
        for note in notes.values():
            name = str(note.get("name", "")).lower()
            if "feedback" in name or "thumb" in name or "user" in name:
                out.extend(v for v in (note.get("label"), note.get("score")) if v is not None)
    return out


def conversation_from_group(group: SpanGroup) -> RawConversation | None:
    """One span group as a conversation (``None`` when no span carries messages)."""
    spans = list(group.spans)
    histories = [
        openinference_messages(s.attributes, "input")
        + openinference_messages(s.attributes, "output")
        for s in spans
        if _kind(s) == "LLM"
    ]
    histories = [h for h in histories if h]
    if not histories:
        histories = [
            h
            for h in (
                _agent_history(s)
                for s in spans
                if _kind(s) in ("AGENT", "CHAIN") and s.parent_id is None
            )
            if h
        ]
    if not histories:
        return None
    tools = [t for t in (_tool(s) for s in spans) if t is not None]
    return conversation_of(group, histories, tools, _annotation_feedback(spans))


def conversations_from_openinference(spans: Sequence[Span]) -> list[RawConversation]:
    """Conversations of OpenInference spans, grouped by `session.id`, else by trace."""
    out = []
    for group in group_spans(spans, ("session.id", "gen_ai.conversation.id")):
        conv = conversation_from_group(group)
        if conv is not None:
            out.append(conv)
    return out
