"""Failure signals of a production conversation: thumbs-down, escalation, retries, abandonment, tool errors.

Entry point: :func:`failure_signals`; `casework mine --failing-only` keeps conversations that have
at least one. :func:`is_negative_feedback` reads the many shapes feedback comes in.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from casework.mining.conversation import RawConversation, maybe_json

__all__ = [
    "ESCALATION_TOOL_RE",
    "RETRY_STORM",
    "SIGNALS",
    "failure_signals",
    "is_negative_feedback",
]

#: Every signal name, in the order they are reported.
SIGNALS = ("thumbs_down", "escalated", "retry", "retry_storm", "abandoned", "tool_error")

#: Repeats (of a tool call or of the user's message) from which retries become a storm.
RETRY_STORM = 3

#: Tool names that hand the conversation to a person.
ESCALATION_TOOL_RE = re.compile(
    r"escalat|hand_?off|handover|transfer_to_(?:human|agent|person)|human_agent|live_agent",
    re.IGNORECASE,
)

_NEGATIVE = frozenset(
    {
        "down", "thumbs_down", "thumbsdown", "thumb_down", "negative", "bad", "dislike", "disliked",
        "unhelpful", "not_helpful", "poor", "wrong", "incorrect", "unsatisfied", "dissatisfied",
        "👎", "-1", "0", "false", "no",
    }
)  # fmt: skip
_FEEDBACK_KEYS = ("thumbs", "rating", "score", "value", "label", "sentiment", "vote", "feedback")


def is_negative_feedback(value: Any) -> bool:
    """Whether a feedback value is negative.

    Strings: `down`, `thumbs_down`, `negative`, `bad`, `unhelpful`, `👎`, `-1`, `0`… (case, spaces
    and dashes ignored); booleans: ``False``; numbers: zero or below; objects: any of their
    `thumbs`, `rating`, `score`, `value`, `label`, `sentiment`, `vote` or `feedback` fields;
    lists: any element. Star ratings (1–5) should be mapped to a label before import.
    """
    if isinstance(value, bool):
        return value is False
    if isinstance(value, int | float):
        return value <= 0
    if isinstance(value, str):
        return re.sub(r"[\s\-]+", "_", value.strip().lower()) in _NEGATIVE
    if isinstance(value, Mapping):
        return any(is_negative_feedback(value[k]) for k in _FEEDBACK_KEYS if k in value)
    if isinstance(value, list | tuple):
        return any(is_negative_feedback(v) for v in value)
    return False


def _retries(conv: RawConversation) -> int:
    """Repeated identical tool calls plus user messages repeating the previous user message."""
    seen: set[str] = set()
    repeats = 0
    for call in conv.tool_calls():
        sig = call.name + "\0" + json.dumps(call.arguments, sort_keys=True, default=str)
        if sig in seen:
            repeats += 1
        seen.add(sig)
    previous: str | None = None
    for m in conv.messages:
        if m.role != "user" or not isinstance(m.content, str):
            continue
        text = " ".join(m.content.split()).casefold()
        if text and text == previous:
            repeats += 1
        previous = text
    return repeats


def _error_result(value: Any) -> bool:
    """A tool result that reports a failure in its own body (most tools answer errors this way)."""
    value = maybe_json(value)
    if not isinstance(value, Mapping):
        return False
    error = value.get("error")
    return bool(error) or value.get("isError") is True or value.get("is_error") is True


def failure_signals(conv: RawConversation) -> list[str]:
    """The failure signals of one conversation, in :data:`SIGNALS` order.

    - `thumbs_down`: negative feedback on the conversation or on any message;
    - `escalated`: the trace says so, or a tool named like an escalation was called;
    - `retry` / `retry_storm`: an identical tool call or user message repeated (at least once /
      at least :data:`RETRY_STORM` times);
    - `abandoned`: the trace says so, or the conversation ends on an unanswered user message;
    - `tool_error`: a tool call failed: the trace marks it, or its result is an error object
      (`{"error": …}`, `{"isError": true}` as MCP writes it), or a recorded fixture holds one.
    """
    found: set[str] = set()
    feedback = [*conv.feedback, *(m.feedback for m in conv.messages if m.feedback is not None)]
    if any(is_negative_feedback(f) for f in feedback):
        found.add("thumbs_down")
    calls = conv.tool_calls()
    if conv.escalated or any(ESCALATION_TOOL_RE.search(c.name) for c in calls):
        found.add("escalated")
    retries = _retries(conv)
    if retries >= 1:
        found.add("retry")
    if retries >= RETRY_STORM:
        found.add("retry_storm")
    spoken = [m for m in conv.messages if m.role != "system"]
    if conv.abandoned or (spoken and spoken[-1].role == "user"):
        found.add("abandoned")
    if (
        any(c.error or _error_result(c.result) for c in calls)
        or any(m.role == "tool" and (m.error or _error_result(m.content)) for m in conv.messages)
        or any(f.get("error") or _error_result(f.get("response")) for f in conv.fixtures)
    ):
        found.add("tool_error")
    return [s for s in SIGNALS if s in found]
