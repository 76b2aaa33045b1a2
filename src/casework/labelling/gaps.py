"""Guideline gaps: notes that a slice's guideline did not settle a case, fed to the next bump.

An adjudicator ticks "guideline gap" with a note (:func:`add_gap`, or through
:func:`casework.labelling.adjudicate`); `casework label guideline gaps` lists the notes by slice
(:func:`list_gaps`) and `casework label guideline bump` shows the open notes of the slice and marks
them addressed by the new version (:func:`bump_with_gaps`). Notes live in the workbench.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from datetime import UTC, date, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from casework.errors import UsageError
from casework.labelling.guidelines import Bump, bump_guideline, guideline_path, read_guideline
from casework.labelling.model import LABELLER_MAX, as_utc
from casework.names import name_problem
from casework.project import Project
from casework.workbench import open_workbench
from casework.workbench.db import workbench_exists
from casework.workbench.models_review import GuidelineGapRow

__all__ = [
    "GapBump",
    "GuidelineGap",
    "add_gap",
    "bump_with_gaps",
    "check_person",
    "list_gaps",
    "store_gap",
]

#: Longest gap note.
NOTE_MAX = 4000


@dataclass(frozen=True)
class GuidelineGap:
    """One gap note.

    Attributes:
        id: Its id.
        slice: The slice whose guideline has the gap.
        guideline_version: The version in force when the note was written.
        note: What the guideline did not settle.
        author: Who wrote it (pseudonymous id).
        dataset: The dataset of the case that showed the gap, if any.
        case_id: That case, if any.
        created_at: When (UTC).
        addressed_version: The version whose bump addressed it, ``None`` while open.
    """

    id: int
    slice: str
    guideline_version: str
    note: str
    author: str
    dataset: str | None
    case_id: str | None
    created_at: datetime
    addressed_version: str | None

    @property
    def open(self) -> bool:
        """True until a bump addressed the note."""
        return self.addressed_version is None

    def as_json(self) -> dict[str, Any]:
        """The note as JSON-ready data."""
        data = asdict(self)
        data["created_at"] = self.created_at.isoformat()
        data["open"] = self.open
        return data


@dataclass(frozen=True)
class GapBump:
    """A guideline bump and the gap notes it addressed.

    Attributes:
        bump: The version change.
        addressed: The notes that were open on the slice, now marked addressed by ``bump.new``.
    """

    bump: Bump
    addressed: tuple[GuidelineGap, ...]


def _gap_of(row: GuidelineGapRow) -> GuidelineGap:
    return GuidelineGap(
        row.id,
        row.slice,
        row.guideline_version,
        row.note,
        row.author,
        row.dataset,
        row.case_id,
        as_utc(row.created_at),
        row.addressed_version,
    )


def check_person(value: str, param: str) -> str:
    """A pseudonymous person id (labeller, adjudicator, reviewer), validated.

    Raises:
        UsageError: Empty or not a name (letters, digits and ._-, at most 64).
    """
    person = value.strip()
    if not person or name_problem(person, max_length=LABELLER_MAX) is not None:
        raise UsageError(
            f"a person's id holds letters, digits and ._- (at most 64). Got '{value}'.",
            param=param,
        )
    return person


def _check_note(note: str) -> str:
    text = note.strip()
    if not text:
        raise UsageError(
            "a guideline gap needs a note: say what the guideline left open.", param="note"
        )
    if len(text) > NOTE_MAX:
        raise UsageError(f"at most {NOTE_MAX} characters. Got {len(text)}.", param="note")
    return text


def store_gap(
    session: Session,
    slice_name: str,
    version: str,
    note: str,
    *,
    author: str,
    dataset: str | None,
    case_id: str | None,
    now: datetime,
) -> GuidelineGapRow:
    """Add a gap note inside the caller's transaction (checked note and author)."""
    row = GuidelineGapRow(
        slice=slice_name,
        guideline_version=version,
        note=_check_note(note),
        author=check_person(author, "author"),
        dataset=dataset,
        case_id=case_id,
        created_at=now,
    )
    session.add(row)
    session.flush()
    return row


def add_gap(
    project: Project,
    slice_name: str,
    note: str,
    *,
    author: str,
    dataset: str | None = None,
    case_id: str | None = None,
    now: datetime | None = None,
) -> GuidelineGap:
    """Record that ``slice_name``'s current guideline did not settle something.

    Raises:
        UsageError: Empty note, bad author id, or a bad slice name.
        ConfigError: The slice has no guideline.
    """
    version = read_guideline(project, slice_name).version
    with open_workbench(project) as wb, wb.session() as session:
        row = store_gap(
            session,
            slice_name,
            version,
            note,
            author=author,
            dataset=dataset,
            case_id=case_id,
            now=now or datetime.now(UTC),
        )
        return _gap_of(row)


def list_gaps(
    project: Project, *, slice_name: str | None = None, open_only: bool = False
) -> list[GuidelineGap]:
    """Gap notes by slice, then age (oldest first); only open ones with ``open_only``.

    A project without a workbench has none (nothing is created to find that out).
    """
    if slice_name is not None:
        guideline_path(project, slice_name)  # a bad slice name is a usage error
    if not workbench_exists(project):
        return []
    with open_workbench(project) as wb, wb.session() as session:
        query = select(GuidelineGapRow).order_by(
            GuidelineGapRow.slice, GuidelineGapRow.created_at, GuidelineGapRow.id
        )
        if slice_name is not None:
            query = query.where(GuidelineGapRow.slice == slice_name)
        if open_only:
            query = query.where(GuidelineGapRow.addressed_version.is_(None))
        return [_gap_of(r) for r in session.scalars(query)]


def bump_with_gaps(
    project: Project,
    slice_name: str,
    message: str,
    *,
    today: date | None = None,
    now: datetime | None = None,
    relabel_where: str | None = None,
) -> GapBump:
    """Bump a slice's guideline (:func:`bump_guideline`) and mark its open gap notes addressed.

    The notes are marked in the same workbench transaction that read them, after the guideline
    file was rewritten; a project without a workbench bumps with no notes. ``relabel_where``
    stores a selector with the new version (see :func:`bump_guideline`).

    Raises:
        UsageError, ConfigError, InputError: As :func:`bump_guideline`.
    """
    if not workbench_exists(project):
        bumped = bump_guideline(
            project, slice_name, message, today=today, relabel_where=relabel_where
        )
        return GapBump(bumped, ())
    with open_workbench(project) as wb, wb.session() as session:
        rows = session.scalars(
            select(GuidelineGapRow)
            .where(GuidelineGapRow.slice == slice_name, GuidelineGapRow.addressed_version.is_(None))
            .order_by(GuidelineGapRow.created_at, GuidelineGapRow.id)
        ).all()
        bump = bump_guideline(
            project, slice_name, message, today=today, relabel_where=relabel_where
        )
        ids = [r.id for r in rows]
        if ids:
            session.execute(
                update(GuidelineGapRow)
                .where(GuidelineGapRow.id.in_(ids))
                .values(addressed_version=bump.new, addressed_at=now or datetime.now(UTC))
            )
        return GapBump(bump, tuple(replace(_gap_of(r), addressed_version=bump.new) for r in rows))
