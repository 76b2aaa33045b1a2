"""What a tool-rename migration reads and produces: the rename map and the migration's result.

Kept apart from :mod:`casework.dataset.migrate` so the consistency checks can name these types
without importing the migration itself.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field

from casework.schema import Case, LabelRecord

__all__ = ["ArgumentCollision", "MigrationResult", "RenameMap"]


class RenameMap(BaseModel):
    """`renames.toml`: ``[tools] old = "new"`` and ``[arguments.<tool>] old = "new"``."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)

    tools: dict[str, str] = Field(default_factory=dict)
    """Old tool name -> new tool name."""
    arguments: dict[str, dict[str, str]] = Field(default_factory=dict)
    """Per tool (its new name), old argument name -> new argument name."""

    def tool(self, name: str) -> str:
        """The new name of a tool (unchanged if not renamed)."""
        return self.tools.get(name, name)

    def args(self, tool: str) -> Mapping[str, str]:
        """Argument renames of a tool, looked up by its new name."""
        return self.arguments.get(self.tool(tool), {})


@dataclass(frozen=True)
class ArgumentCollision:
    """Two arguments of one call that the renames give one name: one value would be lost."""

    case_id: str
    """The case (or raw label's case) holding the call."""
    tool: str
    """The tool called, by its new name."""
    argument: str
    """The name both arguments would take."""
    sources: tuple[str, ...]
    """The arguments' names before the renames, in the call's order."""


@dataclass
class MigrationResult:
    """Migrated cases and what changed."""

    cases: list[Case]
    tool_places: Counter[str] = field(default_factory=Counter)
    """Per ``old->new`` tool rename, how many places were rewritten."""
    argument_places: Counter[str] = field(default_factory=Counter)
    """Per ``tool.old->new`` argument rename, how many places were rewritten."""
    cases_changed: int = 0
    labels: list[LabelRecord] | None = None
    """Migrated raw labels (``labels.jsonl``), when they were migrated too."""
    labels_changed: int = 0
    contradictions: list[tuple[str, str]] = field(default_factory=list)
    """``(case id, tool)`` the renames would make a case require and forbid (left unmigrated)."""
    collisions: list[ArgumentCollision] = field(default_factory=list)
    """Calls the renames would give one argument name twice (a many-to-one argument rename)."""

    def changelog(self) -> list[str]:
        """Changelog lines counting the rewrites."""
        lines = [
            f"{k}: {v} place{'s' if v != 1 else ''}" for k, v in sorted(self.tool_places.items())
        ]
        lines += [
            f"{k}: {v} place{'s' if v != 1 else ''}"
            for k, v in sorted(self.argument_places.items())
        ]
        raw = (
            [f"renamed in {self.labels_changed} raw label{'s' if self.labels_changed != 1 else ''}"]
            if self.labels_changed
            else []
        )
        return [
            f"renamed in {self.cases_changed} case{'s' if self.cases_changed != 1 else ''}",
            *raw,
            *lines,
        ]
