"""Failure signals per conversation."""

from __future__ import annotations

from typing import Any

import pytest

from casework.mining import RawConversation, failure_signals
from casework.mining.conversation import RawMessage, RawToolCall
from casework.mining.signals import is_negative_feedback


def _conv(*messages: RawMessage, **kw: Any) -> RawConversation:
    return RawConversation("s", messages, "t:1", **kw)


USER = RawMessage("user", "hi")
BOT = RawMessage("assistant", "hello")


@pytest.mark.parametrize(
    ("value", "negative"),
    [
        ("thumbs_down", True), ("Thumbs-Down", True), ("👎", True), ("negative", True), (-1, True),
        (0, True), (False, True), ({"rating": "bad"}, True), ([1, "down"], True),
        ("thumbs_up", False), (1, False), (True, False), ({"comment": "bad"}, False), (None, False),
    ],
)  # fmt: skip
def test_negative_feedback_shapes(value: Any, negative: bool) -> None:
    assert is_negative_feedback(value) is negative


def test_a_good_conversation_has_no_signal() -> None:
    assert failure_signals(_conv(USER, BOT, feedback=("up",))) == []


def test_thumbs_down_on_a_message() -> None:
    assert failure_signals(_conv(USER, RawMessage("assistant", "x", feedback="down"))) == [
        "thumbs_down"
    ]


def test_escalation_by_flag_or_by_tool() -> None:
    assert failure_signals(_conv(USER, BOT, escalated=True)) == ["escalated"]
    call = RawToolCall("escalate_to_human", {"reason": "x"})
    assert failure_signals(_conv(USER, RawMessage("assistant", "", (call,)), BOT)) == ["escalated"]


def test_retries_and_storms() -> None:
    call = RawToolCall("get_order", {"order_id": "1"})
    two = [RawMessage("assistant", "", (call,)), RawMessage("assistant", "", (call,))]
    assert failure_signals(_conv(USER, *two, BOT)) == ["retry"]
    four = two + two
    assert failure_signals(_conv(USER, *four, BOT)) == ["retry", "retry_storm"]
    same_user = [USER, BOT, RawMessage("user", "  HI "), BOT]
    assert failure_signals(_conv(*same_user)) == ["retry"]


def test_abandoned_when_the_customer_gets_no_reply() -> None:
    assert failure_signals(_conv(USER, BOT, RawMessage("user", "hello?"))) == ["abandoned"]
    assert failure_signals(_conv(USER, BOT, abandoned=True)) == ["abandoned"]
    assert failure_signals(_conv(USER, BOT, RawMessage("system", "session closed"))) == []


def test_tool_errors_from_calls_tool_messages_or_fixtures() -> None:
    failing = RawToolCall("get_order", {}, "c1")
    msgs = (
        USER,
        RawMessage("assistant", "", (failing,)),
        RawMessage("tool", "x", tool_call_id="c1", error="timeout"),
        BOT,
    )
    assert failure_signals(_conv(*msgs)) == ["tool_error"]
    assert failure_signals(_conv(USER, BOT, fixtures=({"tool": "t", "error": "503"},))) == [
        "tool_error"
    ]
