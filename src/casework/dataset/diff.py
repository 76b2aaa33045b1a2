"""Differences between two dataset versions, by case id: added, removed, relabelled, moved, edited.

Entry point: :func:`diff_cases`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from casework.dataset.jsonl import dump_record
from casework.schema import Case

__all__ = [
    "CaseChange",
    "DatasetDiff",
    "changed_fields",
    "changed_ids",
    "diff_cases",
    "diff_indexed",
]


def changed_fields(old: Any, new: Any, prefix: str = "", depth: int = 3) -> list[str]:
    """Dotted paths where two JSON values differ, descending ``depth`` levels into objects."""
    if old == new:
        return []
    if depth > 0 and isinstance(old, dict) and isinstance(new, dict):
        out: list[str] = []
        for key in sorted(set(old) | set(new)):
            out.extend(
                changed_fields(
                    old.get(key), new.get(key), f"{prefix}.{key}" if prefix else key, depth - 1
                )
            )
        return out
    return [prefix or "(record)"]


@dataclass(frozen=True)
class CaseChange:
    """One case present in both versions with different content."""

    id: str
    fields: list[str]
    """Dotted paths of the fields that changed."""
    old_split: str
    new_split: str
    relabelled: bool
    """The label changed (outcome, tools, facts or guideline)."""

    @property
    def moved(self) -> bool:
        """The case moved to another split."""
        return self.old_split != self.new_split


@dataclass(frozen=True)
class DatasetDiff:
    """What changed between two versions."""

    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    changed: list[CaseChange] = field(default_factory=list)

    @property
    def relabelled(self) -> list[CaseChange]:
        """Changed cases whose label changed."""
        return [c for c in self.changed if c.relabelled]

    @property
    def moved(self) -> list[CaseChange]:
        """Changed cases that moved split."""
        return [c for c in self.changed if c.moved]

    @property
    def empty(self) -> bool:
        """No difference at all."""
        return not (self.added or self.removed or self.changed)

    def summary_lines(self) -> list[str]:
        """Changelog lines counting each kind of change (no identifiers)."""
        if self.empty:
            return ["no case changed"]
        lines = []
        if self.added:
            lines.append(f"added {len(self.added)} case{'s' if len(self.added) != 1 else ''}")
        if self.removed:
            lines.append(f"removed {len(self.removed)} case{'s' if len(self.removed) != 1 else ''}")
        if self.relabelled:
            lines.append(
                f"relabelled {len(self.relabelled)} case{'s' if len(self.relabelled) != 1 else ''}"
            )
        if self.moved:
            lines.append(
                f"moved split of {len(self.moved)} case{'s' if len(self.moved) != 1 else ''}"
            )
        other = [c for c in self.changed if not c.relabelled and not c.moved]
        if other:
            lines.append(f"edited {len(other)} other case{'s' if len(other) != 1 else ''}")
        return lines


def diff_cases(old: Sequence[Case], new: Sequence[Case]) -> DatasetDiff:
    """Compare two versions' cases by id."""
    before = {c.id: c for c in old}
    after = {c.id: c for c in new}
    return _diff(before, after, sorted(set(before) & set(after)), before, after)


def changed_ids(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> list[str]:
    """Ids in both versions whose line hashes differ, sorted."""
    return sorted(i for i, h in after.items() if i in before and before[i] != h)


def diff_indexed(
    before: Mapping[str, bytes],
    after: Mapping[str, bytes],
    old_cases: Mapping[str, Case],
    new_cases: Mapping[str, Case],
) -> DatasetDiff:
    """Compare two versions by their {case id: line hash} maps, as :func:`diff_cases` does.

    Only the cases whose lines differ are compared as records: ``old_cases`` and ``new_cases``
    hold (at least) those, keyed by id; equal lines are equal cases.
    """
    return _diff(before, after, changed_ids(before, after), old_cases, new_cases)


def _diff(
    before: Mapping[str, object],
    after: Mapping[str, object],
    both: list[str],
    old_cases: Mapping[str, Case],
    new_cases: Mapping[str, Case],
) -> DatasetDiff:
    changed = []
    for case_id in both:
        a, b = old_cases[case_id], new_cases[case_id]
        if a == b:
            continue
        fields = changed_fields(dump_record(a), dump_record(b))
        changed.append(
            CaseChange(
                id=case_id,
                fields=fields,
                old_split=a.split,
                new_split=b.split,
                relabelled=a.label != b.label,
            )
        )
    return DatasetDiff(
        added=sorted(set(after) - set(before)),
        removed=sorted(set(before) - set(after)),
        changed=changed,
    )
