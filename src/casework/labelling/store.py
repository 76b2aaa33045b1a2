"""The label store: assignments and raw labels in the workbench database, read and written in sessions.

Entry points: :func:`load_work` (everything recorded for a dataset), :func:`load_held_work` (the
rows of the cases one labeller holds), :func:`add_assignments`,
:func:`cancel_assignments`, :func:`add_label`. Callers own the session (one transaction each).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import Select, bindparam, delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from casework.errors import WorkbenchError
from casework.labelling.model import Assignment, OverlapReason, Role, as_utc, yes_tools
from casework.labelling.policy import PlannedAssignment
from casework.schema import LabelRecord, Outcome, ToolRequirement
from casework.workbench import Workbench
from casework.workbench.models_labelling import AssignmentRow, RawLabelRow

__all__ = [
    "StoredAssignment",
    "Work",
    "add_assignments",
    "add_label",
    "cancel_assignments",
    "load_held_work",
    "load_work",
    "record_of",
    "writing",
]


@dataclass(frozen=True)
class StoredAssignment:
    """An assignment with its database id and slice."""

    id: int
    slice: str
    assignment: Assignment


@dataclass(frozen=True)
class Work:
    """Everything the workbench holds for one dataset.

    Attributes:
        assignments: Every assignment, done or not.
        labels: Every raw label, as released records.
    """

    assignments: tuple[StoredAssignment, ...]
    labels: tuple[LabelRecord, ...]

    def assignments_of(self, case_id: str) -> list[Assignment]:
        """The assignments of one case."""
        return [s.assignment for s in self.assignments if s.assignment.case_id == case_id]


@contextlib.contextmanager
def writing(workbench: Workbench, command: str) -> Iterator[Session]:
    """A write transaction; a clash with a concurrent writer becomes a clear error (nothing written).

    Raises:
        WorkbenchError: Another command stored the same assignment or label meanwhile.
    """
    try:
        with workbench.session() as session:
            yield session
    except IntegrityError as exc:
        raise WorkbenchError(
            f"{command}: someone stored the same assignments or labels at the same time; "
            "nothing was written. Run the command again."
        ) from exc


def record_of(row: RawLabelRow) -> LabelRecord:
    """A workbench raw label as a `labels.jsonl` record (tools answered "yes" become the lists)."""
    return LabelRecord(
        case_id=row.case_id,
        labeller=row.labeller,
        role=cast(Role, row.role),
        overlap_reason=cast("OverlapReason | None", row.overlap_reason),
        outcome=cast(Outcome, row.outcome),
        required_tools=[ToolRequirement(name=n) for n in yes_tools(row.required)],
        forbidden_tools=[ToolRequirement(name=n) for n in yes_tools(row.forbidden)],
        answer_facts=[str(f) for f in row.answer_facts],
        guideline_version=row.guideline_version,
        labelled_at=as_utc(row.labelled_at),
    )


def _assignment_of(row: AssignmentRow) -> StoredAssignment:
    return StoredAssignment(
        row.id,
        row.slice,
        Assignment(
            case_id=row.case_id,
            labeller=row.labeller,
            role=cast(Role, row.role),
            overlap_reason=cast("OverlapReason | None", row.overlap_reason),
            guideline_version=row.guideline_version,
            assigned_at=as_utc(row.assigned_at),
            done=row.done,
        ),
    )


def load_work(session: Session, dataset: str) -> Work:
    """Every assignment and raw label recorded for ``dataset``."""
    assignments = session.scalars(
        select(AssignmentRow).where(AssignmentRow.dataset == dataset).order_by(AssignmentRow.id)
    ).all()
    labels = session.scalars(
        select(RawLabelRow).where(RawLabelRow.dataset == dataset).order_by(RawLabelRow.id)
    ).all()
    return Work(tuple(_assignment_of(a) for a in assignments), tuple(record_of(r) for r in labels))


def _held_statements(one_case: bool) -> tuple[Select[Any], Select[Any]]:
    held = select(AssignmentRow.case_id).where(
        AssignmentRow.dataset == bindparam("dataset"),
        AssignmentRow.labeller == bindparam("labeller"),
        AssignmentRow.role.in_(bindparam("roles", expanding=True)),
    )
    if one_case:
        held = held.where(AssignmentRow.case_id == bindparam("case_id"))
    assignments = (
        select(AssignmentRow)
        .where(AssignmentRow.dataset == bindparam("dataset"), AssignmentRow.case_id.in_(held))
        .order_by(AssignmentRow.id)
    )
    labels = (
        select(RawLabelRow)
        .where(RawLabelRow.dataset == bindparam("dataset"), RawLabelRow.case_id.in_(held))
        .order_by(RawLabelRow.id)
    )
    return assignments, labels


# Built once: building and keying a statement costs more than running these small queries.
_HELD = {one: _held_statements(one) for one in (False, True)}


def load_held_work(
    session: Session,
    dataset: str,
    labeller: str,
    roles: Sequence[str],
    *,
    case_id: str | None = None,
) -> Work:
    """Every assignment and raw label of the cases of ``dataset`` that ``labeller`` holds in ``roles``.

    Work proportional to the labeller's own cases (two indexed queries), not to the dataset:
    the rows of the other people holding those cases come too, so each case's round is whole.
    ``case_id`` narrows it to that one case.
    """
    params: dict[str, Any] = {"dataset": dataset, "labeller": labeller, "roles": list(roles)}
    if case_id is not None:
        params["case_id"] = case_id
    assignments_of, labels_of = _HELD[case_id is not None]
    assignments = session.scalars(assignments_of, params).all()
    labels = session.scalars(labels_of, params).all()
    return Work(tuple(_assignment_of(a) for a in assignments), tuple(record_of(r) for r in labels))


def add_assignments(
    session: Session,
    dataset: str,
    planned: Iterable[PlannedAssignment],
    versions: Mapping[str, str],
    now: datetime,
) -> int:
    """Record planned assignments under their slice's guideline version; returns how many."""
    count = 0
    for item in planned:
        session.add(
            AssignmentRow(
                dataset=dataset,
                case_id=item.case_id,
                slice=item.slice,
                labeller=item.labeller,
                role=item.role,
                overlap_reason=item.overlap_reason,
                guideline_version=versions[item.slice],
                assigned_at=now,
                done=False,
            )
        )
        count += 1
    session.flush()
    return count


