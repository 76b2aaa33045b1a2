"""Gwet's AC1 (and its weighted form AC2) for any number of raters, with missing ratings allowed.

Entry points: :func:`gwet_ac1` (nominal), :func:`gwet_ac2` (with a weight matrix).
AC1 keeps its meaning on skewed slices, where kappa collapses although the raters agree.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from casework.agreement.kappa import KappaStatus, normal_quantile
from casework.agreement.table import rating_counts

__all__ = ["GwetAC", "gwet_ac1", "gwet_ac2"]


@dataclass(frozen=True)
class GwetAC:
    """Gwet's agreement coefficient AC1 (identity weights) or AC2 (other weights).

    Attributes:
        name: ``AC1`` or ``AC2``.
        n_units: Units with at least one rating.
        n_pairable: Units with at least two ratings (the ones that can show agreement).
        q: Number of categories on the scale.
        p_a: Observed (weighted) agreement over pairable units.
        p_e: Chance agreement: the propensity to agree on a hard-to-rate unit.
        coefficient: ``(p_a - p_e) / (1 - p_e)``.
        se: Standard error (Gwet 2008, linearised; no finite-population correction).
        ci_low: Lower end of the t-interval with ``n_units - 1`` degrees of freedom.
        ci_high: Upper end, capped at 1 (as Gwet's irrCAC does).
        confidence: Confidence level of the interval.
        status: ``ok``, ``undefined_single_category`` (a one-category scale) or
            ``insufficient_rows`` (no unit with two ratings).
    """

    name: Literal["AC1", "AC2"]
    n_units: int
    n_pairable: int
    q: int
    p_a: float | None
    p_e: float | None
    coefficient: float | None
    se: float | None
    ci_low: float | None
    ci_high: float | None
    confidence: float
    status: KappaStatus


def gwet_ac1(
    ratings: Sequence[Sequence[Hashable | None]],
    *,
    categories: Sequence[Hashable] | None = None,
    confidence: float = 0.95,
) -> GwetAC:
    r"""Gwet's AC1 (Gwet 2008, British J. of Math. and Stat. Psychology 61(1), 29-48).

    With :math:`r_{ik}` raters putting unit :math:`i` in category :math:`k`,
    :math:`r_i = \sum_k r_{ik}`, :math:`n` units rated at least once, :math:`n_2` of them at
    least twice and :math:`q` categories on the scale:

    .. math::

        p_a = \frac{1}{n_2} \sum_{i: r_i \ge 2} \sum_k \frac{r_{ik}(r_{ik} - 1)}{r_i (r_i - 1)},\quad
        \pi_k = \frac{1}{n} \sum_i \frac{r_{ik}}{r_i},\quad
        p_e = \frac{1}{q - 1} \sum_k \pi_k (1 - \pi_k),\quad
        AC_1 = \frac{p_a - p_e}{1 - p_e}.

    With two raters and no missing ratings this is the two-rater AC1 of Gwet (2008), with
    :math:`\pi_k` the mean of the raters' rates of category :math:`k`. Note that :math:`p_e`
    depends on :math:`q`, the categories *of the scale*: pass ``categories`` to count categories
    nobody used (the default counts only the values seen, as irrCAC does).

    Args:
        ratings: One sequence per unit of the ratings it received (``None``: missing).
        categories: The scale's categories (default: the values seen).
        confidence: Confidence level of the interval.

    Raises:
        ValueError: A rating is outside ``categories``, or ``confidence`` is not in (0, 1).

    Example:
        Krippendorff's (2011) reliability data, 4 raters by 12 units with missing values, which
        Gwet's irrCAC ships as ``raw_4raters`` (AC1 0.77544, p_a 0.81818, p_e 0.19032):

        >>> data = [[1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2],
        ...         [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5],
        ...         [None, None, 1, 1], [None, None, 3, None]]
        >>> round(gwet_ac1(data).coefficient, 4)
        0.7754
    """
    return _gwet(ratings, categories, None, confidence)


def gwet_ac2(
    ratings: Sequence[Sequence[Hashable | None]],
    weights: Sequence[Sequence[float]] | npt.NDArray[np.float64],
    *,
    categories: Sequence[Hashable],
    confidence: float = 0.95,
) -> GwetAC:
    r"""Gwet's AC2: AC1 with partial credit ``weights[k][l]`` for ratings ``k`` and ``l`` (Gwet 2014, ch. 5).

    Agreement becomes :math:`\sum_k r_{ik}(r^\star_{ik} - 1)` with
    :math:`r^\star_{ik} = \sum_l w_{kl} r_{il}`, and chance agreement
    :math:`p_e = \frac{T_w}{q(q-1)} \sum_k \pi_k(1-\pi_k)` with :math:`T_w = \sum_{kl} w_{kl}`.
    With identity weights (the nominal case) AC2 equals AC1.

    Args:
        ratings: One sequence per unit of the ratings it received (``None``: missing).
        weights: ``q x q`` matrix in the order of ``categories``, 1 on the diagonal.
        categories: The scale's categories, in the order of ``weights``.
        confidence: Confidence level of the interval.

    Raises:
        ValueError: ``weights`` is not ``q x q``, a rating is outside ``categories``, or
            ``confidence`` is not in (0, 1).

    Example:
        >>> gwet_ac2([["a", "a"], ["b", "b"]], [[1, 0], [0, 1]], categories=["a", "b"]).coefficient
        1.0
    """
    w = np.asarray(weights, dtype=np.float64)
    q = len(categories)
    if w.shape != (q, q):
        raise ValueError(
            f"weights: must be a {q} x {q} matrix (one row and column per category). "
            f"Got shape {w.shape}."
        )
    return _gwet(ratings, categories, w, confidence)


def _gwet(
    ratings: Sequence[Sequence[Hashable | None]],
    categories: Sequence[Hashable] | None,
    weights: npt.NDArray[np.float64] | None,
    confidence: float,
) -> GwetAC:
    normal_quantile(confidence)  # validates confidence
    _, counts_all = rating_counts(ratings, categories=categories)
    return from_counts(counts_all, weights, confidence)


def from_counts(
    counts_all: npt.NDArray[np.int64],
    weights: npt.NDArray[np.float64] | None,
    confidence: float,
) -> GwetAC:
    """AC1 (``weights`` ``None``) or AC2 from a ``units x categories`` table of rating counts.

    What :func:`gwet_ac1` computes once :func:`casework.agreement.rating_counts` has counted the
    ratings, for callers that hold the counts already (two yes/no raters: one column each).
    Not exported: the package's binary agreement uses it.
    """
    from scipy import stats  # scipy.stats takes ~0.3 s to import: only when used

    normal_quantile(confidence)  # validates confidence
    q = int(counts_all.shape[1])
    w = np.eye(q) if weights is None else weights
    name: Literal["AC1", "AC2"] = "AC1" if np.array_equal(w, np.eye(q)) else "AC2"
    r_all = counts_all.sum(axis=1)
    counts = counts_all[r_all >= 1].astype(np.float64)
    r = r_all[r_all >= 1].astype(np.float64)
    n = int(counts.shape[0])
    pairable = r >= 2
    n2 = int(pairable.sum())

    def empty(status: KappaStatus) -> GwetAC:
        return GwetAC(name, n, n2, q, None, None, None, None, None, None, confidence, status)

    if n2 == 0:
        return empty("insufficient_rows")
    if q < 2:
        return empty("undefined_single_category")
    weighted = counts @ w.T  # r*_ik = sum_l w_kl r_il
    sum_q = (counts * (weighted - 1)).sum(axis=1)
    pair_den = r * (r - 1)
    p_a = float((sum_q[pairable] / pair_den[pairable]).sum() / n2)
    pi = (counts / r[:, None]).mean(axis=0)
    scale = float(w.sum()) / (q * (q - 1))
    p_e = scale * float((pi * (1 - pi)).sum())
    if p_e >= 1:
        return empty("undefined_single_category")
    coefficient = (p_a - p_e) / (1 - p_e)
    se: float | None = None
    low: float | None = None
    high: float | None = None
    if n >= 2:
        pa_i = np.where(pairable, sum_q / np.where(pairable, pair_den, 1), 0.0)
        ac_i = (n / n2) * (pa_i - p_e * pairable) / (1 - p_e)
        pe_i = scale * (counts @ (1 - pi)) / r
        ac_i_star = ac_i - 2 * (1 - coefficient) * (pe_i - p_e) / (1 - p_e)
        se = float(np.sqrt(((ac_i_star - coefficient) ** 2).sum() / (n * (n - 1))))
        t = float(stats.t.ppf(1 - (1 - confidence) / 2, df=n - 1))
        low = coefficient - t * se
        high = min(1.0, coefficient + t * se)
    return GwetAC(name, n, n2, q, p_a, p_e, coefficient, se, low, high, confidence, "ok")
