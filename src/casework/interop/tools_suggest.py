"""`casework import tools`: draft tool declarations from what a team already has.

From an ADK eval file's tool uses (parameters inferred from the argument values), or from traces:
tool definitions (OpenTelemetry ``gen_ai.tool.definitions``, OpenInference
``llm.tools.N.tool.json_schema``) and, for tools no span defines, the calls the recorded
messages hold (stock SDK instrumentation records calls, not definitions), offered as a unified diff of the declared tools file for a
person to review and apply (``git apply``). Entry points: :func:`suggest_tools` (project level),
:func:`tools_from_adk` and :func:`tools_from_spans` (pure).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from casework.dataset import declared_tools
from casework.decoding import BadJSON, load_json, parse_json
from casework.errors import CaseworkError, InputError, UsageError
from casework.interop.adk._format import AdkFile, read_adk_file
from casework.mining.conversation import RawConversation
from casework.mining.openinference import conversations_from_openinference
from casework.mining.otel_genai import content_off, conversations_from_genai
from casework.mining.otlp import Span, read_spans
from casework.project import Project

ToolSource = Literal["adk", "traces"]
_OI_TOOL = re.compile(r"^llm\.tools\.(\d+)\.tool\.json_schema$")


@dataclass(frozen=True)
class ToolSuggestion:
    """One suggested declaration and where it came from.

    Attributes:
        declaration: ``{name, description, parameters}`` as agent/tools.json holds it.
        seen_in: Where it was found (files, span origins), at most five.
    """

    declaration: dict[str, Any]
    seen_in: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolsSuggestion:
    """Suggestions for tools the agent does not declare yet.

    Attributes:
        suggested: New declarations, by name order.
        already_declared: Tools found that the agent already declares.
        target: The declarations file the patch edits (``None`` with ``tools_from``).
        patch: A unified diff of ``target`` adding the suggestions (empty when nothing is new).
    """

    suggested: list[ToolSuggestion]
    already_declared: list[str] = field(default_factory=list)
    target: str | None = None
    patch: str = ""


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "null"


def _schema_from_uses(uses: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A JSON Schema of the arguments seen.

    Each key gets its type when all uses agree (integers and numbers read as ``number``), and the
    keys every use gave are required.
    """
    types: dict[str, set[str]] = {}
    for args in uses:
        for key, value in args.items():
            types.setdefault(key, set()).add(_json_type(value))
    props: dict[str, Any] = {}
    for key in sorted(types):
        kinds = types[key] - {"null"}
        if kinds == {"integer", "number"}:
            kinds = {"number"}
        props[key] = {"type": next(iter(kinds))} if len(kinds) == 1 else {}
    required = sorted(k for k in types if all(k in args for args in uses))
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


def tools_from_adk(files: Sequence[AdkFile]) -> list[ToolSuggestion]:
    """One declaration per tool an ADK file's invocations use, parameters inferred from them."""
    uses: dict[str, list[Mapping[str, Any]]] = {}
    where: dict[str, list[str]] = {}
    for f in files:
        for ec in f.cases:
            for inv in ec.invocations:
                for use in inv.tool_uses:
                    uses.setdefault(use.name, []).append(use.args)
                    if f.path not in where.setdefault(use.name, []):
                        where[use.name].append(f.path)
    return [
        ToolSuggestion(_inferred(name, uses[name], ""), tuple(where[name][:5]))
        for name in sorted(uses)
    ]


def _inferred(name: str, uses: Sequence[Mapping[str, Any]], where: str) -> dict[str, Any]:
    """A declaration drafted from a tool's calls: parameters inferred, the description for people.

    The description says it still has to be written, so a patch applied unread is visible.
    """
    return {
        "name": name,
        "description": f"Describe this tool (inferred from {len(uses)} call(s){where}).",
        "parameters": _schema_from_uses(uses),
    }


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return parse_json(value)
        except BadJSON:
            return None
    return value


def _definition(raw: Any) -> dict[str, Any] | None:
    """``{name, description, parameters}`` of an OpenAI-style or flat tool definition."""
    if not isinstance(raw, Mapping):
        return None
    fn: Mapping[str, Any] = raw["function"] if isinstance(raw.get("function"), Mapping) else raw
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return None
    params = fn.get("parameters", fn.get("input_schema"))
    description = fn.get("description")
    return {
        "name": name,
        "description": description if isinstance(description, str) else "",
        "parameters": dict(params) if isinstance(params, Mapping) else {"type": "object"},
    }