def cancel_assignments(session: Session, ids: Sequence[int]) -> int:
    """Delete open assignments by id (stale work under a superseded guideline); returns how many."""
    if not ids:
        return 0
    session.execute(
        delete(AssignmentRow).where(AssignmentRow.id.in_(list(ids)), AssignmentRow.done.is_(False))
    )
    return len(ids)


def add_label(
    session: Session,
    dataset: str,
    slice_name: str,
    assignment: StoredAssignment,
    *,
    outcome: str,
    required: Mapping[str, bool],
    forbidden: Mapping[str, bool],
    answer_facts: Sequence[str],
    labelled_at: datetime,
    source: str,
    seconds_on_screen: float | None = None,
) -> bool:
    """Store one raw label and mark its assignment done.

    The assignment is marked done by one conditional update (``done`` false -> true) before the
    label is added, so of two concurrent writers of the same assignment exactly one sees True;
    the other's label still meets the unique key (case, labeller, guideline version) if flushed.
    ``seconds_on_screen`` is how long the case was shown before the answer (web labels; sheets
    cannot know it and leave it empty).

    Returns:
        Whether this call marked the assignment done (False: it was done already).
    """
    a = assignment.assignment
    claimed = session.execute(
        update(AssignmentRow)
        .where(AssignmentRow.id == assignment.id, AssignmentRow.done.is_(False))
        .values(done=True, done_at=labelled_at)
    )
    session.add(
        RawLabelRow(
            dataset=dataset,
            case_id=a.case_id,
            slice=slice_name,
            labeller=a.labeller,
            role=a.role,
            overlap_reason=a.overlap_reason,
            guideline_version=a.guideline_version,
            outcome=outcome,
            required=dict(required),
            forbidden=dict(forbidden),
            answer_facts=list(answer_facts),
            assigned_at=a.assigned_at,
            labelled_at=labelled_at,
            source=source,
            seconds_on_screen=seconds_on_screen,
        )
    )
    return bool(getattr(claimed, "rowcount", 0))
