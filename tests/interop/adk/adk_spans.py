"""Run the test ADK agent in-process and write the spans ADK itself emits as OTLP JSON.

Usage: ``python -m tests.interop.adk.adk_spans FOLDER "user message" SETTINGS_JSON``, with
``CASEWORK_TEST_LLM_BASE`` naming the model stand-in on loopback; SETTINGS_JSON maps a name to the
environment variables of one invocation, whose spans go to ``FOLDER/<name>.json``. A process of
its own, because OpenTelemetry's global tracer provider is set once per process; ADK reads its
telemetry settings from the environment when each invocation starts, so one process serves every
setting. The spans are encoded by OpenTelemetry's own OTLP encoder and printed by protobuf's JSON
printer, as an exporter's file would hold them.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from google.adk.runners import InMemoryRunner
from google.genai import types
from google.protobuf import json_format
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


async def _run(message: str) -> None:
    from tests.interop.adk.agents.refunds.agent import root_agent

    runner = InMemoryRunner(agent=root_agent, app_name="refunds")
    session = await runner.session_service.create_session(
        app_name="refunds", user_id="casework", state={"refunds": []}
    )
    content = types.Content(role="user", parts=[types.Part(text=message)])
    async for _ in runner.run_async(user_id="casework", session_id=session.id, new_message=content):
        pass


def main(folder: Path, message: str, settings: dict[str, dict[str, str]]) -> None:
    """Run one invocation of the agent per setting and write its spans to ``folder/<name>.json``."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    names = {k for env in settings.values() for k in env}
    for name, env in settings.items():
        for key in names:
            os.environ.pop(key, None)
        os.environ.update(env)
        exporter.clear()
        asyncio.run(_run(message))
        provider.force_flush()
        request = encode_spans(exporter.get_finished_spans())
        (folder / f"{name}.json").write_text(json_format.MessageToJson(request), encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2], json.loads(sys.argv[3]))
