"""`casework author review`: decide authored candidates from a decision file (scripted review).

A decision file is JSONL, one :class:`ReviewDecision` a line. Every line is checked first (the
item exists, is an open `generated-case` item, the decision is one the kind takes, an edit's
case is valid); only then are the decisions stored, one by one, each through
:func:`casework.review.decide_task` (which writes an accepted case into the working tree with
the reviewer and the time in its provenance).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from casework.dataset import read_records
from casework.errors import InputErrors, Problem, UsageError
from casework.labelling import GENERATED_CASE_KIND, check_person
from casework.project import Project
from casework.review import ReviewTask, decide_task, list_tasks, review_kind


class ReviewDecision(BaseModel):
    """One line of a decision file."""

    model_config = ConfigDict(extra="forbid")

    item: int | str
    """Review item id, or the case id it is about."""
    decision: Literal["accept", "edit", "reject"]
    """Accept as it is, accept the edited `case`, or reject with a `reason`."""
    reviewer: str
    """Who decided (pseudonymous id)."""
    reason: str | None = None
    """Why (required to reject)."""
    case: dict[str, Any] | None = None
    """The edited case (an edit only)."""
    seconds: float | None = Field(default=None, ge=0)
    """Seconds the item was on screen."""


@dataclass(frozen=True)
class ReviewOutcome:
    """The items a decision file decided, in file order."""

    decided: tuple[ReviewTask, ...]

    def as_json(self) -> dict[str, object]:
        """JSON-ready data."""
        return {
            "decided": [
                {"item": t.id, "case": t.subject, "decision": t.decision, "reviewer": t.reviewer}
                for t in self.decided
            ]
        }


def open_authored(project: Project, dataset: str | None = None) -> list[ReviewTask]:
    """Open `generated-case` items queued by `casework shapes author`, oldest first."""
    tasks = list_tasks(project, kind=GENERATED_CASE_KIND, status="open", dataset=dataset)
    return [t for t in tasks if t.payload.get("record_review")]


def _resolve(
    line: ReviewDecision, tasks: dict[int, ReviewTask], by_case: dict[str, ReviewTask]
) -> ReviewTask | str:
    found = tasks.get(line.item) if isinstance(line.item, int) else by_case.get(line.item)
    if found is None:
        return "no open authored review item has this id or case id"
    return found


def _check_lines(project: Project, shown: str, lines: Sequence[ReviewDecision]) -> list[ReviewTask]:
    tasks = {t.id: t for t in open_authored(project)}
    by_case = {t.subject: t for t in tasks.values()}
    problems: list[Problem] = []
    chosen: list[ReviewTask] = []
    seen: set[int] = set()
    for number, line in enumerate(lines, start=1):
        found = _resolve(line, tasks, by_case)
        if isinstance(found, str):
            problems.append(Problem(shown, number, "item", found, line.item, True))
            continue
        if found.id in seen:
            problems.append(
                Problem(shown, number, "item", "decided twice in this file", line.item, True)
            )
            continue
        seen.add(found.id)
        data = {"case": line.case} if line.case is not None else None
        try:
            check_person(line.reviewer, "reviewer")
            review_kind(found.kind).check(project, found, line.decision, line.reason, data)
        except UsageError as exc:
            field = {"data": "case"}.get(exc.param or "", exc.param or "decision")
            problems.append(
                Problem(shown, number, field, str(exc.args[0]).rstrip("."), None, False)
            )
        except InputErrors as exc:
            for p in exc.problems:
                where = f"case.{p.field}" if p.field else "case"
                problems.append(Problem(shown, number, where, p.message, p.got, p.has_got))
        chosen.append(found)
    if problems:
        raise InputErrors(problems)
    return chosen


def review_from_file(project: Project, path: Path, *, now: datetime | None = None) -> ReviewOutcome:
    """Decide authored items from a decision file: every line checked before any is stored.

    Raises:
        InputErrors: A malformed line, an unknown or already decided item, a decision the item
            does not take, a reject without a reason, an invalid edited case (nothing stored).
    """
    shown = project.relative(path) if path.is_absolute() else str(path)
    if not path.is_file():
        raise UsageError(f"no decision file at {shown}.", param="decisions")
    lines = read_records(path, ReviewDecision, shown=shown).records
    tasks = _check_lines(project, shown, lines)
    when = now or datetime.now(UTC)
    decided = [
        decide_task(
            project,
            task.id,
            line.decision,
            reviewer=line.reviewer,
            reason=line.reason,
            seconds=line.seconds,
            data={"case": line.case} if line.case is not None else None,
            now=when,
        )
        for task, line in zip(tasks, lines, strict=True)
    ]
    return ReviewOutcome(tuple(decided))
