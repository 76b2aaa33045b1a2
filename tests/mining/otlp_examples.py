"""OTLP JSON built from the published OpenTelemetry GenAI semantic-convention examples.

`docs/gen-ai/non-normative/examples-llm-calls.md` of open-telemetry/semantic-conventions: the
"Simple chat completion" and "Tool calls (functions)" examples (content captured on span
attributes), with the trace and span ids the examples use.
"""

from __future__ import annotations

import base64
import json
from typing import Any

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
SPAN_ID = "00f067aa0ba902b7"
CALL_ID = "call_VSPygqKTWdrhaFErNvMV18Yl"

SIMPLE_INPUT = [
    {"role": "system", "parts": [{"type": "text", "content": "You are a helpful bot"}]},
    {"role": "user", "parts": [{"type": "text", "content": "Tell me a joke about OpenTelemetry"}]},
]
SIMPLE_OUTPUT = [
    {
        "role": "assistant",
        "parts": [
            {
                "type": "text",
                "content": " Why did the developer bring OpenTelemetry to the party? Because it always "
                "knows how to trace the fun!",
            }
        ],
        "finish_reason": "stop",
    }
]
TOOL_INPUT_1 = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]
TOOL_OUTPUT_1 = [
    {
        "role": "assistant",
        "parts": [
            {
                "type": "tool_call",
                "id": CALL_ID,
                "name": "get_weather",
                "arguments": {"location": "Paris"},
            }
        ],
        "finish_reason": "tool_call",
    }
]
TOOL_INPUT_2 = [
    *TOOL_INPUT_1,
    {
        "role": "assistant",
        "parts": [
            {
                "type": "tool_call",
                "id": CALL_ID,
                "name": "get_weather",
                "arguments": {"location": "Paris"},
            }
        ],
    },
    {
        "role": "tool",
        "parts": [{"type": "tool_call_response", "id": CALL_ID, "response": "rainy, 57°F"}],
    },
]
FINAL_ANSWER = "The weather in Paris is currently rainy with a temperature of 57°F."
TOOL_OUTPUT_2 = [
    {
        "role": "assistant",
        "parts": [{"type": "text", "content": FINAL_ANSWER}],
        "finish_reason": "stop",
    }
]


def value(v: Any) -> dict[str, Any]:
    """An OTLP AnyValue."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, list):
        return {"arrayValue": {"values": [value(x) for x in v]}}
    return {"stringValue": v}


def span(
    trace_id: str,
    span_id: str,
    name: str,
    start: int,
    attrs: dict[str, Any],
    *,
    parent: str | None = None,
    error: str | None = None,
    events: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """One OTLP JSON span."""
    out: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "kind": 3,
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + start),
        "endTimeUnixNano": str(1_700_000_000_000_000_000 + start + 500),
        "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items()],
        "status": {"code": 2, "message": error} if error else {},
    }
    if parent:
        out["parentSpanId"] = parent
    if events:
        out["events"] = events
    return out


def envelope(spans: list[dict[str, Any]]) -> dict[str, Any]:
    """An ExportTraceServiceRequest holding ``spans``."""
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "weather-bot"}}]
                },
                "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}],
            }
        ]
    }


def b64(hex_id: str) -> str:
    """The protobuf-JSON (base64) spelling of a hex id."""
    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def chat_attrs(
    inputs: list[dict[str, Any]], outputs: list[dict[str, Any]], **extra: Any
) -> dict[str, Any]:
    """Attributes of a `chat gpt-4` span with content captured on attributes."""
    return {
        "gen_ai.provider.name": "openai",
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-4",
        "gen_ai.response.model": "gpt-4-0613",
        "gen_ai.input.messages": json.dumps(inputs),
        "gen_ai.output.messages": json.dumps(outputs),
        **extra,
    }


def simple_chat() -> dict[str, Any]:
    """The "Simple chat completion" example as one batch."""
    return envelope(
        [span(TRACE_ID, SPAN_ID, "chat gpt-4", 0, chat_attrs(SIMPLE_INPUT, SIMPLE_OUTPUT))]
    )


def tool_call_spans(trace_id: str = "5b8efff798038103d269b633813fc60c") -> list[dict[str, Any]]:
    """The "Tool calls (functions)" example: chat span 1, the execute_tool span, chat span 2."""
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.id": CALL_ID,
        "gen_ai.tool.type": "function",
        "gen_ai.tool.call.arguments": json.dumps({"location": "Paris"}),
        "gen_ai.tool.call.result": "rainy, 57°F",
    }
    return [
        span(
            trace_id, "0000000000000001", "chat gpt-4", 0, chat_attrs(TOOL_INPUT_1, TOOL_OUTPUT_1)
        ),
        span(trace_id, "0000000000000002", "execute_tool get_weather", 1000, tool),
        span(
            trace_id,
            "0000000000000003",
            "chat gpt-4",
            2000,
            chat_attrs(TOOL_INPUT_2, TOOL_OUTPUT_2),
        ),
    ]
