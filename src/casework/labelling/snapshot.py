"""A dataset's labelling snapshot: every case's round and status, and each slice's calibration.

Raw labels come from both places they live: `labels.jsonl` (released) and the workbench (not yet
released); assignments from the workbench. Entry points: :func:`snapshot` (no I/O beyond what it
is given), :func:`slice_calibration`, :func:`merge_labels`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from casework.agreement import agreement_report
from casework.agreement.report import AgreementSettings
from casework.errors import InputErrors, Problem
from casework.labelling.model import Assignment, label_key
from casework.labelling.policy import is_calibrated
from casework.labelling.rounds import Round, final_label, latest_round
from casework.schema import Case, Label, LabelRecord

__all__ = [
    "CASE_STATUSES",
    "CaseProgress",
    "CaseStatus",
    "SliceCalibration",
    "Snapshot",
    "merge_labels",
    "slice_calibration",
    "snapshot",
]

CaseStatus = Literal[
    "queued", "labelling", "outdated", "contested", "adjudicating", "ready", "done", "stale"
]
"""``queued``: waits for labellers; ``labelling``: people hold it; ``outdated``: people hold it
under a superseded guideline (``label assign`` re-queues it); ``contested``: labels differ, no
adjudicator yet; ``adjudicating``: an adjudicator holds it; ``ready``: decided, not yet released;
``done``: released under the current guideline; ``stale``: labelled under an older guideline."""

CASE_STATUSES: tuple[CaseStatus, ...] = (
    "queued",
    "labelling",
    "outdated",
    "contested",
    "adjudicating",
    "ready",
    "done",
    "stale",
)


@dataclass(frozen=True)
class CaseProgress:
    """One case's labelling state.

    Attributes:
        case: The case as it stands in the working tree.
        current_version: The current guideline version of its slice.
        round: Its newest round, if any work was ever recorded.
        status: See :data:`CaseStatus`. A final round is ``ready`` while some of its raw labels
            are not released yet (or the case has no label); once released, later edits of the
            case's label (a tool rename, a hand fix) are never reverted by a label release.
        final: The label the round decides, when it is final.
    """

    case: Case
    current_version: str
    round: Round | None
    status: CaseStatus
    final: Label | None


@dataclass(frozen=True)
class SliceCalibration:
    """Whether a slice still needs every row double-labelled.

    Attributes:
        slice: The slice.
        guideline_version: Its current guideline version (kappa is never pooled across versions).
        rows: Double-labelled rows (calibration or audit overlap) under that version.
        kappa: Cohen's kappa on the outcome over those rows (``None`` when undefined).
        calibrated: ``rows >= min_rows`` and ``kappa >= gate``: one labeller plus audits from now on.
    """

    slice: str
    guideline_version: str
    rows: int
    kappa: float | None
    calibrated: bool


@dataclass(frozen=True)
class Snapshot:
    """A dataset's labelling state.

    Attributes:
        cases: Progress per case, in case-id order.
        labels: Every raw label (released and workbench), de-duplicated.
        versions: Current guideline version per slice.
        by_id: The same progress, by case id.
    """

    cases: tuple[CaseProgress, ...]
    labels: tuple[LabelRecord, ...]
    versions: Mapping[str, str]
    by_id: Mapping[str, CaseProgress]

    def by_status(self, *statuses: CaseStatus) -> list[CaseProgress]:
        """Cases in any of these statuses."""
        return [c for c in self.cases if c.status in statuses]


def merge_labels(
    released: Sequence[LabelRecord],
    workbench: Sequence[LabelRecord],
    shown: str,
    *,
    lines: Sequence[int] | None = None,
) -> list[LabelRecord]:
    """Released and workbench raw labels as one list, one record per (case, labeller, version).

    ``lines`` are the released records' line numbers in `labels.jsonl` when ``released`` is a
    part of it (default: 1, 2, ...).

    Raises:
        InputErrors: A released record and a workbench record share an identity but differ
            (`labels.jsonl` was edited by hand); every such line is reported.
    """
    by_key = {label_key(r): r for r in workbench}
    merged = dict(by_key)
    problems = []
    numbers = lines if lines is not None else range(1, len(released) + 1)
    for line, record in zip(numbers, released, strict=True):
        key = label_key(record)
        other = by_key.get(key)
        if other is not None and other != record:
            problems.append(
                Problem(
                    shown,
                    line,
                    "case_id",
                    f"differs from the workbench's label of the same case by {record.labeller} "
                    f"under {record.guideline_version}; raw labels are never edited by hand",
                    record.case_id,
                    has_got=True,
                )
            )
        merged.setdefault(key, record)
    InputErrors.raise_if_any(problems)
    return sorted(merged.values(), key=label_key)


def _status(case: Case, current: str, found: Round | None, unreleased: bool) -> CaseStatus:
    label = case.label
    under_current = label is not None and label.guideline_version == current
    if found is not None and found.state == "final" and (unreleased or label is None):
        return "ready"
    if found is not None and found.guideline_version == current and found.state != "final":
        return found.state
    if found is not None and found.pending:
        return "outdated"
    if label is None:
        return "queued"
    return "done" if under_current else "stale"


def snapshot(
    cases: Sequence[Case],
    released: Sequence[LabelRecord],
    workbench_labels: Sequence[LabelRecord],
    assignments: Sequence[Assignment],
    versions: Mapping[str, str],
    *,
    labels_path: str = "labels.jsonl",
    released_lines: Sequence[int] | None = None,
) -> Snapshot:
    """Every case's newest round and status.

    Each case's progress depends only on its own labels and assignments, so a part of a dataset
    (some cases, with their rows) gives those cases' progress exactly as the whole would.

    Args:
        cases: The dataset's cases (working tree).
        released: Raw labels from `labels.jsonl`.
        workbench_labels: Raw labels from the workbench.
        assignments: Assignments from the workbench.
        versions: Current guideline version per slice.
        labels_path: How to name `labels.jsonl` in errors.
        released_lines: Line numbers of ``released`` in `labels.jsonl` when it is a part of it.
    """
    labels = merge_labels(released, workbench_labels, labels_path, lines=released_lines)
    released_keys = {label_key(r) for r in released}
    labels_of: dict[str, list[LabelRecord]] = defaultdict(list)
    for record in labels:
        labels_of[record.case_id].append(record)
    held: dict[str, list[Assignment]] = defaultdict(list)
    for item in assignments:
        held[item.case_id].append(item)
    progress = []
    for case in sorted(cases, key=lambda c: c.id):
        current = versions[case.slice]
        found = latest_round(case.id, held.get(case.id, []), labels_of.get(case.id, []))
        final = final_label(found, case.label) if found and found.state == "final" else None
        unreleased = found is not None and any(
            label_key(r) not in released_keys for r in found.labels
        )
        status = _status(case, current, found, unreleased)
        progress.append(CaseProgress(case, current, found, status, final))
    return Snapshot(
        tuple(progress), tuple(labels), dict(versions), {p.case.id: p for p in progress}
    )


def slice_calibration(
    cases: Sequence[Case],
    labels: Sequence[LabelRecord],
    versions: Mapping[str, str],
    *,
    gate: float,
    min_rows: int,
) -> dict[str, SliceCalibration]:
    """Each slice's kappa under its current guideline version and whether it is calibrated.

    Uses the agreement report's rules (only calibration and audit overlap counts; adjudicator
    labels and disagreement overlap never do), so the policy and `casework agreement` agree.
    """
    report = agreement_report(
        cases, labels, settings=AgreementSettings(min_rows=min_rows, bootstrap=0)
    )
    found = {(s.slice, s.guideline_version): s for s in report.slices}
    out = {}
    for slice_name, version in sorted(versions.items()):
        entry = found.get((slice_name, version))
        rows = entry.rows if entry else 0
        kappa = entry.kappa.kappa if entry else None
        out[slice_name] = SliceCalibration(
            slice_name,
            version,
            rows,
            kappa,
            is_calibrated(rows, kappa, gate=gate, min_rows=min_rows),
        )
    return out
