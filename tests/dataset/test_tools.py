from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casework.dataset import declared_tools
from casework.dataset.check import _all_declared, _tool_findings
from casework.dataset.tools import ToolDecl, parse_tool_declarations
from casework.errors import ConfigError, InputError
from casework.project import load_project
from casework.schema import Case
from tests.factories import case_dict


def test_plain_list_openai_wrapped_and_tools_key_are_accepted() -> None:
    plain = parse_tool_declarations(
        [{"name": "a", "parameters": {"properties": {"x": {}}}}], "t.json"
    )
    wrapped = parse_tool_declarations(
        {"tools": [{"type": "function", "function": {"name": "a"}}]}, "t.json"
    )
    assert plain["a"].argument_names == frozenset({"x"})
    assert wrapped["a"].argument_names is None


def test_duplicate_and_nameless_tools_are_errors() -> None:
    with pytest.raises(InputError) as info:
        parse_tool_declarations(
            [{"name": "a"}, {"name": "a"}, {"description": "x"}], "agent/tools.json"
        )
    assert str(info.value).splitlines() == [
        "agent/tools.json: [1].name: tool declared twice. Got 'a'.",
        "agent/tools.json: [2].name: tool needs a non-empty string name. Got null.",
    ]


def test_tools_from_agent_code(project_dir: Path) -> None:
    (project_dir / "my_agent_tools.py").write_text(
        "class Tool:\n    def __init__(self, name):\n        self.name = name\n\n"
        "def tools():\n    return [Tool('get_order'), Tool('issue_refund')]\n"
    )
    (project_dir / "casework.toml").write_text('[agent]\ntools_from = "my_agent_tools:tools"\n')
    assert set(declared_tools(load_project(project_dir))) == {"get_order", "issue_refund"}


def test_tools_from_unimportable_module(project_dir: Path) -> None:
    (project_dir / "casework.toml").write_text('[agent]\ntools_from = "no_such_module_xyz:TOOLS"\n')
    with pytest.raises(ConfigError, match="cannot import 'no_such_module_xyz'"):
        declared_tools(load_project(project_dir))


def test_missing_tools_file(project_dir: Path) -> None:
    (project_dir / "agent" / "tools.json").unlink()
    with pytest.raises(ConfigError) as info:
        declared_tools(load_project(project_dir))
    assert (
        str(info.value)
        == "casework.toml: agent.tools: declared tools file agent/tools.json not found. Got 'agent/tools.json'."
    )


def test_invalid_json_tools_file(project_dir: Path) -> None:
    (project_dir / "agent" / "tools.json").write_text(json.dumps([{"name": "a"}])[:-1])
    with pytest.raises(InputError, match=r"agent/tools.json:1: invalid JSON"):
        declared_tools(load_project(project_dir))


# ---------------------------------------------------------------------------------------------
# `check`'s shortcut for a case naming only declared tools must answer exactly as the full check.

_NAMES = st.sampled_from(["get_order", "issue_refund", "lookup", "refund.v2", "zap"])
_ARGS = st.lists(st.sampled_from(["order_id", "amount", "email", "x"]), max_size=3, unique=True)


@st.composite
def _tool_sets(draw: st.DrawFn) -> dict[str, ToolDecl]:
    tools = {}
    for name in draw(st.lists(_NAMES, max_size=5, unique=True)):
        shape = draw(st.sampled_from(["props", "no-props", "props-not-dict", "empty"]))
        shapes: dict[str, dict[str, Any]] = {
            "props": {"type": "object", "properties": {a: {} for a in draw(_ARGS)}},
            "no-props": {"type": "object"},
            "props-not-dict": {"properties": ["order_id"]},
            "empty": {},
        }
        tools[name] = ToolDecl(name, "", shapes[shape])
    return tools


@st.composite
def _cases(draw: st.DrawFn) -> Case:
    def requirement() -> Any:
        name = draw(_NAMES)
        args = draw(_ARGS)
        return {"name": name, "arguments": {a: {"match": "any"} for a in args}} if args else name

    calls = [{"name": draw(_NAMES)} for _ in range(draw(st.integers(0, 3)))]
    turns: list[dict[str, object]] = [{"role": "user", "content": "hi"}]
    if calls:
        turns.append({"role": "assistant", "content": "", "tool_calls": calls})
    body = case_dict(
        "c-1",
        situation={
            "goal": "g",
            "turns": turns,
            "fixtures": [{"tool": draw(_NAMES)} for _ in range(draw(st.integers(0, 3)))],
        },
    )
    if draw(st.booleans()):
        required = [requirement() for _ in range(draw(st.integers(0, 3)))]
        named = {r if isinstance(r, str) else r["name"] for r in required}
        # A tool both required and forbidden is refused by the model: forbid other tools only.
        forbidden = [requirement() for _ in range(draw(st.integers(0, 2)))]
        forbidden = [f for f in forbidden if (f if isinstance(f, str) else f["name"]) not in named]
        body["label"] = {
            "outcome": "resolve",
            "required_tools": required,
            "forbidden_tools": forbidden,
        }
    else:
        del body["label"]
    return Case.model_validate(body)


@settings(max_examples=400, deadline=None)
@given(_cases(), _tool_sets())
def test_the_declared_tools_shortcut_answers_as_the_full_check(
    case: Case, tools: dict[str, ToolDecl]
) -> None:
    assert _all_declared(case, tools) == (_tool_findings(case, tools, "declared") == [])
