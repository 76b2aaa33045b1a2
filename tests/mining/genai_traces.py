"""Write what OpenTelemetry's own OpenAI instrumentation records, as OTLP JSON, for the miner's tests.

Run as a script in a fresh process (the instrumentation reads its settings from the environment
when it is set up): ``python -m tests.mining.genai_traces OUT_PREFIX``. The OpenAI SDK, with
`opentelemetry-instrumentation-openai-v2` on it, talks to a stand-in chat server on loopback in
two calls: the model asks for `get_order`, the tool answers ``{"error": "order not found"}``, the
model replies. Nothing here imports casework: the spans and log records are the instrumentation's
own, encoded by OpenTelemetry's own OTLP encoders, written as the collector's file exporter
writes OTLP/JSON (ids in hex). ``OUT_PREFIX.spans.json`` and ``OUT_PREFIX.logs.json`` are written.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import openai
from google.protobuf.json_format import MessageToDict
from opentelemetry.exporter.otlp.proto.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.llm.stub_server import Action, running_stub

TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "get_order",
            "description": "Fetch an order by id.",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    }
]
CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "get_order", "arguments": '{"order_id": "ORD-1"}'},
}
REPLY = "I could not find that order; let me hand you to a person."


def _completion(message: dict[str, Any]) -> Action:
    finish = "tool_calls" if message.get("tool_calls") else "stop"
    return Action(
        body={
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 0,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 8, "total_tokens": 28},
        }
    )


def _hex_ids(value: Any) -> Any:
    """Protobuf JSON writes ids in base64; OTLP/JSON (and the collector's file exporter) in hex."""
    if isinstance(value, dict):
        return {
            k: base64.b64decode(v).hex()
            if k in ("traceId", "spanId", "parentSpanId") and isinstance(v, str)
            else _hex_ids(v)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_hex_ids(v) for v in value]
    return value


def record(prefix: Path) -> None:
    """Make the two calls under the instrumentation and write both exports."""
    spans, logs = InMemorySpanExporter(), InMemoryLogExporter()  # type: ignore[no-untyped-call]
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    OpenAIInstrumentor().instrument(  # type: ignore[no-untyped-call]
        tracer_provider=tracer_provider, logger_provider=logger_provider
    )
    with running_stub() as server:
        server.queue(
            _completion({"role": "assistant", "content": None, "tool_calls": [CALL]}),
            _completion({"role": "assistant", "content": REPLY}),
        )
        client = openai.OpenAI(api_key="stand-in", base_url=server.url, max_retries=0)
        messages: list[Any] = [
            {"role": "system", "content": "You are a refunds agent."},
            {"role": "user", "content": "Where is my refund for ORD-1?"},
        ]
        client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
        messages += [
            {"role": "assistant", "content": None, "tool_calls": [CALL]},
            {"role": "tool", "tool_call_id": "call_1", "content": '{"error": "order not found"}'},
        ]
        client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=TOOLS)
    exports = {
        "spans": MessageToDict(encode_spans(spans.get_finished_spans())),
        "logs": MessageToDict(encode_logs(logs.get_finished_logs())),
    }
    for kind, doc in exports.items():
        path = prefix.with_name(f"{prefix.name}.{kind}.json")
        path.write_text(json.dumps(_hex_ids(doc), indent=1), encoding="utf-8")


if __name__ == "__main__":
    record(Path(sys.argv[1]))
