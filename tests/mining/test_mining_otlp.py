"""OTLP JSON import: GenAI semantic-convention spans and OpenInference spans."""

from __future__ import annotations

import base64
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casework.errors import InputError, InputErrors
from casework.mining import draft_case, failure_signals
from casework.mining.drafts import DraftOptions
from casework.mining.openinference import conversations_from_openinference
from casework.mining.otel_genai import conversations_from_genai
from casework.mining.otlp import normalise_id, read_spans
from casework.privacy import PseudonymKey, Scrubber
from tests.mining.otlp_examples import (
    CALL_ID,
    FINAL_ANSWER,
    TRACE_ID,
    b64,
    envelope,
    simple_chat,
    span,
    tool_call_spans,
)

OPTIONS = DraftOptions("weather", "dev", datetime(2026, 3, 1, tzinfo=UTC), 90)
SCRUBBER = Scrubber(PseudonymKey(b"otlp-test-key-0123456789abcdefghij", "test"))


def _write(path: Path, *batches: dict[str, Any], lines: bool = False) -> Path:
    if lines:
        path.write_text("".join(json.dumps(b) + "\n" for b in batches), encoding="utf-8")
    else:
        path.write_text(
            json.dumps(batches[0] if len(batches) == 1 else list(batches)), encoding="utf-8"
        )
    return path


def test_ids_in_hex_or_base64() -> None:
    assert normalise_id(TRACE_ID.upper(), 16) == TRACE_ID
    assert normalise_id(b64(TRACE_ID), 16) == TRACE_ID
    assert normalise_id("S/kvNXezTaajzpKdDg5HNg==", 16) == TRACE_ID
    assert normalise_id(b64("00f067aa0ba902b7"), 8) == "00f067aa0ba902b7"
    assert normalise_id("00000000000000000000000000000000", 16) is None
    assert normalise_id(b64("00" * 16), 16) is None  # the invalid all-zero id
    assert normalise_id("xyz", 16) is None


def test_simple_chat_example(tmp_path: Path) -> None:
    spans = read_spans([_write(tmp_path / "t.json", simple_chat())])
    [conv] = conversations_from_genai(spans)
    assert conv.session_id == TRACE_ID and conv.trace_id == TRACE_ID
    assert [(m.role, m.content) for m in conv.messages][:2] == [
        ("system", "You are a helpful bot"),
        ("user", "Tell me a joke about OpenTelemetry"),
    ]
    case = draft_case(conv, SCRUBBER, OPTIONS, failure_signals(conv))
    assert case is not None
    assert [(t.role, t.content) for t in case.situation.turns] == [
        ("user", "Tell me a joke about OpenTelemetry")
    ]
    assert "trace the fun" not in case.model_dump_json()


def test_tool_call_example_split_across_batches_with_base64_ids(tmp_path: Path) -> None:
    first, tool, second = tool_call_spans()
    for s in (tool, second):  # the second batch spells ids in base64
        s["traceId"], s["spanId"] = b64(s["traceId"]), b64(s["spanId"])
    path = _write(tmp_path / "t.jsonl", envelope([first]), envelope([tool, second]), lines=True)
    spans = read_spans([path])
    assert {s.trace_id for s in spans} == {"5b8efff798038103d269b633813fc60c"}
    [conv] = conversations_from_genai(spans)
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "assistant"]
    [call] = conv.tool_calls()
    assert (call.name, call.arguments, call.id, call.result) == (
        "get_weather",
        {"location": "Paris"},
        CALL_ID,
        "rainy, 57°F",
    )
    case = draft_case(conv, SCRUBBER, OPTIONS, failure_signals(conv))
    assert case is not None
    assert [t.role for t in case.situation.turns] == ["user"]
    [fixture] = case.situation.fixtures
    assert (fixture.tool, fixture.match, fixture.response) == (
        "get_weather",
        {"location": "Paris"},
        "rainy, 57°F",
    )
    assert FINAL_ANSWER not in case.model_dump_json()
    assert case.label is None and case.source == "mined"


