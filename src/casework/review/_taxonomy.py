"""The failure taxonomy of trajectory reviews: a shipped MAST-like preset, or the project's copy.

The preset (``presets/trajectory-mast.toml``) groups categories as Cemri et al. 2025 ("Why Do
Multi-Agent LLM Systems Fail?") do: specification issues, inter-agent misalignment, task
verification; the descriptions are casework's own. A project that keeps
``taxonomy/trajectory.toml`` reviews with that file instead. Like a guideline, the file carries a
``version`` and every review records the version it was made under.
Entry point: :func:`load_taxonomy`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from casework.decoding import load_toml
from casework.errors import InputError
from casework.project import Project

#: Where a project keeps its own taxonomy (relative to the project root).
TAXONOMY_FILE = "taxonomy/trajectory.toml"
_PRESET = Path(__file__).parent / "presets" / "trajectory-mast.toml"
_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


@dataclass(frozen=True)
class Category:
    """One failure category: its id, the group it belongs to and what it means."""

    id: str
    group: str
    description: str


@dataclass(frozen=True)
class Taxonomy:
    """A versioned list of failure categories.

    Attributes:
        version: The file's ``version`` (recorded with every review).
        categories: The categories, in file order.
        source: Where it was read from (the project file, or ``preset``).
    """

    version: str
    categories: tuple[Category, ...]
    source: str

    def ids(self) -> tuple[str, ...]:
        """The category ids, in file order."""
        return tuple(c.id for c in self.categories)


def _line_of(text: str, needle: str) -> int | None:
    for number, line in enumerate(text.splitlines(), start=1):
        if needle in line:
            return number
    return None


def _parse(data: bytes, shown: str) -> Taxonomy:
    table = load_toml(data, shown)
    text = data.decode("utf-8", errors="replace")
    version = table.get("version")
    if not isinstance(version, str) or not version.strip():
        raise InputError(
            shown, _line_of(text, "version"), "version", "a non-empty string is required", version
        )
    raw = table.get("category")
    if not isinstance(raw, list) or not raw:
        raise InputError(shown, None, "category", "at least one [[category]] is required", raw)
    out: list[Category] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        where = f"category[{i}]"
        if not isinstance(entry, dict):
            raise InputError(shown, None, where, "a table is required", entry)
        cid = entry.get("id")
        line = _line_of(text, f'"{cid}"') if isinstance(cid, str) else None
        if not isinstance(cid, str) or not _ID.match(cid):
            raise InputError(
                shown, line, f"{where}.id", "lower-case letters, digits and dashes", cid
            )
        if cid in seen or cid == "none":
            raise InputError(shown, line, f"{where}.id", "a category id is used once", cid)
        seen.add(cid)
        fields: dict[str, Any] = {}
        for name in ("group", "description"):
            value = entry.get(name, "")
            if not isinstance(value, str):
                raise InputError(shown, line, f"{where}.{name}", "a string is required", value)
            fields[name] = value.strip()
        unknown = sorted(set(entry) - {"id", "group", "description"})
        if unknown:
            raise InputError(shown, line, f"{where}.{unknown[0]}", "unknown key", unknown[0])
        out.append(Category(cid, fields["group"], fields["description"]))
    return Taxonomy(version.strip(), tuple(out), shown)


def load_taxonomy(project: Project | None) -> Taxonomy:
    """The project's taxonomy (``taxonomy/trajectory.toml``), else the shipped MAST-like preset.

    Raises:
        InputError: The project's file is not valid (located by line where it can be).
    """
    if project is not None:
        path = project.root / TAXONOMY_FILE
        if path.is_file():
            return _parse(path.read_bytes(), TAXONOMY_FILE)
    return _parse(_PRESET.read_bytes(), "preset")
