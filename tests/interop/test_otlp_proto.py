"""OTLP JSON both ways through opentelemetry-proto, the OTLP project's own generated classes.

casework's writer (the verdict export's `ExportLogsServiceRequest`) must parse strictly with
`google.protobuf.json_format.Parse`, and casework's reader must accept what
`json_format.MessageToJson` writes for requests built with the proto classes: lowerCamelCase keys
by default, the proto field names with `preserving_proto_field_name`, enums by name, int64 as
strings, and ids as base64 (protobuf's bytes mapping) or hex (the OTLP/JSON rule, which
replaces base64 for `traceId`, `spanId` and `parentSpanId`).
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import (
    AnyValue,
    ArrayValue,
    InstrumentationScope,
    KeyValue,
    KeyValueList,
)
from opentelemetry.proto.logs.v1.logs_pb2 import LogRecord, ResourceLogs, ScopeLogs
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, Status

from casework.interop.evaluations import trace_ids
from casework.interop.otel._logs import EVALUATION_EVENT, otlp_logs
from casework.mining.otel_genai import conversations_from_genai
from casework.mining.otlp import read_spans
from tests.interop.sample_run import sample_run

TRACE = bytes.fromhex("4bf92f3577b34da6a3ce929d0e0e4736")
ROOT = bytes.fromhex("00f067aa0ba902b7")
CHAT = bytes.fromhex("53995c3f42cd8ad8")
TOOL = bytes.fromhex("b7ad6b7169203331")
ID_FIELDS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")


def _ids_hex_to_base64(value: Any) -> Any:
    """The OTLP/JSON ids (hex) as protobuf's JSON mapping spells bytes (base64)."""
    if isinstance(value, dict):
        return {
            k: base64.b64encode(bytes.fromhex(v)).decode()
            if k in ID_FIELDS and isinstance(v, str)
            else _ids_hex_to_base64(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_ids_hex_to_base64(v) for v in value]
    return value


def _ids_base64_to_hex(value: Any) -> Any:
    """protobuf's base64 ids as the OTLP/JSON rule spells them (hex)."""
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex() if k in ID_FIELDS and isinstance(v, str) else
            _ids_base64_to_hex(v)
            for k, v in value.items()
        }  # fmt: skip
    if isinstance(value, list):
        return [_ids_base64_to_hex(v) for v in value]
    return value


def test_the_verdict_export_parses_strictly_as_an_export_logs_service_request() -> None:
    run = sample_run()
    payload = otlp_logs(run)
    # Parse rejects unknown fields and wrongly typed values (ignore_unknown_fields=False).
    request = json_format.Parse(
        json.dumps(_ids_hex_to_base64(payload)),
        ExportLogsServiceRequest(),
        ignore_unknown_fields=False,
    )
    [resource_logs] = request.resource_logs
    [scope_logs] = resource_logs.scope_logs
    assert scope_logs.scope.name == "casework"
    records = scope_logs.log_records
    assert len(records) == 15
    by_trial = {
        (t.case_id, t.trial): trace_ids(run.header.run_id, t)
        for t in sorted(run.trials, key=lambda t: (t.case_id, t.trial))
    }
    seen: set[tuple[str, int]] = set()
    for record in records:
        assert record.event_name == EVALUATION_EVENT
        assert record.severity_number == 9  # SEVERITY_NUMBER_INFO
        assert record.time_unix_nano > 1_600_000_000 * 10**9
        attrs = {kv.key: kv.value for kv in record.attributes}
        key = (attrs["casework.case_id"].string_value, attrs["casework.trial"].int_value)
        seen.add(key)
        trace, span = by_trial[key]
        # The hex ids carry exactly the 16 and 8 bytes the trial's trace and span have.
        assert (record.trace_id.hex(), record.span_id.hex()) == (trace, span)
        label = attrs["gen_ai.evaluation.score.label"].string_value
        if label == "undetermined":
            assert "gen_ai.evaluation.score.value" not in attrs
        else:
            score = attrs["gen_ai.evaluation.score.value"].double_value
            assert score == {"pass": 1.0, "fail": 0.0}[label]
        assert attrs["casework.judged"].WhichOneof("value") == "bool_value"
    assert seen == set(by_trial)
    # Nothing casework wrote is lost or re-typed by the round trip through the proto classes.
    back = json_format.MessageToDict(request)
    assert _ids_base64_to_hex(back) == _without_defaults(payload)