def test_multi_turn_history_merges_and_keeps_the_prefix(tmp_path: Path) -> None:
    spans = tool_call_spans()
    follow_up = json.loads(json.dumps(spans[2]))
    attrs = {a["key"]: a["value"] for a in follow_up["attributes"]}
    history = json.loads(attrs["gen_ai.input.messages"]["stringValue"])
    history += [
        {"role": "assistant", "parts": [{"type": "text", "content": FINAL_ANSWER}]},
        {
            "role": "user",
            "parts": [{"type": "text", "content": "And tomorrow? Text +44 20 7946 0958"}],
        },
    ]
    attrs["gen_ai.input.messages"] = {"stringValue": json.dumps(history)}
    attrs["gen_ai.output.messages"] = {
        "stringValue": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}]
        )
    }
    follow_up["attributes"] = [{"key": k, "value": v} for k, v in attrs.items()]
    follow_up["spanId"] = "0000000000000004"
    follow_up["startTimeUnixNano"] = str(int(follow_up["startTimeUnixNano"]) + 5000)
    [conv] = conversations_from_genai(
        read_spans([_write(tmp_path / "t.json", envelope([*spans, follow_up]))])
    )
    assert [m.role for m in conv.messages] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "assistant",
    ]
    case = draft_case(conv, SCRUBBER, OPTIONS, [])
    assert case is not None
    turns = case.situation.turns
    assert [t.role for t in turns] == ["user", "assistant", "assistant", "user"]
    assert turns[1].tool_calls[0].result == "rainy, 57°F"
    assert turns[2].content == FINAL_ANSWER  # an earlier answer is part of the prefix
    assert "+44" not in turns[3].content and "phone_" in turns[3].content
    assert "Sunny" not in case.model_dump_json()


def test_conversation_id_groups_traces_and_tool_errors_count(tmp_path: Path) -> None:
    a = tool_call_spans("11111111111111111111111111111111")[:2]
    b = tool_call_spans("22222222222222222222222222222222")[2:]
    for s in (*a, *b):
        s["attributes"].append(
            {"key": "gen_ai.conversation.id", "value": {"stringValue": "conv_1"}}
        )
    a[1] = span(
        "11111111111111111111111111111111",
        "0000000000000002",
        "execute_tool get_weather",
        1000,
        {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "get_weather",
            "gen_ai.tool.call.id": CALL_ID,
            "error.type": "timeout",
            "gen_ai.conversation.id": "conv_1",
        },
        error="weather service timed out",
    )
    events = [
        {
            "name": "gen_ai.evaluation.result",
            "attributes": [
                {"key": "gen_ai.evaluation.name", "value": {"stringValue": "user_feedback"}},
                {"key": "gen_ai.evaluation.score.label", "value": {"stringValue": "thumbs_down"}},
            ],
        }
    ]
    b[0]["events"] = events
    [conv] = conversations_from_genai(read_spans([_write(tmp_path / "t.json", envelope([*a, *b]))]))
    assert conv.session_id == "conv_1" and conv.trace_id == "11111111111111111111111111111111"
    assert failure_signals(conv) == ["thumbs_down", "tool_error"]


def test_not_otlp_and_bad_ids_are_located(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"spans": []}), encoding="utf-8")
    with pytest.raises(InputError) as exc:
        read_spans([path], {path: "x.json"})
    assert (
        str(exc.value)
        == "x.json: resourceSpans: not an OTLP JSON trace or log export (no resourceSpans or resourceLogs list)."
    )
    bad = tool_call_spans()
    bad[0]["traceId"] = "abc"
    bad[1]["spanId"] = "not-an-id!"
    _write(path, envelope(bad))
    with pytest.raises(InputErrors) as many:
        read_spans([path], {path: "x.json"})
    assert str(many.value) == (
        "x.json: resourceSpans.0.scopeSpans.0.spans.0.traceId: must be a hex or base64 id of the right length. Got 'abc'.\n"
        "x.json: resourceSpans.0.scopeSpans.0.spans.1.spanId: must be a hex or base64 id of the right length. Got 'not-an-id!'."
    )


def _oi_span(
    span_id: str, start: int, kind: str, attrs: dict[str, Any], **kw: Any
) -> dict[str, Any]:
    return span(
        "7777777777777777aaaaaaaaaaaaaaaa",
        span_id,
        kind.lower(),
        start,
        {"openinference.span.kind": kind, "session.id": "oi-session-9", **attrs},
        **kw,
    )


