"""Raw labels sorted into agreement rows per (slice, guideline version), one label at a time.

Entry point: :class:`LabelGroups` (:meth:`~LabelGroups.add` each label in file order, then
:meth:`~LabelGroups.finish`), which gives the :class:`Partition` the report measures. A labels
file whose labels come case by case (as every release writes it) streams: each case's labels
are reduced to one row when the next case begins, so memory grows with the rows kept (a case
id and a shared tuple of answers each), never with the labels read. Labels in any other order
are held per case until the end (:class:`Ungrouped` says when to start again so); the rows are
the same either way.

A file is streamed when each case's labels are contiguous (in any order of cases, as the
generated and imported files are): a case id seen again after other cases makes
:meth:`LabelGroups.complete` raise :class:`Ungrouped`. The ids already closed are remembered as
one 8-byte hash each (compared once, at the end): a hash shared by two ids only costs a second
reading.

Which labels count is said in :mod:`casework.agreement.report`.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from casework.errors import InputErrors, Problem
from casework.schema import LabelRecord

__all__ = [
    "KAPPA_REASONS",
    "CompactLabel",
    "Group",
    "LabelGroups",
    "Partition",
    "Said",
    "Ungrouped",
    "compact_label",
]

KAPPA_REASONS = frozenset({"calibration", "audit"})
"""Overlap reasons whose double labels feed agreement."""

_ROLE_ORDER = {"first": 0, "second": 1, "adjudicator": 2}


class CompactLabel(NamedTuple):
    """What agreement reads of a raw label: tool requirements reduced to their tool names."""

    case_id: str
    labeller: str
    role: str
    overlap_reason: str | None
    outcome: str
    required: frozenset[str]
    forbidden: frozenset[str]
    guideline_version: str
    labelled_at: str
    """``labelled_at.isoformat()``, the text labels are ordered by."""


def compact_label(record: LabelRecord) -> CompactLabel:
    """The compact form of one validated record."""
    return CompactLabel(
        record.case_id,
        record.labeller,
        record.role,
        record.overlap_reason,
        record.outcome,
        frozenset(t.name for t in record.required_tools),
        frozenset(t.name for t in record.forbidden_tools),
        record.guideline_version,
        record.labelled_at.isoformat(),
    )


class Said(NamedTuple):
    """What a row keeps of one usable label: the answers agreement compares."""

    outcome: str
    required: frozenset[str]
    forbidden: frozenset[str]


Row = tuple[str, tuple[Said, ...]]
"""A double-labelled case: its id and its usable labels' answers, in label order."""


@dataclass
class Group:
    """The rows of one (slice, guideline version), and the cases left out of it.

    Attributes:
        rows: Double-labelled cases with a calibration or audit label, sorted by case id.
        single: Cases with one usable label.
        no_reason: Cases with two usable labels, none for calibration or audit.
        labellers: Distinct labellers of the rows' labels.
    """

    rows: list[Row] = field(default_factory=list)
    single: int = 0
    no_reason: int = 0
    labellers: set[str] = field(default_factory=set)


@dataclass
class Partition:
    """Labels sorted into (slice, guideline version) groups, with what was left out.

    Attributes:
        groups: The groups, by (slice, guideline version).
        adjudicator: Adjudicator labels left out, by group.
        contested: Labels of disagreement overlap left out, by group.
        other_version: Labels left out as under another guideline version than asked for.
        versions: Guideline versions of the labels of known cases (before any filter).
    """

    groups: dict[tuple[str, str], Group] = field(default_factory=dict)
    adjudicator: Counter[tuple[str, str]] = field(default_factory=Counter)
    contested: Counter[tuple[str, str]] = field(default_factory=Counter)
    other_version: int = 0
    versions: set[str] = field(default_factory=set)


class Ungrouped(Exception):
    """A streamed file's labels of one case were not together: read it with ``grouped=False``."""


def _label_order(label: CompactLabel) -> tuple[int, str, str]:
    return (_ROLE_ORDER[label.role], label.labelled_at, label.labeller)


