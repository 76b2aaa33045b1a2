"""Step-level agreement of trajectory reviews: kappa on the first failing step and on category.

Over the doubled trials both reviewers decided, :func:`trajectory_agreement` computes Cohen's
kappa (:func:`casework.agreement.kappa.cohen_kappa`) twice:

- **step**: each review is the index of the first failing step, or ``none``; two indices at most
  ``tolerance`` apart count as the same (the second reviewer's index is read as the first's), so
  a reviewer one step early is not a disagreement at tolerance 1;
- **category**: each review is its category, or ``none``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from casework.agreement.kappa import CohenKappa, cohen_kappa
from casework.errors import UsageError
from casework.review._task import ReviewTask
from casework.review._trajectory import review_pairs

NONE = "none"
"""The rating of a review that marked no failing step."""


@dataclass(frozen=True)
class TrajectoryAgreement:
    """Agreement of two reviewers on the same trials.

    Attributes:
        pairs: Doubled trials both reviewers decided.
        tolerance: Steps two indices may differ by and still agree.
        step_ratings: The two raters' step ratings, after the tolerance (what ``step`` is of).
        category_ratings: The two raters' category ratings.
        step: Kappa on the first failing step.
        category: Kappa on the category.
    """

    pairs: int
    tolerance: int
    step_ratings: tuple[tuple[str, ...], tuple[str, ...]]
    category_ratings: tuple[tuple[str, ...], tuple[str, ...]]
    step: CohenKappa
    category: CohenKappa

    def as_json(self) -> dict[str, Any]:
        """JSON-ready figures."""
        return {
            "pairs": self.pairs,
            "tolerance": self.tolerance,
            "step_kappa": self.step.kappa,
            "step_agreement": self.step.p_o,
            "category_kappa": self.category.kappa,
            "category_agreement": self.category.p_o,
        }


def step_ratings(
    pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]], tolerance: int
) -> tuple[list[str], list[str]]:
    """The two raters' step ratings with ``tolerance`` applied (``none`` for no failing step)."""
    a_out, b_out = [], []
    for a, b in pairs:
        sa = NONE if "step" not in a else str(a["step"])
        sb = NONE if "step" not in b else str(b["step"])
        if "step" in a and "step" in b and abs(int(a["step"]) - int(b["step"])) <= tolerance:
            sb = sa
        a_out.append(sa)
        b_out.append(sb)
    return a_out, b_out


def trajectory_agreement(tasks: Sequence[ReviewTask], tolerance: int = 1) -> TrajectoryAgreement:
    """Step and category kappa of the doubled trajectory reviews among ``tasks``.

    Raises:
        UsageError: A negative tolerance.
    """
    if tolerance < 0:
        raise UsageError(f"must be 0 or more. Got {tolerance}.", param="tolerance")
    pairs = list(review_pairs(tasks))
    sa, sb = step_ratings(pairs, tolerance)
    ca = [str(a.get("category", NONE)) for a, _ in pairs]
    cb = [str(b.get("category", NONE)) for _, b in pairs]
    return TrajectoryAgreement(
        pairs=len(pairs),
        tolerance=tolerance,
        step_ratings=(tuple(sa), tuple(sb)),
        category_ratings=(tuple(ca), tuple(cb)),
        step=cohen_kappa(sa, sb),
        category=cohen_kappa(ca, cb),
    )
