"""The labelling dashboard's figures: per slice and per labeller, in one call.

Entry point: :func:`dashboard`. Per slice: rows, rows labelled once and twice under the current
guideline, Cohen's kappa with its asymptotic interval (:func:`casework.agreement.kappa_interval`)
and band (provisional marked, from the agreement report's rules and the project's thresholds),
open disagreements, open review items, the guideline version and the labelling cost. Per
labeller: labels done, assignments held, median seconds on screen per label.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import func, select

from casework.agreement import SliceAgreement, agreement_report, kappa_interval
from casework.agreement.bands import BandEdges
from casework.agreement.report import AgreementSettings
from casework.labelling.dataset_state import DatasetState, dataset_name, load_state
from casework.labelling.guidelines import read_guideline
from casework.labelling.model import guideline_number
from casework.labelling.relabel_rule import RelabelRule, rules_of, touched_by
from casework.labelling.timings import Timings, read_timings
from casework.project import Project
from casework.workbench import open_workbench
from casework.workbench.models_review import ReviewTaskRow

__all__ = ["Dashboard", "LabellerDashboard", "RuleDashboard", "SliceDashboard", "dashboard"]


@dataclass(frozen=True)
class SliceDashboard:
    """One slice's figures.

    Attributes:
        slice: The slice.
        guideline_version: Its current guideline version.
        rows: Cases in the slice.
        labelled_once: Cases with exactly one blind label under that version.
        labelled_twice: Cases with two or more.
        kappa_rows: Double-labelled rows kappa is computed on (agreement report rules).
        kappa: Cohen's kappa on the outcome (``None``: no rows, or every label in one class).
        kappa_low: Lower end of its asymptotic interval (clipped to [-1, 1]).
        kappa_high: Upper end.
        band: ``ambiguous``, ``review`` or ``dependable`` (``None`` with too few rows).
        provisional: True when an interval crosses a band edge.
        band_reason: One sentence saying why the band is what it is.
        open_disagreements: Contested cases plus cases an adjudicator holds.
        open_review_items: Open review items counted under the slice.
        seconds_per_label: Labelling cost: seconds on screen per timed label (``None``: n/a).
        sent_back_by_rule: The rules stored with the slice's guideline versions, newest first,
            with the rows each touches.
    """

    slice: str
    guideline_version: str
    rows: int
    labelled_once: int
    labelled_twice: int
    kappa_rows: int
    kappa: float | None
    kappa_low: float | None
    kappa_high: float | None
    band: str | None
    provisional: bool
    band_reason: str
    open_disagreements: int
    open_review_items: int
    seconds_per_label: float | None
    sent_back_by_rule: tuple[RuleDashboard, ...] = ()


@dataclass(frozen=True)
class RuleDashboard:
    """A guideline rule's selector and the rows it sent back.

    Attributes:
        version: The guideline version that introduced the rule.
        selector: The JMESPath expression over the case.
        rows: Cases it touches that were labelled under an older version.
        open: Of those, cases not decided under the slice's current guideline yet (stale included).
    """

    version: str
    selector: str
    rows: int
    open: int


@dataclass(frozen=True)
class LabellerDashboard:
    """One person's figures.

    Attributes:
        labeller: Who.
        done: Assignments done (labels stored).
        assigned: Assignments held, done or not.
        median_seconds: Median seconds on screen per timed label (``None``: n/a).
    """

    labeller: str
    done: int
    assigned: int
    median_seconds: float | None


@dataclass(frozen=True)
class Dashboard:
    """The dashboard of one dataset.

    Attributes:
        dataset: Dataset name.
        slices: One entry per slice, by name.
        labellers: One entry per person with assignments, by id.
        minutes_per_accepted_case: Human minutes per accepted generated case (``None``: n/a).
    """

    dataset: str
    slices: tuple[SliceDashboard, ...]
    labellers: tuple[LabellerDashboard, ...]
    minutes_per_accepted_case: float | None

    def as_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return asdict(self)


def _labelled(state: DatasetState) -> tuple[Counter[str], Counter[str]]:
    """Per slice: cases with one blind label, and with two or more, under the current version."""
    versions = state.snapshot.versions
    slice_of = {c.id: c.slice for c in state.dataset.cases}
    per_case: Counter[str] = Counter(
        r.case_id
        for r in state.snapshot.labels
        if r.role != "adjudicator"
        and r.case_id in slice_of
        and r.guideline_version == versions[slice_of[r.case_id]]
    )
    once: Counter[str] = Counter()
    twice: Counter[str] = Counter()
    for case_id, n in per_case.items():
        (once if n == 1 else twice)[slice_of[case_id]] += 1
    return once, twice


def _agreement(project: Project, state: DatasetState) -> dict[str, SliceAgreement]:
    thresholds = project.config.thresholds
    settings = AgreementSettings(
        edges=BandEdges(thresholds.kappa_gate, thresholds.kappa_dependable),
        min_rows=thresholds.kappa_min_rows,
        min_positives=thresholds.kappa_min_positives,
        bootstrap=0,
    )
    report = agreement_report(state.dataset.cases, state.snapshot.labels, settings=settings)
    versions = state.snapshot.versions
    return {
        s.slice: s
        for s in report.slices
        if s.guideline_version is not None and versions.get(s.slice) == s.guideline_version
    }


def _slice(
    name: str,
    state: DatasetState,
    found: SliceAgreement | None,
    counts: tuple[int, int, int, int, int],
    timings: Timings,
    guideline_text: str,
) -> SliceDashboard:
    rows, once, twice, disagreements, review = counts
    interval = kappa_interval(table=found.confusion.counts) if found and found.rows else None
    return SliceDashboard(
        name,
        state.snapshot.versions[name],
        rows,
        once,
        twice,
        found.rows if found else 0,
        interval.kappa if interval else None,
        interval.low if interval else None,
        interval.high if interval else None,
        found.verdict.band if found else None,
        found.verdict.provisional if found else False,
        found.verdict.reason if found else "no double-labelled rows under this guideline yet",
        disagreements,
        review,
        timings.seconds_per_label(name),
        _rules(name, state, guideline_text),
    )


_OPEN = ("queued", "labelling", "outdated", "contested", "adjudicating", "stale")


def _rules(name: str, state: DatasetState, text: str) -> tuple[RuleDashboard, ...]:
    """Each stored rule of the slice with the rows it touches (labelled before it) and open ones."""
    earliest: dict[str, int] = {}
    for record in state.snapshot.labels:
        number = guideline_number(record.guideline_version)
        if number is not None:
            earliest[record.case_id] = min(number, earliest.get(record.case_id, number))
    for progress in state.snapshot.cases:
        label = progress.case.label
        number = guideline_number(label.guideline_version or "") if label else None
        if number is not None:
            case_id = progress.case.id
            earliest[case_id] = min(number, earliest.get(case_id, number))
    out = []
    for number, selector in sorted(rules_of(text).items(), reverse=True):
        rule = RelabelRule(f"{name}-g{number}", selector)
        touched = [
            p
            for p in state.snapshot.cases
            if p.case.slice == name
            and earliest.get(p.case.id, number) < number
            and touched_by(p.case, (rule,))
        ]
        still = sum(1 for p in touched if p.status in _OPEN)
        out.append(RuleDashboard(rule.version, selector, len(touched), still))
    return tuple(out)


def dashboard(project: Project, dataset: str) -> Dashboard:
    """Every figure of the labelling dashboard of ``dataset`` (working tree).

    Raises:
        UsageError: Unknown dataset.
        InputErrors: Bad dataset files or guidelines, or hand-edited raw labels.
    """
    name = dataset_name(dataset, "dashboard")
    with open_workbench(project) as wb, wb.session() as session:
        state = load_state(project, name, session)
        timings = read_timings(session, name)
        open_items: dict[str | None, int] = {
            slice_name: int(count)
            for slice_name, count in session.execute(
                select(ReviewTaskRow.slice, func.count())
                .where(ReviewTaskRow.dataset == name, ReviewTaskRow.status == "open")
                .group_by(ReviewTaskRow.slice)
            )
        }
    agreement = _agreement(project, state)
    once, twice = _labelled(state)
    rows = Counter(c.slice for c in state.dataset.cases)
    disagreements = Counter(
        p.case.slice for p in state.snapshot.by_status("contested", "adjudicating")
    )
    slices = tuple(
        _slice(
            s,
            state,
            agreement.get(s),
            (rows[s], once[s], twice[s], disagreements[s], int(open_items.get(s, 0))),
            timings,
            read_guideline(project, s).text,
        )
        for s in sorted(rows)
    )
    loads: dict[str, Counter[str]] = defaultdict(Counter)
    for stored in state.work.assignments:
        loads[stored.assignment.labeller]["assigned"] += 1
        loads[stored.assignment.labeller]["done"] += stored.assignment.done
    labellers = tuple(
        LabellerDashboard(lab, c["done"], c["assigned"], timings.median_seconds(lab))
        for lab, c in sorted(loads.items())
    )
    return Dashboard(name, slices, labellers, timings.minutes_per_accepted_case)