def _span_definitions(span: Span) -> Iterable[dict[str, Any]]:
    attrs = span.attributes
    listed = _maybe_json(attrs.get("gen_ai.tool.definitions"))
    for raw in listed if isinstance(listed, list) else []:
        if (d := _definition(raw)) is not None:
            yield d
    for key, value in sorted(attrs.items()):
        if _OI_TOOL.match(key) and (d := _definition(_maybe_json(value))) is not None:
            yield d


def tools_from_spans(spans: Sequence[Span]) -> list[ToolSuggestion]:
    """Declarations the traces' spans carry, then the tools their recorded calls use.

    The first definition of each name wins. A tool no span defines but whose calls the messages
    hold gets parameters inferred from the calls' arguments, as for ADK files.
    """
    found: dict[str, dict[str, Any]] = {}
    where: dict[str, list[str]] = {}
    for span in spans:
        for d in _span_definitions(span):
            found.setdefault(d["name"], d)
            seen = where.setdefault(d["name"], [])
            if span.origin not in seen:
                seen.append(span.origin)
    uses: dict[str, list[Mapping[str, Any]]] = {}
    for conv in _conversations(spans):
        for call in conv.tool_calls():
            if call.name and call.name not in found:
                uses.setdefault(call.name, []).append(call.arguments)
                seen = where.setdefault(call.name, [])
                if conv.origin not in seen:
                    seen.append(conv.origin)
    for name, args in uses.items():
        found[name] = _inferred(name, args, " in traces")
    return [ToolSuggestion(found[n], tuple(where[n][:5])) for n in sorted(found)]


def _conversations(spans: Sequence[Span]) -> list[RawConversation]:
    return [*conversations_from_genai(spans), *conversations_from_openinference(spans)]


def _patch(project: Project, suggestions: Sequence[ToolSuggestion]) -> tuple[str | None, str]:
    agent = project.config.agent
    if agent.tools_from or not agent.tools:
        return None, ""
    path = project.path(agent.tools)
    shown = project.relative(path)
    data = path.read_bytes() if path.is_file() else b""
    old_text = data.decode("utf-8", errors="replace")
    current = load_json(data, shown) if data.strip() else []
    if not isinstance(current, list):
        raise InputError(shown, None, None, "declared tools must be a JSON list to patch", current)
    new = [*current, *(s.declaration for s in suggestions)]
    new_text = json.dumps(new, indent=2, ensure_ascii=False) + "\n"
    old_lines = old_text.splitlines(keepends=True)
    bare = bool(old_lines) and not old_lines[-1].endswith("\n")
    if bare:  # diff every line with its newline, then mark the old last line as git does
        old_lines[-1] += "\n"
    diff = list(
        difflib.unified_diff(
            old_lines,
            new_text.splitlines(keepends=True),
            fromfile=f"a/{agent.tools}",
            tofile=f"b/{agent.tools}",
        )
    )
    if bare:
        last = old_lines[-1]
        for i, line in enumerate(diff):
            if line[1:] == last and line[0] in "- ":
                diff.insert(i + 1, "\\ No newline at end of file\n")
                break
    return shown, "".join(diff)


def suggest_tools(project: Project, paths: Sequence[Path], source: ToolSource) -> ToolsSuggestion:
    """Suggest declarations for the tools ``paths`` use or define that the agent does not declare.

    Args:
        project: The project.
        paths: ADK eval files (``source="adk"``) or OTLP JSON trace files (``"traces"``).
        source: Which kind the files are.

    Raises:
        UsageError: No file given.
        InputError: Traces that hold no tool definition and no tool call (with the settings
            that record message content, when the spans were recorded without it).
        InputErrors: A file does not read (every problem, located).
    """
    if not paths:
        raise UsageError("give at least one file.", param="files")
    if source == "adk":
        found = tools_from_adk([read_adk_file(p, project.relative(p)) for p in paths])
    else:
        shown = {p: project.relative(p) for p in paths}
        spans = read_spans(list(paths), shown)
        found = tools_from_spans(spans)
        if not found:
            why = content_off(spans) or "no tool definition and no tool call in these traces"
            raise InputError(", ".join(shown[p] for p in paths), None, None, why)
    try:
        declared = set(declared_tools(project))
    except CaseworkError:
        declared = set()  # no readable declarations yet: every tool found is new
    new = [s for s in found if s.declaration["name"] not in declared]
    target, patch = _patch(project, new) if new else (None, "")
    have = sorted(s.declaration["name"] for s in found if s.declaration["name"] in declared)
    return ToolsSuggestion(new, have, target, patch)
