"""`casework label assign`: apply the assignment policy to a dataset's labelling queue.

The queue is every case without a label, plus (with ``relabel_under``) every case labelled under
that superseded guideline version. Contested rows get an adjudicator in the same pass.
Entry point: :func:`assign_labels`.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from casework.errors import UsageError
from casework.labelling.dataset_state import DatasetState, dataset_name, load_state
from casework.labelling.guidelines import read_guideline
from casework.labelling.model import ROLE_ORDER
from casework.labelling.policy import (
    AssignmentPlan,
    Contested,
    PlannedAssignment,
    QueueRow,
    Skipped,
    plan_adjudication,
    plan_labelling,
)
from casework.labelling.relabel_rule import SAMPLE_SIZE, RelabelRule, rules_since, touched_by
from casework.labelling.snapshot import SliceCalibration
from casework.labelling.store import Work, add_assignments, cancel_assignments, writing
from casework.project import Project
from casework.workbench import open_workbench
from casework.workbench.db import workbench_exists

__all__ = ["AssignReport", "assign_labels"]


@dataclass(frozen=True)
class AssignReport:
    """What `label assign` did (or, with ``dry_run``, would do).

    Attributes:
        dataset: Dataset name.
        assignments: New assignments, in case-id order.
        skipped: Cases that could not be assigned, and why.
        cancelled: Open assignments dropped because their guideline was superseded.
        calibration: Per slice: kappa, rows and whether it left full double labelling.
        relabel: Cases sent back for relabelling (with ``relabel_under``).
        relabel_labelled: Cases labelled under ``relabel_under`` (sent back or not).
        relabel_rules: The rules that chose which of them go back (the selectors stored with
            the guideline versions since; empty when a version came without one: then all go).
        relabel_sample: The first ids sent back by those rules.
        waiting: Cases already decided but not released (`casework dataset apply` lands them).
        dry_run: Nothing was written.
        by_labeller: New assignments per labeller and role.
    """

    dataset: str
    assignments: tuple[PlannedAssignment, ...]
    skipped: tuple[Skipped, ...]
    cancelled: int
    calibration: dict[str, SliceCalibration]
    relabel: int = 0
    relabel_labelled: int = 0
    relabel_rules: tuple[RelabelRule, ...] = ()
    relabel_sample: tuple[str, ...] = ()
    waiting: int = 0
    dry_run: bool = False
    by_labeller: dict[str, dict[str, int]] = field(default_factory=dict)


def _check_relabel(state: DatasetState, version: str) -> None:
    used = {c.case.label.guideline_version for c in state.snapshot.cases if c.case.label}
    current = set(state.snapshot.versions.values())
    if version in current:
        slice_name = next(s for s, v in state.snapshot.versions.items() if v == version)
        raise UsageError(
            f"{version} is the current guideline of slice '{slice_name}'. "
            "Bump the guideline first.",
            param="relabel_under",
        )
    if version not in used:
        known = ", ".join(sorted(v for v in used if v)) or "none"
        raise UsageError(
            f"no case of {state.dataset.name} is labelled under {version} "
            f"(guideline versions on labels: {known}).",
            param="relabel_under",
        )


def _stale_open(work: Work, versions: dict[str, str]) -> list[int]:
    return [
        s.id
        for s in work.assignments
        if not s.assignment.done and s.assignment.guideline_version != versions.get(s.slice)
    ]


def assign_labels(
    project: Project,
    dataset: str,
    labellers: Sequence[str],
    *,
    relabel_under: str | None = None,
    dry_run: bool = False,
    now: datetime | None = None,
) -> AssignReport:
    """Assign the labelling queue and the contested rows of ``dataset`` to ``labellers``.

    With ``relabel_under``, rows labelled under that superseded version go back: those the rules
    stored with the versions since select (:mod:`casework.labelling.relabel_rule`), or all of
    them when one of those versions came without a selector. Open assignments under a superseded guideline are cancelled first and their cases re-queued
    under the current one. Slices are calibrated (one labeller plus audits) or not (two
    labellers) per :func:`casework.labelling.policy.is_calibrated`.

    Raises:
        UsageError: Unknown dataset, or ``relabel_under`` is current or labels no case.
        InputErrors: Bad dataset files or guidelines.
    """
    name = dataset_name(dataset, "label assign")
    when = now or datetime.now(UTC)
    if dry_run and not workbench_exists(project):
        # No workbench yet: nothing is assigned, and a dry run must not create the database.
        state = load_state(project, name, None, work=Work((), ()))
        stale: list[int] = []
        if relabel_under is not None:
            _check_relabel(state, relabel_under)
        calibration = state.calibration(project)
        plan, relabel = _plan(state, labellers, calibration, project, relabel_under)
    else:
        with open_workbench(project) as wb, writing(wb, "label assign") as session:
            state = load_state(project, name, session)
            stale = _stale_open(state.work, dict(state.snapshot.versions))
            if stale:
                gone = set(stale)
                kept = Work(
                    tuple(s for s in state.work.assignments if s.id not in gone),
                    state.work.labels,
                )
                state = load_state(project, name, session, work=kept)
            if relabel_under is not None:
                _check_relabel(state, relabel_under)
            calibration = state.calibration(project)
            plan, relabel = _plan(state, labellers, calibration, project, relabel_under)
            if not dry_run:
                cancel_assignments(session, stale)
                add_assignments(session, name, plan.assignments, state.snapshot.versions, when)
    by_labeller: dict[str, Counter[str]] = defaultdict(Counter)
    for item in plan.assignments:
        by_labeller[item.labeller][item.role] += 1
    return AssignReport(
        dataset=name,
        assignments=plan.assignments,
        skipped=plan.skipped,
        cancelled=len(stale),
        calibration=calibration,
        relabel=len(relabel.sent),
        relabel_labelled=relabel.labelled,
        relabel_rules=relabel.rules,
        relabel_sample=tuple(sorted(relabel.sent))[:SAMPLE_SIZE],
        waiting=len(state.snapshot.by_status("ready")),
        dry_run=dry_run,
        by_labeller={
            lab: dict(sorted(roles.items())) for lab, roles in sorted(by_labeller.items())
        },
    )


@dataclass
class _Relabel:
    """Rows labelled under the superseded version, and which of them the rules send back."""

    labelled: int = 0
    sent: list[str] = field(default_factory=list)
    rules: tuple[RelabelRule, ...] = ()


def _rules(
    project: Project, slice_name: str, old: str, current: str
) -> tuple[RelabelRule, ...] | None:
    text = read_guideline(project, slice_name).text
    return rules_since(text, slice_name, old, current)


def _plan(
    state: DatasetState,
    labellers: Sequence[str],
    calibration: dict[str, SliceCalibration],
    project: Project,
    relabel_under: str | None,
) -> tuple[AssignmentPlan, _Relabel]:
    config = project.config.labelling
    rows: list[QueueRow] = []
    contested: list[Contested] = []
    taken: dict[str, set[str]] = {}
    previous: dict[str, frozenset[str]] = {}
    relabel = _Relabel()
    rules_of: dict[str, tuple[RelabelRule, ...] | None] = {}
    labels_by_case: dict[str, set[str]] = defaultdict(set)
    for record in state.snapshot.labels:
        labels_by_case[record.case_id].add(record.labeller)
    for progress in state.snapshot.cases:
        case = progress.case
        found = progress.round
        wanted = progress.status == "queued"
        if (
            progress.status == "stale"
            and relabel_under is not None
            and case.label is not None
            and case.label.guideline_version == relabel_under
        ):
            relabel.labelled += 1
            if case.slice not in rules_of:
                rules_of[case.slice] = _rules(
                    project, case.slice, relabel_under, progress.current_version
                )
            rules = rules_of[case.slice]
            if rules is None or touched_by(case, rules):
                wanted = True
                relabel.sent.append(case.id)
            if rules:
                relabel.rules = rules
        if wanted:
            rows.append(QueueRow(case.id, case.slice))
            holders = (
                found.holders
                if found and found.guideline_version == progress.current_version
                else set()
            )
            taken[case.id] = holders
            previous[case.id] = frozenset(labels_by_case.get(case.id, set()))
        elif progress.status == "contested" and found is not None:
            contested.append(Contested(case.id, case.slice, found.labellers))
            taken[case.id] = found.holders
    load: Counter[str] = Counter(
        s.assignment.labeller for s in state.work.assignments if not s.assignment.done
    )
    first = plan_labelling(
        rows,
        labellers,
        {s: c.calibrated for s, c in calibration.items()},
        share=config.second_label_share,
        salt=config.salt,
        load=load,
        taken=taken,
        previous=previous,
    )
    second = plan_adjudication(
        contested, labellers, salt=config.salt, load=load + first.load(), taken=taken
    )
    merged = AssignmentPlan(
        tuple(
            sorted(
                first.assignments + second.assignments,
                key=lambda a: (a.case_id, ROLE_ORDER[a.role]),
            )
        ),
        first.skipped + second.skipped,
    )
    return merged, relabel
