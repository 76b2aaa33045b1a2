"""OpenTelemetry GenAI spans (OTLP JSON) as conversations.

Reads `gen_ai.operation.name` `chat` / `generate_content` / `text_completion` / `invoke_agent`
spans (`gen_ai.input.messages`, `gen_ai.output.messages`, on the span or on its
`gen_ai.client.inference.operation.details` event) and `execute_tool` spans
(`gen_ai.tool.name`, `gen_ai.tool.call.id`, `gen_ai.tool.call.arguments` / `.result`).
Entry point: :func:`conversations_from_genai`.
"""

from __future__ import annotations

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

__all__ = [
    "ADK_CONTENT_OFF",
    "CHAT_OPERATIONS",
    "CONTENT_OFF",
    "chat_without_content",
    "content_off",
    "conversations_from_genai",
    "genai_messages",
]

#: Operations whose spans carry the model's input and output messages.
CHAT_OPERATIONS = frozenset({"chat", "generate_content", "text_completion"})
_DETAILS_EVENT = "gen_ai.client.inference.operation.details"

#: Why GenAI model-call spans hold no messages, and the two settings that make them.
CONTENT_OFF = (
    "the GenAI spans carry no message content: the instrumentation records it only when "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is set (span_only, event_only or "
    "span_and_event, together with OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental; "
    "true on instrumentations that follow the older conventions); with event_only, read the log "
    "export together with the trace export"
)


#: Why Google ADK's own spans hold no messages, and the settings ADK reads
#: (google/adk/telemetry/context.py and _schema_version.py in google-adk 2.13).
ADK_CONTENT_OFF = (
    "the ADK spans carry no message content: ADK writes the messages on its spans only when "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is SPAN_ONLY or SPAN_AND_EVENT (true or "
    "EVENT_ONLY put them on log events only: read the log export with the trace export); with "
    "ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN=1 (ADK's legacy spans) set "
    "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental too. "
    "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS governs only the legacy spans' "
    "gcp.vertex.agent.llm_request / llm_response attributes, which casework does not read"
)
#: The instrumentation scope and attribute prefix of ADK's own spans.
_ADK = "gcp.vertex.agent"


def _parts_text(parts: Sequence[Any]) -> str:
    texts = []
    for part in parts:
        if isinstance(part, Mapping) and part.get("type", "text") == "text":
            content = part.get("content", part.get("text"))
            if isinstance(content, str):
                texts.append(content)
    return "\n".join(texts)


def genai_messages(value: Any) -> list[RawMessage]:
    """Messages of a `gen_ai.input.messages` / `gen_ai.output.messages` value.

    Parts: `text` becomes the content, `tool_call` a tool call, `tool_call_response` (with
    `response` or `result`) a tool message answering its `id`. Reasoning and media parts are
    left out. A message with a plain `content` string (older instrumentations) is accepted.
    """
    items = maybe_json(value)
    if isinstance(items, Mapping):
        items = [items]
    if not isinstance(items, list):
        return []
    out: list[RawMessage] = []
    for item in items:
        if not isinstance(item, Mapping):
            continue
        role = normalise_role(item.get("role"))
        if role is None:
            continue
        parts = item.get("parts")
        if not isinstance(parts, list):
            content = item.get("content", "")
            out.append(RawMessage(role=role, content=content if content is not None else ""))
            continue
        calls = tuple(
            RawToolCall(
                name=str(p.get("name", "")),
                arguments=as_arguments(p.get("arguments")),
                id=str(p["id"]).strip() if p.get("id") is not None else None,
            )
            for p in parts
            if isinstance(p, Mapping) and p.get("type") == "tool_call" and p.get("name")
        )
        responses = [
            p for p in parts if isinstance(p, Mapping) and p.get("type") == "tool_call_response"
        ]
        for p in responses:
            out.append(
                RawMessage(
                    role="tool",
                    content=maybe_json(p.get("response", p.get("result"))),
                    tool_call_id=str(p["id"]).strip() if p.get("id") is not None else None,
                )
            )
        text = _parts_text(parts)
        if role == "tool":
            if not responses:
                out.append(RawMessage(role="tool", content=text))
            continue
        if responses and not text and not calls:
            continue
        out.append(
            RawMessage(role=role, content=text, tool_calls=calls if role == "assistant" else ())
        )
    return out


def chat_without_content(span: Span) -> bool:
    """A GenAI model call (by its `gen_ai.operation.name`) recorded without its messages.

    The span name alone does not make a GenAI span: another convention's span named `chat`
    (OpenInference, say) is not a GenAI call with capture off.
    """
    operation = span.attributes.get("gen_ai.operation.name")  # any JSON value in a hostile file
    return (
        isinstance(operation, str)
        and operation in CHAT_OPERATIONS
        and not (_attr(span, "gen_ai.input.messages") or _attr(span, "gen_ai.output.messages"))
    )


def _adk_span(span: Span) -> bool:
    return span.attributes.get("gen_ai.system") == _ADK or any(
        k.startswith(f"{_ADK}.") for k in span.attributes
    )


def content_off(spans: Sequence[Span]) -> str | None:
    """Why the spans' GenAI model calls hold no messages, naming the settings that record them.

    ``None`` when no model call lacks its messages. Traces holding Google ADK's own spans (its
    ``gcp.vertex.agent.*`` attributes) get ADK's settings (:data:`ADK_CONTENT_OFF`), others the
    OpenTelemetry GenAI instrumentations' (:data:`CONTENT_OFF`).
    """
    if not any(chat_without_content(s) for s in spans):
        return None
    return ADK_CONTENT_OFF if any(_adk_span(s) for s in spans) else CONTENT_OFF


def _attr(span: Span, key: str) -> Any:
    if key in span.attributes:
        return span.attributes[key]
    for event in span.events:
        if key in event.attributes and event.name in (_DETAILS_EVENT, ""):
            return event.attributes[key]
    for event in span.events:
        if key in event.attributes:
            return event.attributes[key]
    return None


def _operation(span: Span) -> str:
    op = span.attributes.get("gen_ai.operation.name")
    if isinstance(op, str):
        return op
    return span.name.split(" ", 1)[0]


def _histories(spans: Sequence[Span], operations: frozenset[str]) -> list[list[RawMessage]]:
    out = []
    for span in spans:
        if _operation(span) not in operations:
            continue
        messages = genai_messages(_attr(span, "gen_ai.input.messages"))
        messages += genai_messages(_attr(span, "gen_ai.output.messages"))
        if messages:
            out.append(messages)
    return out


def _tool_span(span: Span) -> RawToolCall | None:
    if _operation(span) != "execute_tool":
        return None
    name = (
        span.attributes.get("gen_ai.tool.name") or span.name.removeprefix("execute_tool ").strip()
    )
    if not name:
        return None
    call_id = span.attributes.get("gen_ai.tool.call.id")
    error = span.attributes.get("error.type")
    return RawToolCall(
        name=str(name),
        arguments=as_arguments(span.attributes.get("gen_ai.tool.call.arguments")),
        id=str(call_id) if call_id else None,
        result=maybe_json(span.attributes.get("gen_ai.tool.call.result")),
        error=(span.status_message or str(error or "error")) if span.error or error else None,
    )


def conversation_from_group(group: SpanGroup) -> RawConversation | None:
    """One span group as a conversation (``None`` when no span carries messages)."""
    spans = list(group.spans)
    histories = _histories(spans, CHAT_OPERATIONS) or _histories(spans, frozenset({"invoke_agent"}))
    if not histories:
        return None
    tools = [t for t in (_tool_span(s) for s in spans) if t is not None]
    return conversation_of(group, histories, tools)


def conversations_from_genai(spans: Sequence[Span]) -> list[RawConversation]:
    """Conversations of OpenTelemetry GenAI spans.

    Spans are grouped by `gen_ai.conversation.id` (or `session.id`), else by trace. A model call
    made outside any span of the application's own (stock SDK instrumentation) is a trace of its
    own whose input repeats the history so far: such a sessionless conversation that another one
    continues (its messages are the start of the other's) is folded into it, so one conversation
    is not drafted once per model call.
    """
    keys = ("gen_ai.conversation.id", "session.id")
    out: list[RawConversation] = []
    sessionless: list[bool] = []
    for group in group_spans(spans, keys):
        conv = conversation_from_group(group)
        if conv is not None:
            out.append(conv)
            sessionless.append(group.session_id == group.trace_id)
    return _fold_prefixes(out, sessionless)


def _fold_prefixes(
    conversations: list[RawConversation], sessionless: list[bool]
) -> list[RawConversation]:
    """Drop each sessionless conversation whose messages another sessionless one starts with.

    Linear in the messages read: every proper prefix of every candidate is hashed once (a chain
    of hashes), and a candidate whose whole chain is some other's proper prefix is folded.
    """
    chains: list[list[int]] = []
    for c, free in zip(conversations, sessionless, strict=True):
        chain: list[int] = []
        if free:
            at = 0
            for m in c.messages:
                at = hash((at, _message_identity(m)))
                chain.append(at)
        chains.append(chain)
    proper = {h for chain in chains for h in chain[:-1]}
    return [
        c
        for c, free, chain in zip(conversations, sessionless, chains, strict=True)
        if not (free and chain and chain[-1] in proper)
    ]


def _message_identity(m: RawMessage) -> tuple[str, str, tuple[tuple[str, str], ...]]:
    calls = tuple((c.name, repr(sorted(c.arguments.items()))) for c in m.tool_calls)
    return (m.role, repr(m.content), calls)
