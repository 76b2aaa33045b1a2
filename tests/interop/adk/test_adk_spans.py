"""Traces as Google ADK itself writes them: the message content settings ADK reads are named.

ADK (google-adk 2.13, schema 2 by default) puts the messages on its `generate_content` spans
only when `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` is `SPAN_ONLY` or `SPAN_AND_EVENT`
(google/adk/telemetry/context.py); `ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS` (default on) governs
only the legacy schema's `gcp.vertex.agent.llm_request` attributes. The spans come from the test
ADK agent run by ADK's own runner, one invocation per setting in a fresh process
(tests/interop/adk/adk_spans.py), its model a stand-in on loopback, exported by an in-memory span
exporter.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from casework.errors import InputErrors
from casework.mining import MineOptions, mine
from casework.mining.otel_genai import ADK_CONTENT_OFF, CONTENT_OFF, conversations_from_genai
from casework.mining.otlp import read_spans
from casework.project import Project, load_project
from tests.interop.adk.test_api_server import PROXY_VARS, _model
from tests.llm.stub_server import StubServer
from tests.unmeasured import unmeasured_env

ROOT = Path(__file__).resolve().parents[3]
SAID = "My mug (order ORD-1) arrived broken, refund it."
SETTINGS: dict[str, dict[str, str]] = {
    "off": {},
    "span_only": {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"},
    # The legacy schema, content on in ADK's own attributes (ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS
    # defaults on) and off in the GenAI ones.
    "legacy": {"ADK_TELEMETRY_SCHEMA_VERSION_OPT_IN": "1"},
}


@pytest.fixture(scope="module")
def adk_traces(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """`setting -> OTLP JSON file` of one invocation of the test agent under that setting."""
    folder = tmp_path_factory.mktemp("adk-spans")
    model = StubServer()
    model.fallback = _model
    model.start()
    try:
        env = {
            k: v
            for k, v in unmeasured_env().items()
            if not k.startswith(("OTEL_", "ADK_")) and k not in PROXY_VARS
        }
        env |= {
            "PYTHONPATH": str(ROOT),
            "CASEWORK_TEST_LLM_BASE": model.url,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        subprocess.run(
            [
                *(sys.executable, "-m", "tests.interop.adk.adk_spans"),
                *(str(folder), SAID, json.dumps(SETTINGS)),
            ],
            cwd=ROOT,
            env=env,
            check=True,
            timeout=180,
        )
        out = {name: folder / f"{name}.json" for name in SETTINGS}
        yield out
    finally:
        model.stop()


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "casework.toml").write_text('name = "adk-traces"\n', encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", "adk-span-tests-key-not-secret-0123456789")
    return load_project(root)


@pytest.mark.parametrize("setting", ["off", "legacy"])
def test_adk_spans_without_content_name_the_settings_adk_reads(
    setting: str, adk_traces: dict[str, Path], project: Project
) -> None:
    spans = read_spans([adk_traces[setting]])
    assert any(s.attributes.get("gen_ai.operation.name") == "generate_content" for s in spans)
    assert conversations_from_genai(spans) == []
    legacy = [s for s in spans if s.name == "call_llm"]  # ADK's own model-call spans, schema 1
    assert bool(legacy) == (setting == "legacy")
    # Under schema 1 the content is there, in ADK's own attributes casework does not read.
    assert all(SAID in s.attributes["gcp.vertex.agent.llm_request"] for s in legacy)
    with pytest.raises(InputErrors) as info:
        mine(project, [adk_traces[setting]], "prod", MineOptions())
    [problem] = info.value.problems
    assert problem.message == ADK_CONTENT_OFF != CONTENT_OFF
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT is SPAN_ONLY or SPAN_AND_EVENT" in (
        problem.message
    )
    assert "ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS" in problem.message
    assert not (project.root / "datasets" / "prod").exists()


def test_adk_spans_with_content_are_one_conversation(adk_traces: dict[str, Path]) -> None:
    [conversation] = conversations_from_genai(read_spans([adk_traces["span_only"]]))
    said = [(m.role, m.content) for m in conversation.messages if m.content]
    assert said[0] == ("user", SAID)
    assert said[-1] == ("assistant", "Done: refunded 79.0 EUR (REF-1).")
    calls = [(c.name, c.arguments) for m in conversation.messages for c in m.tool_calls]
    assert calls == [
        ("get_order", {"order_id": "ORD-1"}),
        ("issue_refund", {"order_id": "ORD-1", "amount": 79.0}),
    ]
