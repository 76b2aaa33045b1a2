"""`casework import tools`: stub declarations from ADK tool uses and trace tool definitions."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from casework.dataset import declared_tools
from casework.interop import suggest_tools
from casework.interop.adk._format import read_adk_file
from casework.interop.tools_suggest import tools_from_adk
from casework.project import load_project
from tests.mining.otlp_examples import envelope, span

Run = Callable[..., Result]
ADK = Path(__file__).parent / "data" / "adk"
PRETRIP = "travel-concierge__pretrip.test.json"
HOME = "adk-python__home_automation_dependent_tool_calls.test.json"


def test_adk_tool_uses_give_inferred_parameters() -> None:
    found = {
        s.declaration["name"]: s for s in tools_from_adk([read_adk_file(ADK / PRETRIP, PRETRIP)])
    }
    assert sorted(found) == ["google_search_grounding", "transfer_to_agent", "what_to_pack_agent"]
    pack = found["what_to_pack_agent"].declaration
    assert pack["parameters"] == {
        "type": "object",
        "properties": {"request": {"type": "string"}},
        "required": ["request"],
    }
    assert pack["description"] == "Describe this tool (inferred from 1 call(s))."
    assert found["transfer_to_agent"].seen_in == (PRETRIP,)


def _oi_and_genai_traces(path: Path) -> None:
    weather = {"type": "function", "name": "get_weather", "description": "Weather by city.",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}  # fmt: skip
    refund = {"type": "function", "function": {"name": "issue_refund", "description": "Refund.",
              "parameters": {"type": "object", "properties": {"amount": {"type": "number"}}}}}  # fmt: skip
    spans = [
        span("5b8efff798038103d269b633813fc60c", "eee19b7ec3c1b174", "chat", 0,
             {"gen_ai.operation.name": "chat", "gen_ai.tool.definitions": json.dumps([weather])}),
        span("5b8efff798038103d269b633813fc60c", "aaa19b7ec3c1b174", "llm", 5,
             {"openinference.span.kind": "LLM", "llm.tools.0.tool.json_schema": json.dumps(refund),
              "llm.tools.1.tool.json_schema": json.dumps({"type": "function", "function": {"name": "get_order"}})}),
    ]  # fmt: skip
    path.write_text(json.dumps(envelope(spans)), encoding="utf-8")


def test_trace_definitions_become_a_patch_of_tools_json(project_dir: Path, run_cli: Run) -> None:
    _oi_and_genai_traces(project_dir / "traces.json")
    project = load_project(project_dir)
    result = suggest_tools(project, [project_dir / "traces.json"], "traces")
    # get_order and issue_refund are declared already (tests/factories.py TOOLS).
    assert [s.declaration["name"] for s in result.suggested] == ["get_weather"]
    assert result.already_declared == ["get_order", "issue_refund"]
    assert result.suggested[0].declaration == {
        "name": "get_weather",
        "description": "Weather by city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    }
    out = run_cli("import", "tools", "traces.json", "--from", "traces", "-o", "tools.patch")
    assert out.exit_code == 0, out.stderr
    assert "next: review it, then `git apply tools.patch`" in out.stdout
    patch = (project_dir / "tools.patch").read_text(encoding="utf-8")
    assert patch.startswith("--- a/agent/tools.json\n+++ b/agent/tools.json\n")
    before = declared_tools(project)
    subprocess.run(["git", "apply", "tools.patch"], cwd=project_dir, check=True)
    after = declared_tools(load_project(project_dir))
    assert set(after) == {*before, "get_weather"}


def test_cli_adk_suggestions_and_bad_input(project_dir: Path, run_cli: Run) -> None:
    shutil.copy(ADK / HOME, project_dir / HOME)
    out = run_cli("import", "tools", HOME, "--from", "adk", "--format", "json")
    assert out.exit_code == 0, out.stderr
    names = [s["declaration"]["name"] for s in json.loads(out.stdout)["suggested"]]
    assert names == ["get_device_info", "set_device_info"]
    (project_dir / "bad.json").write_text('{"resourceSpans": 3}', encoding="utf-8")
    bad = run_cli("import", "tools", "bad.json", "--from", "traces")
    assert bad.exit_code == 1 and bad.stderr.startswith("bad.json")
    assert not (project_dir / "tools.patch").exists()