def _without_defaults(payload: dict[str, Any]) -> Any:
    """The payload as protobuf writes it back: enum numbers by name, nothing else changed."""
    out = json.loads(json.dumps(payload))
    for rl in out["resourceLogs"]:
        for sl in rl["scopeLogs"]:
            for rec in sl["logRecords"]:
                rec["severityNumber"] = "SEVERITY_NUMBER_INFO"
    return out


def _kv(key: str, value: Any) -> KeyValue:
    return KeyValue(key=key, value=_any(value))


def _any(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    if isinstance(value, list):
        return AnyValue(array_value=ArrayValue(values=[_any(v) for v in value]))
    if isinstance(value, dict):
        return AnyValue(kvlist_value=KeyValueList(values=[_kv(k, v) for k, v in value.items()]))
    return AnyValue(string_value=str(value))


MESSAGES_IN = [
    {"role": "user", "parts": [{"type": "text", "content": "Where is order ORD-7?"}]},
]
MESSAGES_OUT = [
    {
        "role": "assistant",
        "parts": [
            {
                "type": "tool_call",
                "id": "call-1",
                "name": "get_order",
                "arguments": {"order_id": "ORD-7"},
            }
        ],
    }
]


def _trace_request() -> ExportTraceServiceRequest:
    """A GenAI agent trace built with the proto classes: an agent, a model call, a tool call."""
    t0 = 1_764_000_000 * 10**9
    agent = Span(
        trace_id=TRACE,
        span_id=ROOT,
        name="invoke_agent orders",
        kind=Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=t0,
        end_time_unix_nano=t0 + 9_000_000,
        attributes=[
            _kv("gen_ai.operation.name", "invoke_agent"),
            _kv("gen_ai.conversation.id", "conv-1"),
        ],
    )
    chat = Span(
        trace_id=TRACE,
        span_id=CHAT,
        parent_span_id=ROOT,
        name="chat stub-model",
        kind=Span.SPAN_KIND_CLIENT,
        start_time_unix_nano=t0 + 1_000_000,
        end_time_unix_nano=t0 + 4_000_000,
        attributes=[
            _kv("gen_ai.operation.name", "chat"),
            _kv("gen_ai.conversation.id", "conv-1"),
            _kv("gen_ai.request.model", "stub-model"),
            _kv("gen_ai.usage.input_tokens", 2**40),
            _kv("gen_ai.request.temperature", 0.25),
            _kv("gen_ai.response.finish_reasons", ["tool_calls"]),
            _kv("casework.test.map", {"stream": False, "n": 1}),
            _kv("gen_ai.input.messages", json.dumps(MESSAGES_IN)),
            _kv("gen_ai.output.messages", json.dumps(MESSAGES_OUT)),
        ],
        events=[Span.Event(time_unix_nano=t0 + 2_000_000, name="checkpoint")],
    )
    tool = Span(
        trace_id=TRACE,
        span_id=TOOL,
        parent_span_id=ROOT,
        name="execute_tool get_order",
        start_time_unix_nano=t0 + 5_000_000,
        end_time_unix_nano=t0 + 6_000_000,
        attributes=[
            _kv("gen_ai.operation.name", "execute_tool"),
            _kv("gen_ai.conversation.id", "conv-1"),
            _kv("gen_ai.tool.name", "get_order"),
            _kv("gen_ai.tool.call.id", "call-1"),
            _kv("gen_ai.tool.call.arguments", json.dumps({"order_id": "ORD-7"})),
        ],
        status=Status(code=Status.STATUS_CODE_ERROR, message="order not found"),
    )
    return ExportTraceServiceRequest(
        resource_spans=[
            ResourceSpans(
                resource=Resource(attributes=[_kv("service.name", "orders-agent")]),
                scope_spans=[
                    ScopeSpans(
                        scope=InstrumentationScope(name="stub", version="1"),
                        spans=[agent, chat, tool],
                    )
                ],
            )
        ]
    )


SERIALISED = {
    "MessageToJson": lambda m: json_format.MessageToJson(m),
    "proto field names": lambda m: json_format.MessageToJson(m, preserving_proto_field_name=True),
    "enums as integers": lambda m: json_format.MessageToJson(m, use_integers_for_enums=True),
    "hex ids (OTLP/JSON)": lambda m: json.dumps(
        _ids_base64_to_hex(json.loads(json_format.MessageToJson(m)))
    ),
}


@pytest.mark.parametrize("how", list(SERIALISED))
def test_the_reader_accepts_traces_the_protobuf_library_serialises(
    how: str, tmp_path: Path
) -> None:
    text = SERIALISED[how](_trace_request())
    path = tmp_path / "traces.json"
    path.write_text(text, encoding="utf-8")
    spans = {s.span_id: s for s in read_spans([path])}
    assert set(spans) == {ROOT.hex(), CHAT.hex(), TOOL.hex()}
    chat, tool = spans[CHAT.hex()], spans[TOOL.hex()]
    assert {s.trace_id for s in spans.values()} == {TRACE.hex()}
    assert (chat.parent_id, spans[ROOT.hex()].parent_id) == (ROOT.hex(), None)
    assert chat.start_ns == 1_764_000_000 * 10**9 + 1_000_000
    assert chat.end_ns == 1_764_000_000 * 10**9 + 4_000_000
    assert chat.attributes["gen_ai.usage.input_tokens"] == 2**40
    assert chat.attributes["gen_ai.request.temperature"] == 0.25
    assert chat.attributes["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert chat.attributes["casework.test.map"] == {"stream": False, "n": 1}
    assert [(e.name, e.time_ns) for e in chat.events] == [
        ("checkpoint", 1_764_000_000 * 10**9 + 2_000_000)
    ]
    assert chat.resource == {"service.name": "orders-agent"}
    assert (tool.error, tool.status_message) == (True, "order not found")
    assert not chat.error
    [conversation] = conversations_from_genai(list(spans.values()))
    said = [(m.role, m.content) for m in conversation.messages]
    assert said[0] == ("user", "Where is order ORD-7?")
    [call] = [c for m in conversation.messages for c in m.tool_calls]
    assert (call.name, call.arguments) == ("get_order", {"order_id": "ORD-7"})


def _log_request() -> ExportLogsServiceRequest:
    """GenAI content as a log event (the conventions' event_only mode), built with the proto classes."""
    return ExportLogsServiceRequest(
        resource_logs=[
            ResourceLogs(
                resource=Resource(attributes=[_kv("service.name", "orders-agent")]),
                scope_logs=[
                    ScopeLogs(
                        log_records=[
                            LogRecord(
                                time_unix_nano=1_764_000_000 * 10**9 + 3_000_000,
                                event_name="gen_ai.client.inference.operation.details",
                                trace_id=TRACE,
                                span_id=CHAT,
                                attributes=[
                                    _kv("gen_ai.operation.name", "chat"),
                                    _kv("gen_ai.input.messages", MESSAGES_IN),
                                    _kv("gen_ai.output.messages", MESSAGES_OUT),
                                ],
                            )
                        ]
                    )
                ],
            )
        ]
    )


@pytest.mark.parametrize("how", list(SERIALISED))
def test_the_reader_accepts_log_events_the_protobuf_library_serialises(
    how: str, tmp_path: Path
) -> None:
    path = tmp_path / "logs.json"
    path.write_text(SERIALISED[how](_log_request()), encoding="utf-8")
    [span] = read_spans([path])
    assert (span.trace_id, span.span_id) == (TRACE.hex(), CHAT.hex())
    [event] = span.events
    assert event.name == "gen_ai.client.inference.operation.details"
    assert event.time_ns == 1_764_000_000 * 10**9 + 3_000_000
    [conversation] = conversations_from_genai([span])
    said = [(m.role, m.content) for m in conversation.messages]
    assert said == [("user", "Where is order ORD-7?"), ("assistant", "")]
    [call] = conversation.messages[1].tool_calls
    assert (call.name, call.arguments, call.id) == ("get_order", {"order_id": "ORD-7"}, "call-1")
