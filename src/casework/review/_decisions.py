"""Decide review items of any kind in bulk from a decisions file (JSONL), all or nothing.

One :class:`ReviewDecision` a line. :func:`read_decisions` reads a file (every malformed line
reported); :func:`decide_from_file` checks every line against the queue (the item is open, the
decision fits its kind, the data the kind needs; a disagreement's adjudicator rules are tried in
a transaction that is rolled back) and only then stores the decisions, each through
:func:`casework.review.decide_task`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from casework.dataset.jsonl import read_records
from casework.errors import CaseworkError, InputErrors, Problem, UsageError
from casework.labelling.gaps import check_person
from casework.project import Project
from casework.review._kinds import review_kind, review_kinds
from casework.review._queue import check_decision, decide_task, list_tasks, rehearse_decision
from casework.review._task import ReviewTask

_DATA_FIELDS = ("case", "fields", "label", "gap_note")


class ReviewDecision(BaseModel):
    """One line of a decisions file: the fields `casework review decide` takes for one item."""

    model_config = ConfigDict(extra="forbid")

    item: int | str
    """Review item id, or the subject it is about (a case id; a leakage pair's subject)."""
    decision: str
    """A decision the item's kind takes (``accept``, ``move-left``, ``A``, ``resolve``…)."""
    reviewer: str
    """Who decided (pseudonymous id)."""
    reason: str | None = None
    """Why (required to reject a generated case)."""
    seconds: float | None = Field(default=None, ge=0)
    """Seconds the item was on screen."""
    case: dict[str, Any] | None = None
    """Generated case, ``edit`` only: the edited case."""
    fields: dict[str, str] | None = None
    """Disagreement, ``merge`` only: the side (``A`` or ``B``) each label field comes from."""
    label: dict[str, Any] | None = None
    """Disagreement, ``write`` only: the final label (``outcome``, ``required_tools``…)."""
    gap_note: str | None = None
    """Disagreement: tick 'guideline gap' with this note."""

    @field_validator("decision")
    @classmethod
    def _a_known_decision(cls, value: str) -> str:
        known = sorted({d for kind in review_kinds().values() for d in kind.decisions})
        if value not in known:
            raise ValueError(f"must be a decision of some review kind ({', '.join(known)})")
        return value

    def data(self) -> dict[str, Any] | None:
        """What the decision carries besides its name, as :func:`decide_task` takes it."""
        out = {f: getattr(self, f) for f in _DATA_FIELDS if getattr(self, f) is not None}
        return out or None


@dataclass(frozen=True)
class DecisionsRead:
    """A decisions file as read: its lines and the file line each came from.

    Attributes:
        shown: How the file is named in messages.
        lines: The decisions, in file order.
        line_numbers: The 1-based file line of each decision.
    """

    shown: str
    lines: tuple[ReviewDecision, ...]
    line_numbers: tuple[int, ...]


def read_decisions(path: Path, shown: str) -> DecisionsRead:
    """Read a decisions file, reporting every malformed line.

    Raises:
        UsageError: No file at ``path``.
        InputErrors: A line that is not a decision (nothing is returned).
    """
    if not path.is_file():
        raise UsageError(f"no decision file at {shown}.", param="decisions")
    read = read_records(path, ReviewDecision, shown=shown)
    numbers = tuple(read.line(i) for i in range(len(read.records)))
    return DecisionsRead(shown, tuple(read.records), numbers)


def _resolve(line: ReviewDecision, by_id: dict[int, ReviewTask], what: str) -> ReviewTask | str:
    if isinstance(line.item, int):
        found = by_id.get(line.item)
        return found if found is not None else f"no {what} has this id or case id"
    named = [t for t in by_id.values() if t.subject == line.item]
    if not named:
        return f"no {what} has this id or case id"
    if len(named) > 1:
        ids = ", ".join(str(t.id) for t in named)
        return f"{len(named)} open items are about this subject ({ids}): give the item id"
    return named[0]


def _field_of(line: ReviewDecision, param: str | None) -> str:
    if param != "data":
        return param or "decision"
    return next((f for f in _DATA_FIELDS if getattr(line, f) is not None), "decision")


def _check_line(
    project: Project, shown: str, number: int, task: ReviewTask, line: ReviewDecision
) -> list[Problem]:
    try:
        check_person(line.reviewer, "reviewer")
        check_decision(task, line.decision, line.reason, line.seconds)
        review_kind(task.kind).check(project, task, line.decision, line.reason, line.data())
    except UsageError as exc:
        reason = str(exc.args[0]).rstrip(".")
        return [Problem(shown, number, _field_of(line, exc.param), reason, None, False)]
    except InputErrors as exc:
        return [
            Problem(
                shown, number, f"case.{p.field}" if p.field else "case", p.message, p.got, p.has_got
            )
            for p in exc.problems
        ]
    return []


def _rehearsed(
    project: Project, shown: str, number: int, task: ReviewTask, line: ReviewDecision
) -> list[Problem]:
    try:
        rehearse_decision(
            project,
            task,
            line.decision,
            reviewer=line.reviewer,
            reason=line.reason,
            seconds=line.seconds,
            data=line.data(),
        )
    except UsageError as exc:
        field = (
            "reviewer" if exc.param in ("adjudicator", "reviewer") else _field_of(line, exc.param)
        )
        reason = str(exc.args[0]).rstrip(".")
        return [Problem(shown, number, field, reason, None, False)]
    except CaseworkError as exc:
        return [Problem(shown, number, "item", str(exc).rstrip("."), None, False)]
    return []


def _check_decisions(
    project: Project,
    read: DecisionsRead,
    *,
    open_items: Sequence[ReviewTask] | None = None,
    what: str = "open review item",
) -> list[ReviewTask]:
    """The open item each line decides, once every line is checked; nothing is stored.

    Args:
        project: The project.
        read: The decisions file as read.
        open_items: The items the file may decide (default: every open item).
        what: How those items are named in a message (``open review item``).

    Raises:
        InputErrors: Every line that would be refused, located (``FILE:LINE: field: …``).
    """
    items = list_tasks(project, status="open") if open_items is None else list(open_items)
    by_id = {t.id: t for t in items}
    problems: list[Problem] = []
    chosen: list[ReviewTask] = []
    seen: set[int] = set()
    for number, line in zip(read.line_numbers, read.lines, strict=True):
        found = _resolve(line, by_id, what)
        if isinstance(found, str):
            problems.append(Problem(read.shown, number, "item", found, line.item, True))
            continue
        if found.id in seen:
            twice = "decided twice in this file"
            problems.append(Problem(read.shown, number, "item", twice, line.item, True))
            continue
        seen.add(found.id)
        chosen.append(found)
        found_problems = _check_line(project, read.shown, number, found, line)
        problems += found_problems or _rehearsed(project, read.shown, number, found, line)
    if problems:
        raise InputErrors(problems)
    return chosen


def decide_from_file(
    project: Project,
    path: Path,
    *,
    open_items: Sequence[ReviewTask] | None = None,
    what: str = "open review item",
    now: datetime | None = None,
) -> tuple[ReviewTask, ...]:
    """Decide review items of any kind from a decisions file: every line checked before any is stored.

    Args:
        project: The project.
        path: The decisions file (JSONL, one :class:`ReviewDecision` a line).
        open_items: The items the file may decide (default: every open item).
        what: How those items are named in a message (``open review item``).
        now: Time of the decisions (tests).

    Returns:
        The items as decided, in file order.

    Raises:
        UsageError: No file at ``path``.
        InputErrors: A malformed line, an unknown, ambiguous or repeated item, a decision its
            kind does not take or its rules refuse, bad data (an invalid edited case, a reject
            without a reason): every such line reported, nothing stored.
        DecisionConflict: Someone decided an item between the check and the store (the lines
            before it are stored).
    """
    shown = project.relative(path) if path.is_absolute() else str(path)
    read = read_decisions(path, shown)
    tasks = _check_decisions(project, read, open_items=open_items, what=what)
    when = now or datetime.now(UTC)
    return tuple(
        decide_task(
            project,
            task.id,
            line.decision,
            reviewer=line.reviewer,
            reason=line.reason,
            seconds=line.seconds,
            data=line.data(),
            now=when,
        )
        for task, line in zip(tasks, read.lines, strict=True)
    )
