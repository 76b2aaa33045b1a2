from __future__ import annotations

import json
from pathlib import Path

import pytest

from casework.dataset import declared_tools, parse_tool_declarations
from casework.errors import ConfigError, InputError
from casework.project import load_project


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
