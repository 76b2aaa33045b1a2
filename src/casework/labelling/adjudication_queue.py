"""The adjudication queue: disagreements, lowest-agreement slice first, and deciding one.

:func:`adjudication_queue` lists every contested case (or one an adjudicator holds) with its blind
labels side by side as A and B, like the adjudication sheets, ordered by the slice's kappa under
its current guideline (lowest first; a slice whose kappa is undefined comes first: nothing shows
it agrees). Labeller names are left out unless asked for. :func:`adjudicate` stores the final
label through the same path as `casework review import` (the adjudicator's assignment, then
:func:`casework.labelling.store.add_label`), optionally with a guideline gap note.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Literal, get_args

from sqlalchemy import func, select, text
from sqlalchemy.exc import OperationalError
from sqlalchemy.orm import Session

from casework.dataset import declared_tools
from casework.errors import DecisionConflict, UsageError
from casework.labelling.dataset_state import DatasetState, dataset_name, load_state
from casework.labelling.gaps import GuidelineGap, check_person, store_gap
from casework.labelling.gaps import _gap_of as gap_of
from casework.labelling.model import labels_in_role_order
from casework.labelling.policy import PlannedAssignment
from casework.labelling.snapshot import CaseProgress
from casework.labelling.store import (
    StoredAssignment,
    _assignment_of,
    add_assignments,
    add_label,
    writing,
)
from casework.project import Project
from casework.schema import OUTCOMES, LabelRecord
from casework.workbench import open_workbench
from casework.workbench.models_labelling import AssignmentRow, RawLabelRow

__all__ = [
    "MERGE_FIELDS",
    "Adjudicated",
    "AdjudicationChoice",
    "AdjudicationQueue",
    "FinalLabel",
    "QueueEntry",
    "ShownLabel",
    "adjudicate",
    "adjudicate_in",
    "adjudication_queue",
]

AdjudicationChoice = Literal["A", "B", "merge", "write"]
"""Pick label A, pick label B, merge them field by field, or write the final label."""
MergeField = Literal["outcome", "required_tools", "forbidden_tools", "answer_facts"]
MERGE_FIELDS: tuple[MergeField, ...] = get_args(MergeField)
"""Fields a merge takes from A or B."""


@dataclass(frozen=True)
class ShownLabel:
    """One blind label as the adjudicator sees it (no labeller id, no timestamp).

    Attributes:
        name: ``A`` or ``B`` (role order: first, then second).
        outcome: The outcome class.
        required_tools: Tools marked required, sorted.
        forbidden_tools: Tools marked forbidden, sorted.
        answer_facts: Facts the labeller expects in the reply.
    """

    name: str
    outcome: str
    required_tools: tuple[str, ...]
    forbidden_tools: tuple[str, ...]
    answer_facts: tuple[str, ...]


@dataclass(frozen=True)
class FinalLabel:
    """The label an adjudicator decides (tools by name; matchers are kept by the release).

    Attributes:
        outcome: The outcome class.
        required_tools: Required tools.
        forbidden_tools: Forbidden tools.
        answer_facts: Expected facts.
    """

    outcome: str
    required_tools: tuple[str, ...] = ()
    forbidden_tools: tuple[str, ...] = ()
    answer_facts: tuple[str, ...] = ()


@dataclass(frozen=True)
class QueueEntry:
    """One disagreement waiting for an adjudicator.

    Attributes:
        case_id: The case.
        slice: Its slice.
        guideline_version: The round's (current) guideline version.
        slice_kappa: The slice's Cohen kappa under that version (``None``: undefined).
        slice_rows: Double-labelled rows that kappa is computed on.
        differs: Fields the labels differ on.
        labels: The blind labels, A then B.
        situation: The case's situation (what the labellers saw).
        assigned: True when an adjudicator holds the case.
        names: Only when names are revealed: ``A``/``B``/``adjudicator`` to people's ids.
    """

    case_id: str
    slice: str
    guideline_version: str
    slice_kappa: float | None
    slice_rows: int
    differs: tuple[str, ...]
    labels: tuple[ShownLabel, ...]
    situation: dict[str, Any]
    assigned: bool
    names: dict[str, str] | None = None


@dataclass(frozen=True)
class AdjudicationQueue:
    """A dataset's open disagreements, lowest-agreement slice first.

    Attributes:
        dataset: Dataset name.
        tools: Declared tools (name, description) for writing a final label.
        entries: The disagreements.
    """

    dataset: str
    tools: tuple[tuple[str, str], ...]
    entries: tuple[QueueEntry, ...]

    def as_json(self) -> dict[str, Any]:
        """The queue as JSON-ready data (names only where they were revealed)."""
        data = asdict(self)
        data["tools"] = [{"name": n, "description": d} for n, d in self.tools]
        for entry in data["entries"]:
            if entry["names"] is None:
                del entry["names"]
        return data


@dataclass(frozen=True)
class Adjudicated:
    """What :func:`adjudicate` stored.

    Attributes:
        dataset: Dataset name.
        case_id: The case.
        slice: Its slice.
        guideline_version: The round.
        label: The final label stored as the adjudicator's raw label.
        assigned_now: True when the case had no adjudicator and was assigned to this one.
        gap: The guideline gap note stored with it, if any.
    """

    dataset: str
    case_id: str
    slice: str
    guideline_version: str
    label: FinalLabel
    assigned_now: bool
    gap: GuidelineGap | None

    def as_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        data = asdict(self)
        data["gap"] = self.gap.as_json() if self.gap else None
        return data


def _shown(name: str, record: LabelRecord) -> ShownLabel:
    return ShownLabel(
        name,
        record.outcome,
        tuple(sorted(t.name for t in record.required_tools)),
        tuple(sorted(t.name for t in record.forbidden_tools)),
        tuple(record.answer_facts),
    )


def _blind(progress: CaseProgress) -> list[LabelRecord]:
    found = progress.round
    if found is None:
        return []
    return [r for r in labels_in_role_order(found.labels) if r.role != "adjudicator"]


def _holder(state: DatasetState, progress: CaseProgress) -> StoredAssignment | None:
    version = progress.round.guideline_version if progress.round else None
    return next(
        (
            s
            for s in state.work.assignments
            if s.assignment.case_id == progress.case.id
            and s.assignment.role == "adjudicator"
            and not s.assignment.done
            and s.assignment.guideline_version == version
        ),
        None,
    )


def _entry(
    state: DatasetState, progress: CaseProgress, kappa: float | None, rows: int, reveal: bool
) -> QueueEntry:
    blind = _blind(progress)
    holder = _holder(state, progress)
    names = None
    if reveal:
        names = {chr(ord("A") + i): r.labeller for i, r in enumerate(blind)}
        if holder is not None:
            names["adjudicator"] = holder.assignment.labeller
    found = progress.round
    assert found is not None  # contested and adjudicating cases have a round
    return QueueEntry(
        progress.case.id,
        progress.case.slice,
        found.guideline_version,
        kappa,
        rows,
        found.differs,
        tuple(_shown(chr(ord("A") + i), r) for i, r in enumerate(blind)),
        progress.case.situation.model_dump(mode="json", by_alias=True, exclude_defaults=True),
        holder is not None,
        names,
    )


def _may_decide(state: DatasetState, progress: CaseProgress, person: str) -> bool:
    holder = _holder(state, progress)
    if holder is not None:
        return holder.assignment.labeller == person
    return progress.round is not None and person not in progress.round.holders


def adjudication_queue(
    project: Project,
    dataset: str,
    *,
    reveal_names: bool = False,
    adjudicator: str | None = None,
) -> AdjudicationQueue:
    """Open disagreements of ``dataset``, lowest-agreement slice first, then by case id.

    Args:
        project: The project.
        dataset: Dataset name (working tree).
        reveal_names: Include labeller (and adjudicator) ids; left out by default.
        adjudicator: Only cases this person may decide: those they hold, and unassigned ones
            they did not label.

    Raises:
        UsageError: Unknown dataset, or a bad adjudicator id.
        InputErrors: Bad dataset files or guidelines, or hand-edited raw labels.
    """
    name = dataset_name(dataset, "adjudication queue")
    person = check_person(adjudicator, "adjudicator") if adjudicator is not None else None
    tools = declared_tools(project)
    with open_workbench(project) as wb, wb.session() as session:
        state = load_state(project, name, session)
    calibration = state.calibration(project)
    entries = []
    for progress in state.snapshot.by_status("contested", "adjudicating"):
        if progress.round is None or (person and not _may_decide(state, progress, person)):
            continue
        cal = calibration[progress.case.slice]
        entries.append(_entry(state, progress, cal.kappa, cal.rows, reveal_names))
    entries.sort(
        key=lambda e: (e.slice_kappa is not None, e.slice_kappa or 0.0, e.slice, e.case_id)
    )
    return AdjudicationQueue(
        name, tuple((t.name, t.description or "") for t in tools.values()), tuple(entries)
    )


def _merged(
    blind: Sequence[ShownLabel], differs: Sequence[str], fields: Mapping[str, str] | None
) -> FinalLabel:
    chosen = dict(fields or {})
    unknown = sorted(set(chosen) - set(MERGE_FIELDS))
    bad = sorted(f for f, side in chosen.items() if side not in ("A", "B"))
    if unknown or bad:
        raise UsageError(
            f"a merge takes each of {', '.join(MERGE_FIELDS)} from A or B. "
            f"Got {', '.join(f'{f}={chosen[f]}' for f in unknown + bad)}.",
            param="fields",
        )
    missing = [f for f in differs if f not in chosen]
    if missing:
        raise UsageError(
            f"the labels differ on {', '.join(differs)}: say which side each comes from "
            f"(missing: {', '.join(missing)}).",
            param="fields",
        )
    side = {"A": blind[0], "B": blind[1]}
    pick = {f: side[chosen.get(f, "A")] for f in MERGE_FIELDS}
    return FinalLabel(
        pick["outcome"].outcome,
        pick["required_tools"].required_tools,
        pick["forbidden_tools"].forbidden_tools,
        pick["answer_facts"].answer_facts,
    )


def _final(
    choice: str,
    blind: Sequence[ShownLabel],
    differs: Sequence[str],
    fields: Mapping[str, str] | None,
    label: FinalLabel | None,
) -> FinalLabel:
    if choice in ("A", "B"):
        shown = blind[0 if choice == "A" else 1]
        return FinalLabel(
            shown.outcome, shown.required_tools, shown.forbidden_tools, shown.answer_facts
        )
    if choice == "merge":
        return _merged(blind, differs, fields)
    if label is None:
        raise UsageError("writing the final label needs the label itself.", param="label")
    return label


def _check_final(final: FinalLabel, tools: Sequence[str]) -> None:
    if final.outcome not in OUTCOMES:
        raise UsageError(
            f"must be one of {', '.join(OUTCOMES)}. Got '{final.outcome}'.", param="outcome"
        )
    for group, names in (("required", final.required_tools), ("forbidden", final.forbidden_tools)):
        unknown = sorted(set(names) - set(tools))
        if unknown:
            raise UsageError(
                f"not a declared tool (declared: {', '.join(tools) or 'none'}). "
                f"Got {', '.join(unknown)}.",
                param=group,
            )
    both = sorted(set(final.required_tools) & set(final.forbidden_tools))
    if both:
        raise UsageError(
            f"a tool cannot be both required and forbidden. Got {', '.join(both)}.",
            param="forbidden",
        )


def _assignment(
    session: Session,
    state: DatasetState,
    progress: CaseProgress,
    person: str,
    when: datetime,
) -> tuple[StoredAssignment, bool]:
    """The adjudicator's open assignment of the case; assigned now when nobody holds it."""
    found = progress.round
    assert found is not None
    holder = _holder(state, progress)
    if holder is not None:
        if holder.assignment.labeller != person:
            raise UsageError(
                f"case '{progress.case.id}' is held by another adjudicator.", param="adjudicator"
            )
        return holder, False
    if person in found.holders:
        raise UsageError(
            f"{person} labelled case '{progress.case.id}'; an adjudicator labelled neither side.",
            param="adjudicator",
        )
    planned = PlannedAssignment(
        progress.case.id, progress.case.slice, person, "adjudicator", "disagreement"
    )
    add_assignments(session, state.dataset.name, [planned], state.snapshot.versions, when)
    row = session.scalars(
        select(AssignmentRow).where(
            AssignmentRow.dataset == state.dataset.name,
            AssignmentRow.case_id == progress.case.id,
            AssignmentRow.labeller == person,
            AssignmentRow.guideline_version == found.guideline_version,
        )
    ).one()
    return _assignment_of(row), True


