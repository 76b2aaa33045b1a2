"""Per-case tool catalogues: the tools one case offers the agent (When2Call-style situations).

A case's catalogue is its ``situation.tools_file`` (a file of tool declarations inside the
project, pinned by ``tools_sha256``) or else the project's declared tools, narrowed to
``situation.tools`` when set. The runner offers exactly that set and `casework dataset check` checks the
case's label and fixtures against it. Entry points: :class:`CatalogueFiles`, :func:`case_catalogue`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from casework.dataset.tools import ToolDecl, parse_tool_declarations
from casework.decoding import load_json
from casework.errors import CaseworkError
from casework.schema import Case

__all__ = ["CatalogueError", "CatalogueFiles", "case_catalogue", "file_sha256"]


class CatalogueError(CaseworkError):
    """A case's catalogue cannot be built (a missing, changed or malformed file, an unknown name).

    Attributes:
        check: Finding name (`tools_file`, `tools_file_changed`, `undeclared_tool`).
        subject: What is wrong (the file, or a tool name).
    """

    def __init__(self, check: str, subject: str, message: str) -> None:
        super().__init__(message)
        self.check = check
        self.subject = subject
        self.message = message


def file_sha256(data: bytes) -> str:
    """The ``tools_sha256`` of a catalogue file's bytes."""
    return hashlib.sha256(data).hexdigest()


@dataclass
class CatalogueFiles:
    """Reads catalogue files under a project root, each once (picklable: a root and a cache).

    Args:
        root: The project root; ``None`` refuses every file (no project to read from).
    """

    root: Path | None
    _cache: dict[str, tuple[str, dict[str, ToolDecl]]] = field(default_factory=dict)

    def load(self, name: str, sha256: str) -> dict[str, ToolDecl]:
        """The declarations in ``name`` (project-relative), checked against ``sha256``.

        Raises:
            CatalogueError: The path leaves the project, the file is missing or malformed, or its
                content changed since the case pinned it.
        """
        if name not in self._cache:
            self._cache[name] = self._read(name)
        digest, tools = self._cache[name]
        if digest != sha256:
            raise CatalogueError(
                "tools_file_changed",
                name,
                f"tools_file changed since the case pinned it (tools_sha256 {sha256[:12]}, "
                f"file {digest[:12]}); update tools_sha256 to {digest}",
            )
        return tools

    def _read(self, name: str) -> tuple[str, dict[str, ToolDecl]]:
        pure = PurePosixPath(name)
        if self.root is None or pure.is_absolute() or ".." in pure.parts or "\\" in name:
            raise CatalogueError(
                "tools_file", name, "tools_file must be a relative path inside the project"
            )
        path = self.root / pure
        base = self.root.resolve()
        # Links are followed: a catalogue linked from outside the project is refused too.
        if not path.resolve().is_relative_to(base):
            raise CatalogueError("tools_file", name, f"tools_file {name} leaves the project")
        if not path.is_file():
            raise CatalogueError("tools_file", name, f"tools_file {name} not found")
        data = path.read_bytes()
        try:
            tools = parse_tool_declarations(load_json(data, name), name)
        except CaseworkError as exc:
            raise CatalogueError("tools_file", name, f"tools_file {name}: {exc}") from exc
        return file_sha256(data), tools


def case_catalogue(
    case: Case, declared: Mapping[str, ToolDecl], files: CatalogueFiles
) -> dict[str, ToolDecl]:
    """The tools ``case`` offers the agent, by name (in sorted order).

    Args:
        case: The case.
        declared: The project's declared tools (the base when the case names no file).
        files: Where catalogue files are read.

    Raises:
        CatalogueError: The file cannot be used, or ``situation.tools`` names a tool the base
            catalogue does not declare.
    """
    situation = case.situation
    base: Mapping[str, ToolDecl] = declared
    where = "declared by the agent"
    if situation.tools_file is not None and situation.tools_sha256 is not None:
        base = files.load(situation.tools_file, situation.tools_sha256)
        where = f"in {situation.tools_file}"
    if situation.tools is None:
        return {name: base[name] for name in sorted(base)}
    unknown = sorted(set(situation.tools) - set(base))
    if unknown:
        raise CatalogueError(
            "undeclared_tool",
            unknown[0],
            f"situation.tools offers {', '.join(unknown)}, not {where}",
        )
    return {name: base[name] for name in sorted(set(situation.tools))}
