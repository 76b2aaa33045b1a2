"""Decide authored candidates from a decision file (scripted review), as `review decide --decisions`.

A decision file is JSONL, one :class:`casework.review.ReviewDecision` a line; here every line must
name an open `generated-case` item that `casework shapes author` queued. Every line is checked
first (the item exists, the decision is one the kind takes, an edit's case is valid); only then
are the decisions stored, through :func:`casework.review.decide_from_file` (which writes an
accepted case into the working tree with the reviewer and the time in its provenance).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from casework.labelling.timings import GENERATED_CASE_KIND
from casework.project import Project
from casework.review import ReviewTask, decide_from_file, list_tasks
from casework.review._decisions import ReviewDecision

__all__ = ["ReviewDecision", "ReviewOutcome", "open_authored", "review_from_file"]


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


def review_from_file(project: Project, path: Path, *, now: datetime | None = None) -> ReviewOutcome:
    """Decide authored items from a decision file: every line checked before any is stored.

    Raises:
        InputErrors: A malformed line, an unknown or already decided item, a decision the item
            does not take, a reject without a reason, an invalid edited case (nothing stored).
    """
    decided = decide_from_file(
        project, path, open_items=open_authored(project), what="open authored review item", now=now
    )
    return ReviewOutcome(decided)
