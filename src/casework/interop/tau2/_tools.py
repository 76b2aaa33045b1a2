"""A τ²-bench domain's tool declarations: from the installed package, ``tools.json`` or ``tools.py``.

Entry points: :func:`tools_from_package` (τ²'s own declarations of an installed domain, as its
agents see them: argument descriptions, enums and nested models), :func:`tools_from_json` and
:func:`tools_from_python` (a ``tools.py`` of any other layout, read with :mod:`ast`: never
imported, never run).
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from casework.dataset.tools import parse_tool_declarations
from casework.errors import InputError

_READ_PREFIXES = ("get_", "search_", "list_", "find_", "calculate", "think", "check_", "lookup")
_PY_TYPES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "list": "array",
    "List": "array",
    "dict": "object",
    "Dict": "object",
}


@dataclass(frozen=True)
class Tau2Tool:
    """One tool of the domain: its declaration and whether it writes.

    Attributes:
        declaration: ``{"name", "description", "parameters"}`` (the `agent/tools.json` format).
        kind: ``read``, ``write``, ``think`` or ``generic`` (τ²-bench's tool types).
    """

    declaration: dict[str, Any]
    kind: str


def kind_by_name(name: str) -> str:
    """A tool's kind guessed from its name, for tools whose declaration gives none."""
    return "read" if name.startswith(_READ_PREFIXES) else "write"


def _doc_first(doc: str | None) -> str:
    if not doc:
        return ""
    return " ".join(doc.strip().split("\n\n")[0].split())


def _py_type(annotation: ast.expr | None) -> dict[str, Any]:
    if annotation is None:
        return {}
    node = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
    if isinstance(name, str) and name in _PY_TYPES:
        return {"type": _PY_TYPES[name]}
    return {}


def _tool_kind(decorators: Sequence[ast.expr]) -> str | None:
    for deco in decorators:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
        if name != "is_tool":
            continue
        args = deco.args if isinstance(deco, ast.Call) else []
        if args and isinstance(args[0], ast.Attribute):
            return args[0].attr.lower()
        return "generic"
    return None


def tools_from_python(source: str, shown: str) -> dict[str, Tau2Tool]:
    """Tools of a τ²-bench ``tools.py``, read with :mod:`ast` (the module is never imported).

    A tool is a function or method decorated with ``@is_tool(ToolType.X)``: its name, the first
    paragraph of its docstring, and one parameter per argument but ``self`` (JSON type from a
    ``str`` / ``int`` / ``float`` / ``bool`` / ``list`` / ``dict`` annotation, required unless it
    has a default).

    Raises:
        InputError: The file is not valid Python.
    """
    try:
        tree = ast.parse(source, filename=shown)
    except SyntaxError as exc:
        raise InputError(shown, exc.lineno, None, f"not valid Python: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError):
        raise InputError(shown, None, None, "not valid Python (too deeply nested)") from None
    try:
        return _tools_of(tree)
    except RecursionError:
        raise InputError(shown, None, None, "not valid Python (too deeply nested)") from None


def _tools_of(tree: ast.AST) -> dict[str, Tau2Tool]:
    tools: dict[str, Tau2Tool] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        kind = _tool_kind(node.decorator_list)
        if kind is None:
            continue
        args = [a for a in node.args.args if a.arg != "self"]
        first_default = len(args) - len(node.args.defaults)
        props = {a.arg: _py_type(a.annotation) for a in args}
        required = [a.arg for i, a in enumerate(args) if i < first_default]
        params: dict[str, Any] = {"type": "object", "properties": props, "required": required}
        decl = {
            "name": node.name,
            "description": _doc_first(ast.get_docstring(node)),
            "parameters": params,
        }
        tools[node.name] = Tau2Tool(decl, kind)
    return tools


def tools_from_json(data: Any, shown: str) -> dict[str, Tau2Tool]:
    """Tools of a ``tools.json`` (the `agent/tools.json` shapes; ``tool_type`` read when given).

    Raises:
        InputError: The declarations are bad (located).
    """
    decls = parse_tool_declarations(data, shown)
    entries = data["tools"] if isinstance(data, dict) else data
    kinds = {
        e.get("name"): e.get("tool_type")
        for e in (x.get("function", x) if isinstance(x, dict) else {} for x in entries)
        if isinstance(e, dict)
    }
    out = {}
    for name, d in decls.items():
        kind = kinds.get(name)
        kind = kind.lower() if isinstance(kind, str) else kind_by_name(name)
        out[name] = Tau2Tool(
            {"name": name, "description": d.description, "parameters": d.parameters}, kind
        )
    return out


def tools_from_package(module: str, shown: str) -> dict[str, Tau2Tool]:
    """The tools of the installed τ²-bench toolkit module ``module``, as τ² declares them.

    Every toolkit class the module defines is instantiated without a database (declaring needs
    none) and asked for its tools: τ²'s own JSON schemas (argument descriptions from the
    docstrings, enums, nested models) and tool types.

    Raises:
        InputError: The module cannot be imported, or declares no toolkit.
    """
    try:
        # τ² logs to stderr as it imports (a missing .env file): noise in casework's output.
        importlib.import_module("loguru").logger.disable("tau2")
        mod = importlib.import_module(module)
        base = importlib.import_module("tau2.environment.toolkit").ToolKitBase
    except Exception as exc:  # any failure of third-party code is bad input here
        raise InputError(shown, None, None, f"τ²-bench's {module} does not import: {exc}") from None
    tools: dict[str, Tau2Tool] = {}
    kits = [
        v
        for v in vars(mod).values()
        if isinstance(v, type) and issubclass(v, base) and v.__module__ == mod.__name__
    ]
    for kit_class in kits:
        kit = kit_class(None)
        for name, tool in kit.get_tools().items():
            schema = tool.openai_schema["function"]
            decl = {
                "name": name,
                "description": schema.get("description") or "",
                "parameters": schema.get("parameters") or {"type": "object", "properties": {}},
            }
            tools[name] = Tau2Tool(decl, str(kit.tool_type(name).value))
    if not tools:
        raise InputError(shown, None, None, f"τ²-bench's {module} declares no toolkit")
    return tools
