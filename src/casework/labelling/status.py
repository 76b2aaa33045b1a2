"""`casework label status` and `casework review list --kind disagreement`: where labelling stands, and what is contested.

Entry points: :func:`labelling_status` (per slice and per labeller) and :func:`list_disagreements`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from casework.labelling.dataset_state import DatasetState, dataset_name, load_state
from casework.labelling.model import labels_in_role_order
from casework.labelling.snapshot import CASE_STATUSES, CaseStatus, SliceCalibration
from casework.labelling.timings import Timings, read_timings
from casework.project import Project
from casework.schema import LabelRecord
from casework.workbench import open_workbench

__all__ = [
    "Disagreement",
    "LabellerLoad",
    "LabellingStatus",
    "SliceStatus",
    "labelling_status",
    "list_disagreements",
]


@dataclass(frozen=True)
class SliceStatus:
    """One slice's labelling progress.

    Attributes:
        slice: The slice.
        guideline_version: Its current guideline version.
        cases: Cases in the slice.
        counts: Cases per status (see :data:`casework.labelling.snapshot.CaseStatus`).
        calibration: Kappa under the current guideline and whether the slice left full overlap.
        seconds_per_label: Labelling cost: seconds on screen per timed raw label (``None``: n/a).
    """

    slice: str
    guideline_version: str
    cases: int
    counts: dict[CaseStatus, int]
    calibration: SliceCalibration
    seconds_per_label: float | None = None


@dataclass(frozen=True)
class LabellerLoad:
    """One person's work in this dataset.

    Attributes:
        labeller: Who.
        open_labels: First or second labels assigned, not yet imported.
        open_adjudications: Adjudications assigned, not yet imported.
        done: Labels imported.
    """

    labeller: str
    open_labels: int = 0
    open_adjudications: int = 0
    done: int = 0


@dataclass(frozen=True)
class LabellingStatus:
    """Where a dataset stands in labelling.

    Attributes:
        dataset: Dataset name.
        slices: One entry per slice.
        labellers: One entry per person with assignments.
        gate: ``thresholds.kappa_gate``.
        min_rows: ``labelling.calibration_min_rows``.
        totals: Cases per status over every slice.
        minutes_per_accepted_case: Human minutes reviewing generated cases per accepted one
            (``None``: n/a, nothing accepted or timed).
    """

    dataset: str
    slices: tuple[SliceStatus, ...]
    labellers: tuple[LabellerLoad, ...]
    gate: float
    min_rows: int
    totals: dict[CaseStatus, int] = field(default_factory=dict)
    minutes_per_accepted_case: float | None = None


@dataclass(frozen=True)
class Disagreement:
    """A case whose blind labels differ, under its newest guideline version.

    Attributes:
        case_id: The case.
        slice: Its slice.
        guideline_version: The round's guideline version.
        differs: Fields the labels differ on.
        labels: The blind labels, first then second.
        adjudicator: Who holds the adjudication, if assigned.
    """

    case_id: str
    slice: str
    guideline_version: str
    differs: tuple[str, ...]
    labels: tuple[LabelRecord, ...]
    adjudicator: str | None


def _load(project: Project, dataset: str, command: str) -> tuple[str, DatasetState, Timings]:
    name = dataset_name(dataset, command)
    with open_workbench(project) as wb, wb.session() as session:
        return name, load_state(project, name, session), read_timings(session, name)


def labelling_status(project: Project, dataset: str) -> LabellingStatus:
    """Per slice: cases per status, calibration and labelling cost; per labeller: open and done work.

    Also human minutes per accepted generated case (from decided review items).

    Raises:
        UsageError: Unknown dataset.
        InputErrors: Bad dataset files or guidelines, or hand-edited raw labels.
    """
    name, state, timings = _load(project, dataset, "label status")
    calibration = state.calibration(project)
    per_slice: dict[str, Counter[CaseStatus]] = defaultdict(Counter)
    for progress in state.snapshot.cases:
        per_slice[progress.case.slice][progress.status] += 1
    slices = tuple(
        SliceStatus(
            slice_name,
            state.snapshot.versions[slice_name],
            sum(counts.values()),
            {s: counts[s] for s in CASE_STATUSES if counts[s]},
            calibration[slice_name],
            timings.seconds_per_label(slice_name),
        )
        for slice_name, counts in sorted(per_slice.items())
    )
    loads: dict[str, Counter[str]] = defaultdict(Counter)
    for stored in state.work.assignments:
        a = stored.assignment
        kind = "done" if a.done else ("adjudication" if a.role == "adjudicator" else "label")
        loads[a.labeller][kind] += 1
    labellers = tuple(
        LabellerLoad(lab, c["label"], c["adjudication"], c["done"])
        for lab, c in sorted(loads.items())
    )
    totals: Counter[CaseStatus] = Counter(p.status for p in state.snapshot.cases)
    config = project.config
    return LabellingStatus(
        name,
        slices,
        labellers,
        config.thresholds.kappa_gate,
        config.labelling.calibration_min_rows,
        {s: totals[s] for s in CASE_STATUSES if totals[s]},
        timings.minutes_per_accepted_case,
    )


def list_disagreements(project: Project, dataset: str) -> list[Disagreement]:
    """Cases whose blind labels differ and no adjudicator has decided yet, by case id.

    Raises:
        UsageError: Unknown dataset.
        InputErrors: Bad dataset files or guidelines, or hand-edited raw labels.
    """
    _, state, _ = _load(project, dataset, "review list")
    out = []
    for progress in state.snapshot.by_status("contested", "adjudicating"):
        found = progress.round
        if found is None:
            continue
        holder = next((a.labeller for a in found.pending if a.role == "adjudicator"), None)
        blind = [r for r in labels_in_role_order(found.labels) if r.role != "adjudicator"]
        out.append(
            Disagreement(
                progress.case.id,
                progress.case.slice,
                found.guideline_version,
                found.differs,
                tuple(blind),
                holder,
            )
        )
    return out