def _check_args(choice: str, seconds: float | None) -> None:
    if choice not in get_args(AdjudicationChoice):
        raise UsageError(f"must be A, B, merge or write. Got '{choice}'.", param="choice")
    if seconds is not None and not seconds >= 0:
        raise UsageError(f"must be 0 or more seconds. Got {seconds}.", param="seconds")


def adjudicate(
    project: Project,
    dataset: str,
    case_id: str,
    *,
    adjudicator: str,
    choice: AdjudicationChoice,
    fields: Mapping[str, str] | None = None,
    label: FinalLabel | None = None,
    gap_note: str | None = None,
    seconds: float | None = None,
    now: datetime | None = None,
) -> Adjudicated:
    """Decide one disagreement: pick A or B, merge them field-wise, or write the final label.

    The decision is stored as the adjudicator's raw label on their assignment, exactly as an
    imported adjudication sheet line is (so `casework dataset apply` applies it). A contested case
    nobody holds is assigned to ``adjudicator`` first, when they labelled neither side. With
    ``gap_note`` a guideline gap note of the slice is stored in the same transaction.

    Args:
        project: The project.
        dataset: Dataset name.
        case_id: The contested case.
        adjudicator: Who decides (pseudonymous id).
        choice: ``A``, ``B``, ``merge`` or ``write``.
        fields: For ``merge``: per field of :data:`MERGE_FIELDS`, ``A`` or ``B`` (fields the
            labels agree on may be left out; answer facts default to A's).
        label: For ``write``: the final label.
        gap_note: Tick "guideline gap" with this note.
        seconds: Seconds the case was on screen (stored on the raw label).
        now: Time of the decision (tests).

    Raises:
        UsageError: Unknown dataset or case, a case not contested, a bad choice or label, an
            adjudicator who labelled the case, or a case held by another adjudicator.
        DecisionConflict: Another adjudicator decided the case at the same time (nothing stored).
        WorkbenchError: A concurrent writer stored the same label (nothing stored).
    """
    _check_args(choice, seconds)
    name = dataset_name(dataset, "adjudicate")
    person = check_person(adjudicator, "adjudicator")
    tools = list(declared_tools(project))
    when = now or datetime.now(UTC)
    asked = (choice, fields, label, gap_note, seconds)
    try:
        with open_workbench(project) as wb, writing(wb, "adjudicate") as session:
            return _adjudicate(session, project, name, case_id, person, tools, asked, when)
    except OperationalError as exc:  # SQLite: another writer held the database
        raise DecisionConflict(
            f"case '{case_id}': another adjudicator was storing a decision at the same time; "
            "nothing was stored. Look at the case again."
        ) from exc


