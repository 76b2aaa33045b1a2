"""Krippendorff's alpha for nominal data: any number of raters, missing ratings allowed.

Entry point: :func:`krippendorff_alpha_nominal`.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from casework.agreement.kappa import KappaStatus
from casework.agreement.table import rating_counts

__all__ = ["KrippendorffAlpha", "krippendorff_alpha_nominal"]


@dataclass(frozen=True)
class KrippendorffAlpha:
    r"""Krippendorff's nominal alpha and its parts.

    Attributes:
        n_units: Units with at least two ratings (the only pairable ones).
        n_values: Pairable values :math:`n` (ratings in those units).
        observed_agreement: :math:`A_o = \sum_c o_{cc} / n`.
        expected_agreement: :math:`A_e = \sum_c n_c (n_c - 1) / (n (n - 1))`.
        alpha: ``1 - D_o / D_e`` (equivalently ``(A_o - A_e) / (1 - A_e)``).
        status: ``ok``, ``undefined_single_category`` (every pairable value equal, so
            :math:`D_e = 0`) or ``insufficient_rows`` (no unit with two ratings).
    """

    n_units: int
    n_values: int
    observed_agreement: float | None
    expected_agreement: float | None
    alpha: float | None
    status: KappaStatus


def krippendorff_alpha_nominal(
    ratings: Sequence[Sequence[Hashable | None]],
    *,
    categories: Sequence[Hashable] | None = None,
) -> KrippendorffAlpha:
    r"""Krippendorff's alpha for nominal data (Krippendorff 2011, *Computing Krippendorff's Alpha-Reliability*).

    Units with fewer than two ratings are not pairable and drop out. From the coincidence matrix
    :math:`o_{ck} = \sum_u \frac{\text{number of } c\text{-}k \text{ pairs in unit } u}{m_u - 1}`
    (ordered pairs of ratings by different raters, :math:`m_u` ratings in unit :math:`u`), with
    :math:`n_c = \sum_k o_{ck}` and :math:`n = \sum_c n_c`:

    .. math::

        \alpha = 1 - \frac{D_o}{D_e} = 1 - (n - 1)
        \frac{\sum_{c \ne k} o_{ck}}{\sum_{c \ne k} n_c n_k}.

    Args:
        ratings: One sequence per unit of the ratings it received (``None``: missing).
        categories: The scale's categories (unused ones change nothing).

    Raises:
        ValueError: A rating is outside ``categories``.

    Example:
        Krippendorff's (2011, section C) example: 4 observers, 12 units, values 1-5 with missing
        data; nominal alpha = 0.743:

        >>> data = [[1, 1, None, 1], [2, 2, 3, 2], [3, 3, 3, 3], [3, 3, 3, 3], [2, 2, 2, 2],
        ...         [1, 2, 3, 4], [4, 4, 4, 4], [1, 1, 2, 1], [2, 2, 2, 2], [None, 5, 5, 5],
        ...         [None, None, 1, 1], [None, None, 3, None]]
        >>> round(krippendorff_alpha_nominal(data).alpha, 4)
        0.7434
    """
    _, counts_all = rating_counts(ratings, categories=categories)
    m_all = counts_all.sum(axis=1)
    counts = counts_all[m_all >= 2].astype(np.float64)
    m = m_all[m_all >= 2].astype(np.float64)
    n_units = int(counts.shape[0])
    if n_units == 0:
        return KrippendorffAlpha(0, 0, None, None, None, "insufficient_rows")
    # o_ck = sum_u (n_uc n_uk - [c == k] n_uc) / (m_u - 1)
    scaled = counts / (m - 1)[:, None]
    coincidence = scaled.T @ counts - np.diag(scaled.sum(axis=0))
    n_c = coincidence.sum(axis=1)
    n = float(n_c.sum())
    n_values = int(m.sum())
    observed = float(np.trace(coincidence)) / n
    expected = float((n_c * (n_c - 1)).sum()) / (n * (n - 1))
    disagree_o = n - float(np.trace(coincidence))
    disagree_e = (n * n - float((n_c**2).sum())) / (n - 1)
    if disagree_e <= 0:
        return KrippendorffAlpha(
            n_units, n_values, observed, 1.0, None, "undefined_single_category"
        )
    alpha = 1 - disagree_o / disagree_e
    return KrippendorffAlpha(n_units, n_values, observed, expected, alpha, "ok")
