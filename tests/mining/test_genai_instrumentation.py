"""Traces as OpenTelemetry's own OpenAI instrumentation writes them, in each content mode.

The files are made by `opentelemetry-instrumentation-openai-v2` itself around real OpenAI SDK
calls to a stand-in server on loopback (tests/mining/genai_traces.py, one fresh process per
mode): content off, content on the spans (`span_only`) and content as log events
(`event_only`). Stock SDK instrumentation records no tool spans: the calls and their results are
only in the messages of the next model call.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from casework.errors import InputError, InputErrors
from casework.interop.tools_suggest import suggest_tools, tools_from_spans
from casework.mining import MineOptions, mine
from casework.mining.mine import detect_format
from casework.mining.otel_genai import conversations_from_genai
from casework.mining.otlp import read_spans
from casework.mining.signals import failure_signals
from casework.project import Project
from tests.unmeasured import unmeasured_env

pytest.importorskip("opentelemetry.instrumentation.openai_v2", reason="the test extra has it")

ROOT = Path(__file__).resolve().parents[2]
MODES = {
    "off": {},
    "span_only": {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_only",
    },
    "event_only": {
        "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "event_only",
    },
}


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, Path]]:
    """`mode -> (spans file, logs file)` written by the instrumentation in a fresh process."""
    folder = tmp_path_factory.mktemp("genai")
    out = {}
    for mode, settings in MODES.items():
        env = {k: v for k, v in unmeasured_env().items() if not k.startswith("OTEL_")}
        env.update(settings, PYTHONPATH=str(ROOT))
        subprocess.run(
            [sys.executable, "-m", "tests.mining.genai_traces", str(folder / mode)],
            cwd=ROOT,
            env=env,
            check=True,
            timeout=120,
        )
        out[mode] = (folder / f"{mode}.spans.json", folder / f"{mode}.logs.json")
    return out


def _conversation(paths: list[Path]) -> tuple[list[tuple[str, str]], list[str]]:
    [conv] = conversations_from_genai(read_spans(paths))
    shown: list[tuple[str, str]] = [(str(m.role), str(m.content)) for m in conv.messages]
    return shown, failure_signals(conv)


EXPECTED = [
    ("system", "You are a refunds agent."),
    ("user", "Where is my refund for ORD-1?"),
    ("assistant", ""),
    ("tool", "{'error': 'order not found'}"),
    ("assistant", "I could not find that order; let me hand you to a person."),
]


def test_content_on_spans_is_one_conversation_with_its_tool_error(
    traces: dict[str, tuple[Path, Path]],
) -> None:
    spans, _ = traces["span_only"]
    # Two model calls, each a trace of its own: the second repeats the first, so one conversation.
    assert len({s.trace_id for s in read_spans([spans])}) == 2
    messages, signals = _conversation([spans])
    assert messages == EXPECTED
    assert "tool_error" in signals  # the tool answered {"error": …}; no span says it failed


def test_content_as_log_events_reads_the_same_with_or_without_the_spans(
    traces: dict[str, tuple[Path, Path]],
) -> None:
    spans, logs = traces["event_only"]
    assert detect_format(logs) == "otel"
    with_spans = _conversation([spans, logs])
    assert with_spans == _conversation([logs]) == (EXPECTED, with_spans[1])
    assert "tool_error" in with_spans[1]


def test_mining_names_the_two_settings_when_content_was_not_recorded(
    traces: dict[str, tuple[Path, Path]], mining_project: Project
) -> None:
    spans, _ = traces["off"]
    with pytest.raises(InputErrors) as info:
        mine(mining_project, [spans], "prod", MineOptions())
    [problem] = info.value.problems
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in problem.message
    assert "OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental" in problem.message
    assert not (mining_project.root / "datasets" / "prod").exists()


def test_mining_event_only_traces_drafts_one_failing_case(
    traces: dict[str, tuple[Path, Path]], mining_project: Project
) -> None:
    spans, logs = traces["event_only"]
    report = mine(mining_project, [spans, logs], "prod", MineOptions(failing_only=True))
    assert (report.conversations, len(report.drafted)) == (1, 1)
    assert report.signals["tool_error"] == 1


def test_tool_suggestions_come_from_the_recorded_calls(
    traces: dict[str, tuple[Path, Path]], mining_project: Project
) -> None:
    spans, _ = traces["span_only"]
    [suggestion] = tools_from_spans(read_spans([spans]))
    assert suggestion.declaration["name"] == "get_order"
    assert suggestion.declaration["parameters"] == {
        "type": "object",
        "properties": {"order_id": {"type": "string"}},
        "required": ["order_id"],
    }
    off, _ = traces["off"]
    with pytest.raises(InputError) as info:
        suggest_tools(mining_project, [off], "traces")
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in str(info.value)
