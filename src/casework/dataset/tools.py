"""Declared tools: what the agent says it can call, read from `agent/tools.json` or its code.

Entry point: :func:`declared_tools`. Accepted shapes of the JSON file: a list of
``{"name", "description", "parameters"}`` objects, the same under a ``"tools"`` key, or OpenAI
function-calling entries ``{"type": "function", "function": {...}}``. With ``tools_from =
"pkg.module:attr"`` the attribute (or the result of calling it) may also be a list of objects with
a ``name`` attribute, as agent frameworks' tool objects have. ``tools_from = "cmd:COMMAND"`` or
``"http://127.0.0.1:PORT/…"`` reads the declarations a command prints or a loopback URL serves
(see ``_tools_from``), for agents that are not Python; an ``adk:URL/APP`` agent spec (or
``tools_from``) reads them from the app an ``adk api_server`` serves.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from casework.dataset._tools_from import external_tools, is_external
from casework.decoding import load_json
from casework.errors import InputError, InputErrors, Problem
from casework.plugins import load_object
from casework.project import Project

__all__ = ["ToolDecl", "declared_tools", "environment_tools", "parse_tool_declarations"]


@dataclass(frozen=True)
class ToolDecl:
    """One declared tool."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def argument_names(self) -> frozenset[str] | None:
        """Declared argument names, or ``None`` when the schema does not list properties.

        Computed once: `casework dataset check` asks for it for every tool requirement of every case.
        """
        props = self.parameters.get("properties")
        return frozenset(props) if isinstance(props, dict) else None


def _entry_to_decl(entry: Any, where: str, index: int) -> ToolDecl | Problem:
    if (
        isinstance(entry, dict)
        and entry.get("type") == "function"
        and isinstance(entry.get("function"), dict)
    ):
        entry = entry["function"]
    if isinstance(entry, dict):
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            return Problem(
                where,
                None,
                f"[{index}].name",
                "tool needs a non-empty string name",
                name,
                has_got=True,
            )
        params = entry.get("parameters", entry.get("input_schema", {})) or {}
        if not isinstance(params, dict):
            return Problem(
                where,
                None,
                f"[{index}].parameters",
                "must be a JSON Schema object",
                params,
                has_got=True,
            )
        return ToolDecl(name, str(entry.get("description", "")), params)
    name = getattr(entry, "name", None)
    if isinstance(name, str) and name:
        params = getattr(entry, "parameters", None)
        return ToolDecl(
            name,
            str(getattr(entry, "description", "") or ""),
            params if isinstance(params, dict) else {},
        )
    return Problem(
        where, None, f"[{index}]", "not a tool declaration (needs a name)", entry, has_got=True
    )


def parse_tool_declarations(data: Any, where: str) -> dict[str, ToolDecl]:
    """Validate tool declarations (see module docstring for the accepted shapes).

    Raises:
        InputErrors: An entry has no name, a bad parameters schema, or a name is declared twice.
    """
    if isinstance(data, dict) and "tools" in data:
        data = data["tools"]
    if not isinstance(data, Iterable) or isinstance(data, (str, bytes, dict)):
        raise InputError(where, None, None, "tool declarations must be a list", data)
    out: dict[str, ToolDecl] = {}
    problems: list[Problem] = []
    for index, entry in enumerate(data):
        decl = _entry_to_decl(entry, where, index)
        if isinstance(decl, Problem):
            problems.append(decl)
        elif decl.name in out:
            problems.append(
                Problem(
                    where, None, f"[{index}].name", "tool declared twice", decl.name, has_got=True
                )
            )
        else:
            out[decl.name] = decl
    InputErrors.raise_if_any(problems)
    return out


def _from_code(spec: str, root: Path) -> Any:
    obj = load_object(spec, root=root, where="agent.tools_from")
    return obj() if callable(obj) else obj


def declared_tools(project: Project) -> dict[str, ToolDecl]:
    """The agent's declared tools, by name.

    Raises:
        ConfigError: The declarations file is missing or `tools_from` cannot be imported.
        InputErrors: The declarations are malformed.
    """
    agent = project.config.agent
    if agent.tools_from:
        return parse_tool_declarations(
            external_tools(project)
            if is_external(agent.tools_from)
            else _from_code(agent.tools_from, project.root),
            f"tools_from {agent.tools_from}",
        )
    adk = agent.spec is not None and agent.spec.startswith("adk:")
    if adk and (not agent.tools or not project.path(agent.tools).is_file()):
        # The app an `adk api_server` serves lists its own tools: no declarations to write.
        spec = agent.spec or ""
        return parse_tool_declarations(external_tools(project, spec), f"agent spec {spec}")
    if not agent.tools:
        raise project.config_error(
            "agent",
            "set `tools` (a JSON file) or `tools_from` (pkg.module:attr, cmd:COMMAND or a loopback URL)",
        )
    path = project.path(agent.tools)
    shown = project.relative(path)
    if not path.is_file():
        raise project.config_error(
            "agent.tools", f"declared tools file {shown} not found", agent.tools
        )
    data = load_json(path.read_bytes(), shown)
    return parse_tool_declarations(data, shown)


def environment_tools(
    project: Project,
) -> tuple[dict[str, ToolDecl] | None, dict[str, dict[str, ToolDecl]]]:
    """Declared tools of the tool environments (`[run] environment` and `environments`).

    Each environment class is instantiated without arguments and asked for ``tools()``: the
    same declarations it serves the agent.

    Returns:
        The default environment's tools (``None`` without one), and the tools per slice of
        `[run] environments`.

    Raises:
        ConfigError: An environment cannot be imported or cannot declare its tools.
        InputErrors: Its declarations are malformed.
    """
    run = project.config.run
    by_spec: dict[str, dict[str, ToolDecl]] = {}

    def tools_of(spec: str, where: str) -> dict[str, ToolDecl]:
        if spec not in by_spec:
            cls = load_object(spec, root=project.root, where=where)
            try:
                declared = cls().tools()
            except Exception as exc:  # user code: a located config error, never a traceback
                raise project.config_error(
                    where, f"{spec} could not declare its tools: {exc}"
                ) from exc
            by_spec[spec] = parse_tool_declarations(declared, f"environment {spec}")
        return by_spec[spec]

    default = tools_of(run.environment, "run.environment") if run.environment else None
    per_slice = {
        name: tools_of(spec, f"run.environments.{name}")
        for name, spec in sorted(run.environments.items())
    }
    return default, per_slice