def adjudicate_in(
    session: Session,
    project: Project,
    dataset: str,
    case_id: str,
    *,
    adjudicator: str,
    choice: AdjudicationChoice,
    fields: Mapping[str, str] | None = None,
    label: FinalLabel | None = None,
    gap_note: str | None = None,
    seconds: float | None = None,
    now: datetime | None = None,
) -> Adjudicated:
    """:func:`adjudicate` inside the caller's write transaction (the review queue's decide).

    The same checks and the same stored label as :func:`adjudicate`; the caller commits, so a
    decision recorded elsewhere in that transaction stands or falls with the label.

    Raises:
        UsageError: As :func:`adjudicate`.
        DecisionConflict: Another adjudicator's label for the case landed too.
    """
    _check_args(choice, seconds)
    name = dataset_name(dataset, "adjudicate")
    person = check_person(adjudicator, "adjudicator")
    tools = list(declared_tools(project))
    when = now or datetime.now(UTC)
    asked = (choice, fields, label, gap_note, seconds)
    return _adjudicate(session, project, name, case_id, person, tools, asked, when)


def _adjudicate(
    session: Session,
    project: Project,
    name: str,
    case_id: str,
    person: str,
    tools: list[str],
    asked: tuple[str, Mapping[str, str] | None, FinalLabel | None, str | None, float | None],
    when: datetime,
) -> Adjudicated:
    choice, fields, label, gap_note, seconds = asked
    _lock_case(session, name, case_id)
    state = load_state(project, name, session)
    progress = state.snapshot.by_id.get(case_id)
    if progress is None:
        raise UsageError(f"no case '{case_id}' in dataset '{name}'.", param="case_id")
    if progress.status not in ("contested", "adjudicating") or progress.round is None:
        raise UsageError(
            f"case '{case_id}' is {progress.status}: there is no disagreement to decide.",
            param="case_id",
        )
    found = progress.round
    blind = [_shown(chr(ord("A") + i), r) for i, r in enumerate(_blind(progress))]
    final = _final(choice, blind, found.differs, fields, label)
    _check_final(final, tools)
    stored, assigned_now = _assignment(session, state, progress, person, when)
    add_label(
        session,
        name,
        progress.case.slice,
        stored,
        outcome=final.outcome,
        required={t: t in final.required_tools for t in tools},
        forbidden={t: t in final.forbidden_tools for t in tools},
        answer_facts=list(final.answer_facts),
        labelled_at=when,
        source="adjudication queue",
    )
    session.flush()
    _stamp_and_check(session, name, case_id, found.guideline_version, person, seconds)
    gap = None
    if gap_note is not None:
        gap = gap_of(
            store_gap(
                session,
                progress.case.slice,
                found.guideline_version,
                gap_note,
                author=person,
                dataset=name,
                case_id=case_id,
                now=when,
            )
        )
    return Adjudicated(
        name, case_id, progress.case.slice, found.guideline_version, final, assigned_now, gap
    )


