"""Seconds people spent: on screen per raw label, and per generated case reviewed.

Raw labels carry ``seconds_on_screen`` when the web app stored them (sheets leave it empty);
review items of kind ``generated-case`` carry it per decision. Entry point: :func:`read_timings`
(inside a workbench session), giving labelling cost per slice, per labeller, and human minutes
per accepted case. Figures are ``None`` ("n/a") when nothing was timed.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from sqlalchemy import select
from sqlalchemy.orm import Session

from casework.workbench.models_labelling import RawLabelRow
from casework.workbench.models_review import ReviewTaskRow

__all__ = [
    "ACCEPTING_DECISIONS",
    "GENERATED_CASE_KIND",
    "Timings",
    "read_timings",
]

GENERATED_CASE_KIND = "generated-case"
"""The review kind of generated cases (:mod:`casework.review` registers it)."""
ACCEPTING_DECISIONS = ("accept", "edit")
"""Decisions on a generated case that put it into the dataset."""


@dataclass(frozen=True)
class Timings:
    """Timed work of one dataset.

    Attributes:
        slice_seconds: Per slice, the seconds on screen of each timed raw label.
        labeller_seconds: Per labeller, the same.
        review_seconds: Seconds on screen of each timed decided generated-case item.
        accepted_cases: Generated cases accepted (as they were, or edited).
    """

    slice_seconds: dict[str, list[float]] = field(default_factory=dict)
    labeller_seconds: dict[str, list[float]] = field(default_factory=dict)
    review_seconds: list[float] = field(default_factory=list)
    accepted_cases: int = 0

    def seconds_per_label(self, slice_name: str) -> float | None:
        """Labelling cost of a slice: total seconds on screen over timed labels (``None``: none)."""
        found = self.slice_seconds.get(slice_name)
        return sum(found) / len(found) if found else None

    def median_seconds(self, labeller: str) -> float | None:
        """Median seconds on screen of one labeller's timed labels (``None``: none)."""
        found = self.labeller_seconds.get(labeller)
        return statistics.median(found) if found else None

    @property
    def minutes_per_accepted_case(self) -> float | None:
        """Human minutes reviewing generated cases (every decision, rejects too) per accepted one.

        ``None`` when no case was accepted or no review was timed.
        """
        if not self.accepted_cases or not self.review_seconds:
            return None
        return sum(self.review_seconds) / 60.0 / self.accepted_cases


def read_timings(session: Session, dataset: str) -> Timings:
    """The timed labels and generated-case reviews of ``dataset`` in the workbench."""
    per_slice: dict[str, list[float]] = defaultdict(list)
    per_labeller: dict[str, list[float]] = defaultdict(list)
    rows = session.execute(
        select(RawLabelRow.slice, RawLabelRow.labeller, RawLabelRow.seconds_on_screen).where(
            RawLabelRow.dataset == dataset, RawLabelRow.seconds_on_screen.is_not(None)
        )
    ).all()
    for slice_name, labeller, seconds in rows:
        if seconds is not None:  # filtered above; the type does not know
            per_slice[slice_name].append(float(seconds))
            per_labeller[labeller].append(float(seconds))
    reviews = session.execute(
        select(ReviewTaskRow.decision, ReviewTaskRow.seconds_on_screen).where(
            ReviewTaskRow.dataset == dataset,
            ReviewTaskRow.kind == GENERATED_CASE_KIND,
            ReviewTaskRow.status == "decided",
        )
    ).all()
    return Timings(
        dict(per_slice),
        dict(per_labeller),
        [float(s) for _, s in reviews if s is not None],
        sum(1 for d, _ in reviews if d in ACCEPTING_DECISIONS),
    )
