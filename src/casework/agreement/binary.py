"""Agreement on one yes/no question (is tool X required? forbidden?), with rare-event guards.

Entry point: :func:`binary_agreement`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from casework.agreement.bands import Status
from casework.agreement.gwet import GwetAC, from_counts, gwet_ac1
from casework.agreement.kappa import CohenKappa, cohen_kappa

__all__ = ["BinaryAgreement", "binary_agreement"]


@dataclass(frozen=True)
class BinaryAgreement:
    """Two raters' answers to one yes/no question over the same rows.

    Attributes:
        n: Rows answered by both.
        both_yes: Rows where both said yes.
        only_first: Rows where only the first rater said yes.
        only_second: Rows where only the second rater said yes.
        both_no: Rows where both said no.
        p_o: Share of rows with the same answer (``None`` without rows).
        kappa: Cohen's kappa of the answers.
        ac1: Gwet's AC1 of the answers (two categories: yes, no).
        status: ``ok``; ``insufficient_rows`` (fewer than ``min_rows`` rows);
            ``insufficient_positives`` (fewer than ``min_positives`` rows where anyone said yes:
            kappa on a rare event swings on one row); ``undefined_single_category`` (all answers
            the same, when the positives guard is off).
    """

    n: int
    both_yes: int
    only_first: int
    only_second: int
    both_no: int
    p_o: float | None
    kappa: CohenKappa
    ac1: GwetAC
    status: Status

    @property
    def positives(self) -> int:
        """Rows where at least one rater said yes."""
        return self.both_yes + self.only_first + self.only_second

    @property
    def disagreements(self) -> int:
        """Rows where the answers differ."""
        return self.only_first + self.only_second


def _as_bools(answers: Sequence[bool] | npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_] | None:
    """The answers as a boolean array when every one is a ``bool`` (else the general path)."""
    if isinstance(answers, np.ndarray):
        return answers if answers.dtype == np.bool_ and answers.ndim == 1 else None
    if all(type(x) is bool for x in answers):
        return np.fromiter(answers, np.bool_, len(answers))
    return None


def binary_agreement(
    first: Sequence[bool] | npt.NDArray[np.bool_],
    second: Sequence[bool] | npt.NDArray[np.bool_],
    *,
    min_rows: int = 1,
    min_positives: int = 1,
    confidence: float = 0.95,
) -> BinaryAgreement:
    """Agreement of two raters on one yes/no question, with an explicit status for rare events.

    Kappa is :func:`casework.agreement.cohen_kappa` on the answers (categories yes and no) and AC1
    is :func:`casework.agreement.gwet_ac1` with ``q = 2``. The status says whether the numbers can
    carry a decision; the numbers are reported either way.

    Args:
        first: First rater's answer per row (a boolean array is counted without a Python loop).
        second: Second rater's answer for the same rows.
        min_rows: Fewest rows for status ``ok``.
        min_positives: Fewest rows with at least one yes for status ``ok``.
        confidence: Confidence level of the kappa interval.

    Raises:
        ValueError: The raters answered different numbers of rows.

    Example:
        >>> r = binary_agreement([True, True, False, False], [True, False, False, False])
        >>> r.p_o, round(r.kappa.kappa, 3), r.status
        (0.75, 0.5, 'ok')
    """
    yes_a, yes_b = _as_bools(first), _as_bools(second)
    kappa = cohen_kappa(
        first if yes_a is None else yes_a,
        second if yes_b is None else yes_b,
        categories=[True, False],
        confidence=confidence,
    )
    if yes_a is not None and yes_b is not None:
        # Vectorised: the ratings are booleans. AC1 keeps its default 0.95 level, as below.
        yes = yes_a.astype(np.int64) + yes_b
        ac1 = from_counts(np.stack([yes, 2 - yes], axis=1), None, 0.95)
        both_yes = int((yes_a & yes_b).sum())
        only_first = int((yes_a & ~yes_b).sum())
        only_second = int((yes_b & ~yes_a).sum())
    else:
        ac1 = gwet_ac1(list(zip(first, second, strict=True)), categories=[True, False])
        both_yes = sum(1 for a, b in zip(first, second, strict=True) if a and b)
        only_first = sum(1 for a, b in zip(first, second, strict=True) if a and not b)
        only_second = sum(1 for a, b in zip(first, second, strict=True) if b and not a)
    n = len(first)
    both_no = n - both_yes - only_first - only_second
    p_o = (both_yes + both_no) / n if n else None
    status: Status
    if n == 0 or n < min_rows:
        status = "insufficient_rows"
    elif both_yes + only_first + only_second < min_positives:
        status = "insufficient_positives"
    elif kappa.status != "ok":
        status = kappa.status
    else:
        status = "ok"
    return BinaryAgreement(n, both_yes, only_first, only_second, both_no, p_o, kappa, ac1, status)
