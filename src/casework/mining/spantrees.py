"""From spans to conversations: grouping spans by session, merging chat histories, span metadata.

Shared by the OpenTelemetry GenAI and OpenInference importers. Entry points: :func:`group_spans`,
:func:`merge_histories`, :func:`span_metadata`, :func:`flag_values`.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from casework.mining.conversation import RawConversation, RawMessage, RawToolCall, maybe_json
from casework.mining.otlp import Span

__all__ = [
    "SpanGroup",
    "any_true",
    "conversation_of",
    "feedback_values",
    "fill_tool_calls",
    "flag_values",
    "group_spans",
    "merge_histories",
    "span_metadata",
]


@dataclass(frozen=True)
class SpanGroup:
    """The spans of one conversation (possibly several traces), sorted by start time."""

    session_id: str
    trace_id: str
    spans: tuple[Span, ...]
    origin: str


def group_spans(spans: Iterable[Span], session_keys: Sequence[str]) -> list[SpanGroup]:
    """Group spans into conversations.

    A trace belongs to the session named by the first of ``session_keys`` found on any of its
    spans (or its resource); traces naming the same session are one conversation, and a trace
    naming none is a conversation of its own (its id is the session id).
    """
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        by_trace[span.trace_id].append(span)
    groups: dict[str, list[Span]] = defaultdict(list)
    first_trace: dict[str, str] = {}
    for trace_id, members in by_trace.items():
        session = None
        for span in sorted(members, key=lambda s: s.start_ns):
            for key in session_keys:
                value = span.attributes.get(key, span.resource.get(key))
                if value not in (None, ""):
                    session = str(value)
                    break
            if session is not None:
                break
        key = session if session is not None else trace_id
        groups[key].extend(members)
        first_trace.setdefault(key, trace_id)
    out = []
    for key, members in groups.items():
        members.sort(key=lambda s: (s.start_ns, s.end_ns))
        out.append(SpanGroup(key, first_trace[key], tuple(members), members[0].origin))
    out.sort(key=lambda g: (g.spans[0].start_ns, g.session_id))
    return out


def _identity(m: RawMessage) -> str:
    calls = [
        (c.name, c.id, json.dumps(c.arguments, sort_keys=True, default=str)) for c in m.tool_calls
    ]
    return json.dumps([m.role, m.content, calls, m.tool_call_id], sort_keys=True, default=str)


def merge_histories(histories: Iterable[Sequence[RawMessage]]) -> list[RawMessage]:
    """Merge the message lists of successive model calls into one conversation.

    Each call's input normally repeats the history so far; the merged conversation grows by
    what a call adds after the longest common prefix. Messages a call repeats out of order (a
    truncated history) are not added twice.
    """
    merged: list[RawMessage] = []
    seen: set[str] = set()
    for history in histories:
        ids = [_identity(m) for m in history]
        common = 0
        while common < min(len(ids), len(merged)) and ids[common] == _identity(merged[common]):
            common += 1
        extends = common == len(merged)
        for m, ident in zip(history[common:], ids[common:], strict=True):
            if extends or ident not in seen:
                merged.append(m)
                seen.add(ident)
        seen.update(ids)
    return merged


_CONTENT_KEYS = (
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.definitions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "gen_ai.prompt",
    "gen_ai.completion",
    "input.value",
    "output.value",
)


_MAX_KEY_PARTS = 16


def span_metadata(spans: Iterable[Span]) -> dict[str, Any]:
    """Session metadata from span and resource attributes, dotted keys nested (`user.email`).

    Message contents are left out (they are scrubbed as messages); the result feeds the search
    for known customer values only, so unrelated attributes do no harm.
    """
    out: dict[str, Any] = {}
    for span in spans:
        for source in (span.resource, span.attributes):
            for key, value in source.items():
                if key in _CONTENT_KEYS or key.startswith(
                    ("llm.input_messages", "llm.output_messages")
                ):
                    continue
                node = out
                # Bounded: a hostile key of thousands of dots must not nest as deep.
                parts = key.split(".", _MAX_KEY_PARTS - 1)
                for part in parts[:-1]:
                    child = node.get(part)
                    if not isinstance(child, dict):
                        child = {}
                        node[part] = child
                    node = child
                parsed = maybe_json(value) if key.endswith("metadata") else value
                node[parts[-1]] = parsed
    return out


def flag_values(spans: Iterable[Span], name: str) -> list[Any]:
    """Values of every attribute named ``name`` or ending in ``.name`` (span and event attributes)."""
    out: list[Any] = []
    for span in spans:
        for attrs in (span.attributes, *(e.attributes for e in span.events)):
            out.extend(v for k, v in attrs.items() if k == name or k.endswith("." + name))
    return out


def any_true(values: Iterable[Any]) -> bool:
    """Whether any value is ``True`` or a string meaning it (`true`, `yes`, `1`)."""
    return any(
        v is True or (isinstance(v, str) and v.strip().lower() in ("true", "yes", "1"))
        for v in values
    )


def feedback_values(spans: Iterable[Span]) -> list[Any]:
    """Feedback recorded on spans: `feedback` attributes, feedback or evaluation events.

    Evaluation events (`gen_ai.evaluation.result`) count when their name mentions feedback,
    thumbs or the user; their score label (or value) is the feedback.
    """
    out: list[Any] = flag_values(spans, "feedback")
    for span in spans:
        for event in span.events:
            attrs: Mapping[str, Any] = event.attributes
            name = str(attrs.get("gen_ai.evaluation.name", event.name)).lower()
            if "feedback" in name or "thumb" in name or "user" in name:
                label = attrs.get("gen_ai.evaluation.score.label", attrs.get("label"))
                score = attrs.get("gen_ai.evaluation.score.value", attrs.get("score"))
                out.extend(v for v in (label, score) if v is not None)
    return out


def fill_tool_calls(
    messages: Sequence[RawMessage], tools: Sequence[RawToolCall]
) -> list[RawMessage]:
    """Complete the calls chat spans recorded with the arguments, result and error of tool spans.

    A call is matched to a tool span by its call id; a call without one is kept as it is.
    """
    by_id = {t.id: t for t in tools if t.id}
    out = []
    for m in messages:
        if not m.tool_calls:
            out.append(m)
            continue
        calls = []
        for c in m.tool_calls:
            t = by_id.get(c.id) if c.id else None
            calls.append(
                c
                if t is None
                else RawToolCall(c.name, c.arguments or t.arguments, c.id, t.result, t.error)
            )
        out.append(
            RawMessage(m.role, m.content, tuple(calls), m.tool_call_id, m.name, m.error, m.feedback)
        )
    return out


def conversation_of(
    group: SpanGroup,
    histories: Sequence[Sequence[RawMessage]],
    tools: Sequence[RawToolCall],
    extra_feedback: Sequence[Any] = (),
) -> RawConversation:
    """One span group's conversation: merged histories, filled calls, fixtures, signals, time.

    Args:
        group: The spans of one session (or trace).
        histories: The message histories the format's chat spans carry (at least one).
        tools: The tool calls the format's tool spans recorded.
        extra_feedback: Feedback the format keeps outside span attributes (annotations).
    """
    spans = list(group.spans)
    start = min(s.start_ns for s in spans)
    return RawConversation(
        session_id=group.session_id,
        messages=tuple(fill_tool_calls(merge_histories(histories), tools)),
        origin=group.origin,
        trace_id=group.trace_id,
        feedback=tuple([*feedback_values(spans), *extra_feedback]),
        escalated=any_true(flag_values(spans, "escalated")),
        abandoned=any_true(flag_values(spans, "abandoned")),
        fixtures=tuple(
            {"tool": t.name, "match": t.arguments, "response": t.result, "error": t.error}
            for t in tools
            if t.result is not None or t.error
        ),
        metadata=span_metadata(spans),
        started_at=datetime.fromtimestamp(start / 1e9, UTC) if start else None,
    )