class LabelGroups:
    """Labels in, agreement rows out: see the module's docstring.

    Args:
        slice_of: Each known case's slice (labels of other cases are checked, then ignored).
        slice: Keep only this slice's cases.
        guideline: Keep only labels under this guideline version.
        check: Refuse a labeller's second label of one case under one version (located at the
            label's position, counted from 1).
        grouped: Expect each case's labels together (:meth:`complete` raises
            :class:`Ungrouped` otherwise); ``False`` holds every case's labels to the end.
    """

    def __init__(
        self,
        slice_of: Mapping[str, str],
        *,
        slice: str | None = None,
        guideline: str | None = None,
        check: bool = True,
        grouped: bool = True,
    ) -> None:
        self._slice_of = slice_of
        self._slice = slice
        self._guideline = guideline
        self._check = check
        self._grouped = grouped
        self._count = 0
        self._case: str | None = None
        self._open: list[tuple[int, CompactLabel]] = []
        self._held: dict[str, list[tuple[int, CompactLabel]]] = {}
        self._closed = array("q")  # hash() of each closed case's id
        self._twice: list[tuple[int, CompactLabel]] = []  # second labels, by position
        # Few distinct answers and answer lists: every row shares them (one pointer a label).
        self._said: dict[Said, Said] = {}
        self._patterns: dict[tuple[Said, ...], tuple[Said, ...]] = {}
        self.part = Partition()

    def add(self, label: CompactLabel) -> None:
        """Take the next label of the file."""
        self._count += 1
        item = (self._count, label)
        if not self._grouped:
            self._held.setdefault(label.case_id, []).append(item)
            return
        if label.case_id != self._case:
            if self._case is not None:
                self._close(self._case, self._open)
                self._closed.append(hash(self._case))
            self._case = label.case_id
            self._open = []
        self._open.append(item)

    def complete(self) -> None:
        """Close the last case; check each case's labels came together.

        Raises:
            Ungrouped: ``grouped``, and some case's labels were apart (or, rarely, two case
                ids share a hash): add every label again to groups made with ``grouped=False``.
        """
        if self._case is not None:
            self._close(self._case, self._open)
            self._closed.append(hash(self._case))
            self._case, self._open = None, []
        closed = np.frombuffer(self._closed, dtype=np.int64)
        if len(np.unique(closed)) != len(closed):
            raise Ungrouped()

    def finish(self, labels_path: str = "labels.jsonl") -> Partition:
        """The partition of every label added (``labels_path`` names the file in errors).

        Raises:
            Ungrouped: As :meth:`complete`, when it was not called.
            InputErrors: (``check``) a labeller labelled a case twice under one version, each
                such label located.
        """
        self.complete()
        for case_id in sorted(self._held):
            self._close(case_id, self._held[case_id])
        self._held = {}
        self._twice.sort(key=lambda item: item[0])
        InputErrors.raise_if_any(
            Problem(
                labels_path,
                line,
                "labeller",
                f"labelled case '{rec.case_id}' twice under guideline "
                f"'{rec.guideline_version}'; agreement needs one label per person",
                rec.labeller,
                has_got=True,
            )
            for line, rec in self._twice
        )
        for group in self.part.groups.values():
            group.rows.sort(key=lambda row: row[0])  # in file order when streamed
        return self.part

    def _close(self, case_id: str, labels: list[tuple[int, CompactLabel]]) -> None:
        """Reduce one case's labels (in file order) to its rows and counts."""
        if self._check:
            self._duplicates(labels)
        case_slice = self._slice_of.get(case_id)
        if case_slice is None:
            return
        part = self.part
        part.versions.update(rec.guideline_version for _, rec in labels)
        if self._slice is not None and case_slice != self._slice:
            return
        usable: dict[str, list[CompactLabel]] = {}
        for _, rec in labels:
            version = rec.guideline_version
            if self._guideline is not None and version != self._guideline:
                part.other_version += 1
                continue
            key = (case_slice, version)
            if rec.role == "adjudicator":
                part.adjudicator[key] += 1
            elif rec.overlap_reason == "disagreement":
                part.contested[key] += 1
            else:
                usable.setdefault(version, []).append(rec)
                continue
            part.groups.setdefault(key, Group())
        for version, labs in usable.items():
            group = part.groups.setdefault((case_slice, version), Group())
            if len(labs) < 2:
                group.single += 1
                continue
            labs.sort(key=_label_order)
            if not any(r.overlap_reason in KAPPA_REASONS for r in labs):
                group.no_reason += 1
                continue
            said = tuple(self._answers(r) for r in labs)
            group.rows.append((case_id, self._patterns.setdefault(said, said)))
            group.labellers.update(r.labeller for r in labs)

    def _answers(self, rec: CompactLabel) -> Said:
        said = Said(rec.outcome, rec.required, rec.forbidden)
        return self._said.setdefault(said, said)

    def _duplicates(self, labels: list[tuple[int, CompactLabel]]) -> None:
        seen: Counter[tuple[str, str]] = Counter()
        for line, rec in labels:
            key = (rec.labeller, rec.guideline_version)
            seen[key] += 1
            if seen[key] == 2:
                self._twice.append((line, rec))