def test_openinference_llm_and_tool_spans(tmp_path: Path) -> None:
    llm_in = {
        "llm.input_messages.0.message.role": "system",
        "llm.input_messages.0.message.content": "You are a refunds agent.",
        "llm.input_messages.1.message.role": "user",
        "llm.input_messages.1.message.content": "Refund order ORD-123456, I'm ada@example.org",
    }
    first = _oi_span(
        "0000000000000011",
        0,
        "LLM",
        {
            **llm_in,
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_order",
            "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": json.dumps(
                {"order_id": "ORD-123456"}
            ),
            "user.id": "CUS-55555",
        },
    )
    tool = _oi_span(
        "0000000000000012",
        100,
        "TOOL",
        {
            "tool.name": "get_order",
            "tool_call.id": "call_1",
            "input.value": json.dumps({"order_id": "ORD-123456"}),
            "output.value": json.dumps(
                {"order_id": "ORD-123456", "customer_id": "CUS-55555", "status": "delivered"}
            ),
        },
    )
    second = _oi_span(
        "0000000000000013",
        200,
        "LLM",
        {
            **llm_in,
            "llm.input_messages.2.message.role": "assistant",
            "llm.input_messages.2.message.tool_calls.0.tool_call.id": "call_1",
            "llm.input_messages.2.message.tool_calls.0.tool_call.function.name": "get_order",
            "llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments": json.dumps(
                {"order_id": "ORD-123456"}
            ),
            "llm.input_messages.3.message.role": "tool",
            "llm.input_messages.3.message.tool_call_id": "call_1",
            "llm.input_messages.3.message.content": json.dumps({"status": "delivered"}),
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.contents.0.message_content.type": "text",
            "llm.output_messages.0.message.contents.0.message_content.text": "Refund issued.",
            "annotations.0.annotation.name": "user feedback",
            "annotations.0.annotation.label": "thumbs-down",
        },
    )
    path = _write(tmp_path / "oi.json", envelope([first, tool, second]))
    [conv] = conversations_from_openinference(read_spans([path]))
    assert conv.session_id == "oi-session-9"
    assert [m.role for m in conv.messages] == ["system", "user", "assistant", "tool", "assistant"]
    [call] = conv.tool_calls()
    assert call.result == {
        "order_id": "ORD-123456",
        "customer_id": "CUS-55555",
        "status": "delivered",
    }
    assert failure_signals(conv) == ["thumbs_down"]
    case = draft_case(conv, SCRUBBER, OPTIONS, [])
    assert case is not None
    text = case.model_dump_json()
    assert "CUS-55555" not in text and "ada@example.org" not in text and "Refund issued" not in text
    assert case.situation.fixtures[0].response["customer_id"].startswith("customer_")


def test_openinference_agent_span_fallback(tmp_path: Path) -> None:
    agent = _oi_span(
        "0000000000000021",
        0,
        "AGENT",
        {
            "input.value": json.dumps({"input": "Where is my parcel?"}),
            "output.value": "On its way.",
        },
    )
    [conv] = conversations_from_openinference(
        read_spans([_write(tmp_path / "a.json", envelope([agent]))])
    )
    assert [(m.role, m.content) for m in conv.messages] == [
        ("user", "Where is my parcel?"),
        ("assistant", "On its way."),
    ]


@settings(max_examples=60, deadline=None)
@given(
    size=st.sampled_from([8, 16]), tail=st.binary(min_size=16, max_size=16), urlsafe=st.booleans()
)
def test_base64_ids_that_begin_with_0x(size: int, tail: bytes, urlsafe: bool) -> None:
    # Base64 of bytes D3 1x … begins with the characters "0x"; it is not a hex prefix.
    raw = bytes([0xD3, 0x10 | (tail[0] & 0x0F)]) + tail[1 : size - 1]
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    text = encode(raw).decode()
    assert text.startswith("0x")
    assert normalise_id(text, size) == raw.hex()
    assert normalise_id(text.rstrip("="), size) == raw.hex()


def test_hex_ids_with_a_0x_prefix_still_read() -> None:
    assert normalise_id("0x" + TRACE_ID, 16) == TRACE_ID
    assert normalise_id("0x00f067aa0ba902b7", 8) == "00f067aa0ba902b7"


def test_ids_with_stray_characters_are_not_read_as_base64() -> None:
    # Lenient base64 decoding skipped characters outside the alphabet: "(200) 200-0000" was an id.
    assert normalise_id("(200) 200-0000", 8) is None
    assert normalise_id("S/kv NXez Taaj zpKd Dg5H Ng==", 16) is None