def _lock_case(session: Session, dataset: str, case_id: str) -> None:
    """Serialise decisions on one case: a transaction-scoped advisory lock on PostgreSQL.

    SQLite serialises writers itself (and the count in :func:`_stamp_and_check` catches a late
    one); on PostgreSQL two transactions would not see each other's uncommitted labels.
    """
    if session.get_bind().dialect.name != "postgresql":
        return
    digest = hashlib.sha256(f"adjudicate\0{dataset}\0{case_id}".encode()).digest()
    session.execute(
        text("SELECT pg_advisory_xact_lock(:key)"),
        {"key": int.from_bytes(digest[:8], "big", signed=True)},
    )


def _stamp_and_check(
    session: Session,
    dataset: str,
    case_id: str,
    version: str,
    person: str,
    seconds: float | None,
) -> None:
    """Store the seconds on the new label; refuse when another adjudicator's label landed too."""
    of_case = (
        RawLabelRow.dataset == dataset,
        RawLabelRow.case_id == case_id,
        RawLabelRow.guideline_version == version,
        RawLabelRow.role == "adjudicator",
    )
    count = session.scalar(select(func.count()).select_from(RawLabelRow).where(*of_case))
    if count and count > 1:
        raise DecisionConflict(
            f"case '{case_id}' was decided by another adjudicator at the same time; "
            "nothing was stored."
        )
    if seconds is not None:
        row = session.scalars(
            select(RawLabelRow).where(*of_case, RawLabelRow.labeller == person)
        ).one()
        row.seconds_on_screen = float(seconds)
