"""A τ²-bench domain's tool declarations: from the installed package, ``tools.json`` or ``tools.py``.

Entry points: :func:`tools_from_package` (τ²'s own declarations of an installed domain, as its
agents see them: argument descriptions, enums and nested models), :func:`tools_from_json` and
:func:`tools_from_python` / :func:`tools_from_python_file` (a ``tools.py`` of any other layout,
read with :mod:`ast`: never imported, never run; argument descriptions from the docstrings'
``Args:`` sections, enums from ``Literal[...]`` annotations).
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docstring_parser

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


def _docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """A tool's description and its arguments' descriptions, as τ² reads a docstring.

    τ² describes a tool by the docstring's short description, followed by its long description
    after a blank line when there is one, and each argument by its entry in the Google-style
    ``Args:`` section.
    """
    if not doc:
        return "", {}
    try:
        parsed = docstring_parser.parse(doc, docstring_parser.DocstringStyle.GOOGLE)
    except docstring_parser.ParseError:
        # Not Google style: the first paragraph describes the tool, no argument is described.
        return " ".join(doc.strip().split("\n\n")[0].split()), {}
    short, long = parsed.short_description or "", parsed.long_description or ""
    args = {p.arg_name: p.description for p in parsed.params if p.description}
    return (f"{short}\n\n{long}" if short and long else short or long), args


def _literal(node: ast.expr) -> list[Any] | None:
    """The values of ``Literal[...]`` (``typing.Literal`` too) when every one is a constant."""
    if not isinstance(node, ast.Subscript):
        return None
    base = node.value
    name = base.id if isinstance(base, ast.Name) else getattr(base, "attr", None)
    if name != "Literal":
        return None
    items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    if not all(isinstance(i, ast.Constant) for i in items):
        return None
    return [i.value for i in items if isinstance(i, ast.Constant)]


def _enum(values: Sequence[Any]) -> dict[str, Any]:
    kinds = {type(v) for v in values}
    schema: dict[str, Any] = {}
    if kinds == {str}:
        schema["type"] = "string"
    elif kinds == {int}:
        schema["type"] = "integer"
    elif kinds == {bool}:
        schema["type"] = "boolean"
    return {**schema, "enum": list(values)}


def _py_type(annotation: ast.expr | None, aliases: Mapping[str, list[Any]]) -> dict[str, Any]:
    if annotation is None:
        return {}
    values = _literal(annotation)
    if values is None and isinstance(annotation, ast.Name):
        values = aliases.get(annotation.id)
    if values is not None:
        return _enum(values)
    node = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
    if isinstance(name, str) and name in _PY_TYPES:
        return {"type": _PY_TYPES[name]}
    return {}


def literal_aliases(tree: ast.AST) -> dict[str, list[Any]]:
    """The module's ``Name = Literal[...]`` aliases (``Name: TypeAlias = Literal[...]`` too)."""
    found: dict[str, list[Any]] = {}
    body = tree.body if isinstance(tree, ast.Module) else []
    for node in body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        values = _literal(value)
        if isinstance(target, ast.Name) and values is not None:
            found[target.id] = values
    return found


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


def _parse(source: str, shown: str) -> ast.Module:
    try:
        return ast.parse(source, filename=shown)
    except SyntaxError as exc:
        raise InputError(shown, exc.lineno, None, f"not valid Python: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError):
        raise InputError(shown, None, None, "not valid Python (too deeply nested)") from None


def tools_from_python(
    source: str, shown: str, aliases: Mapping[str, list[Any]] | None = None
) -> dict[str, Tau2Tool]:
    """Tools of a τ²-bench ``tools.py``, read with :mod:`ast` (the module is never imported).

    A tool is a function or method decorated with ``@is_tool(ToolType.X)``: its name, its
    docstring's description (as τ² reads it: the short description, then the long one), and
    one parameter per argument but ``self``: described by the docstring's Google-style
    ``Args:`` entry, typed from a ``str`` / ``int`` / ``float`` / ``bool`` / ``list`` / ``dict``
    annotation, an enum from ``Literal[...]`` (written there, or an alias the module or
    ``aliases`` defines), required unless it has a default.

    Args:
        source: The module's text.
        shown: How to name the file in messages.
        aliases: ``Literal`` aliases defined elsewhere (a sibling ``data_model.py``), by name.

    Raises:
        InputError: The file is not valid Python.
    """
    tree = _parse(source, shown)
    try:
        return _tools_of(tree, {**(aliases or {}), **literal_aliases(tree)})
    except RecursionError:
        raise InputError(shown, None, None, "not valid Python (too deeply nested)") from None


def tools_from_python_file(path: Path, shown: str) -> dict[str, Tau2Tool]:
    """Tools of the ``tools.py`` at ``path`` (see :func:`tools_from_python`).

    ``Literal`` aliases the module imports from a module beside it (τ²'s ``data_model.py``:
    ``CabinClass``, ``Insurance``) are read from that file, statically too; a sibling that does
    not parse gives no aliases (they only add enums).

    Raises:
        InputError: The file is not valid Python.
    """
    source = path.read_bytes().decode("utf-8", errors="replace")
    tree = _parse(source, shown)
    aliases: dict[str, list[Any]] = {}
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom) or not node.module:
            continue
        sibling = path.parent / f"{node.module.rpartition('.')[2]}.py"
        if sibling == path or not sibling.is_file():
            continue
        try:
            found = literal_aliases(ast.parse(sibling.read_bytes()))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            continue
        aliases |= {a.name: found[a.name] for a in node.names if a.name in found}
    return tools_from_python(source, shown, aliases)


def _tools_of(tree: ast.AST, aliases: Mapping[str, list[Any]]) -> dict[str, Tau2Tool]:
    tools: dict[str, Tau2Tool] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        kind = _tool_kind(node.decorator_list)
        if kind is None:
            continue
        args = [a for a in node.args.args if a.arg != "self"]
        first_default = len(args) - len(node.args.defaults)
        description, described = _docstring(ast.get_docstring(node))
        props = {a.arg: _py_type(a.annotation, aliases) for a in args}
        for name, text in described.items():
            if name in props:
                props[name]["description"] = text
        required = [a.arg for i, a in enumerate(args) if i < first_default]
        params: dict[str, Any] = {"type": "object", "properties": props, "required": required}
        decl = {"name": node.name, "description": description, "parameters": params}
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
