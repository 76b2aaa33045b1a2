"""What a release refuses that only whole files can get wrong.

Duplicate ids and raw labels, labels naming no case, contradictions, and raw labels of kept cases
dropped; each reported as located problems.
"""

from __future__ import annotations

from collections.abc import Sequence

from casework.dataset.check import contradictory_tools
from casework.dataset.stream import dangling_label_problems, duplicate_label_problems
from casework.dataset.versions import CASES_FILE, LABELS_FILE
from casework.errors import Problem
from casework.schema import Case, LabelRecord


def dangling_labels(
    cases: Sequence[Case], labels: Sequence[LabelRecord], shown_dir: str
) -> list[Problem]:
    """Raw labels naming no case (located by their line in canonical order)."""
    return dangling_label_problems({c.id for c in cases}, labels, shown_dir)


def label_key(record: LabelRecord) -> tuple[str, str, str]:
    """Identity of a raw label: one per case, labeller and guideline version."""
    return (record.case_id, record.labeller, record.guideline_version)


def label_identity(record: LabelRecord) -> str:
    return record.model_dump_json()


def duplicate_labels(labels: Sequence[LabelRecord], shown_dir: str) -> list[Problem]:
    """Two raw labels by one labeller of one case under one guideline (agreement needs one)."""
    return duplicate_label_problems(labels, shown_dir)


def contradictions(cases: Sequence[Case], shown_dir: str) -> list[Problem]:
    """Cases whose label requires a call that it also forbids (e.g. after a many-to-one rename)."""
    return [
        Problem(
            f"{shown_dir}/{CASES_FILE}",
            line,
            "label.forbidden_tools",
            "the case requires and forbids the same tool",
            tool,
            has_got=True,
        )
        for line, case in enumerate(cases, start=1)
        if case.label is not None
        for tool in contradictory_tools(case.label)
    ]


def dropped_labels(
    old: Sequence[LabelRecord],
    cases: Sequence[Case],
    labels: Sequence[LabelRecord],
    shown_dir: str,
) -> list[Problem]:
    """Raw labels of the previous release that vanish although their case stays."""
    kept = {c.id for c in cases}
    now = {label_key(r) for r in labels}
    gone = [r for r in old if r.case_id in kept and label_key(r) not in now]
    if not gone:
        return []
    return [
        Problem(
            f"{shown_dir}/{LABELS_FILE}",
            None,
            None,
            f"{len(gone)} raw label(s) of the previous release are missing although their cases "
            "remain (raw labels are kept for agreement); restore the file (e.g. `git checkout`) "
            "or remove those cases",
            ", ".join(sorted({r.case_id for r in gone})[:5]),
            has_got=True,
        )
    ]


def duplicate_ids(cases: Sequence[Case], shown_dir: str) -> list[Problem]:
    """Cases sharing an id (located by their line in canonical, id-sorted order)."""
    first: dict[str, int] = {}
    problems = []
    for line, case in enumerate(cases, start=1):
        if case.id in first:
            problems.append(
                Problem(
                    f"{shown_dir}/{CASES_FILE}",
                    line,
                    "id",
                    f"duplicate id, first on line {first[case.id]}",
                    case.id,
                    has_got=True,
                )
            )
        else:
            first[case.id] = line
    return problems


def dropped_label_count(
    old: Sequence[LabelRecord], kept: set[str], labels: Sequence[LabelRecord]
) -> int:
    now = {label_key(r) for r in labels}
    return sum(1 for r in old if r.case_id in kept and label_key(r) not in now)
