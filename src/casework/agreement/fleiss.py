"""Fleiss' kappa: agreement among many raters, each unit rated by several (not the same) people.

Entry points: :func:`fleiss_kappa` (from units x categories counts),
:func:`fleiss_kappa_from_ratings` (from each unit's ratings).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from casework.agreement.kappa import KappaStatus
from casework.agreement.table import rating_counts

__all__ = ["FleissKappa", "fleiss_kappa", "fleiss_kappa_from_ratings"]


@dataclass(frozen=True)
class FleissKappa:
    r"""Fleiss' kappa and its parts.

    Attributes:
        n_units: Units with at least one rating.
        n_pairable: Units with at least two ratings.
        n_ratings: Ratings in all.
        p_o: Mean share of agreeing rater pairs per pairable unit (Fleiss' :math:`\bar P`).
        p_e: Chance agreement :math:`\sum_j p_j^2`.
        kappa: ``(p_o - p_e) / (1 - p_e)``.
        status: ``ok``, ``undefined_single_category`` (every rating in one category) or
            ``insufficient_rows`` (no unit with two ratings).
    """

    n_units: int
    n_pairable: int
    n_ratings: int
    p_o: float | None
    p_e: float | None
    kappa: float | None
    status: KappaStatus


def fleiss_kappa(counts: Sequence[Sequence[int]] | npt.NDArray[np.int64]) -> FleissKappa:
    r"""Fleiss' (1971) kappa from a table of ``counts[i][j]`` raters putting unit ``i`` in category ``j``.

    For :math:`N` units each rated by :math:`m` raters (Fleiss 1971, Psychological Bulletin 76(5),
    378-382, eqs. 2-9):

    .. math::

        P_i = \frac{\sum_j n_{ij}(n_{ij} - 1)}{m(m - 1)},\quad \bar P = \frac{1}{N}\sum_i P_i,\quad
        p_j = \frac{1}{N}\sum_i \frac{n_{ij}}{m},\quad \bar P_e = \sum_j p_j^2,\quad
        \kappa = \frac{\bar P - \bar P_e}{1 - \bar P_e}.

    Units may carry different numbers of ratings :math:`r_i` (Gwet 2014, *Handbook of Inter-Rater
    Reliability*, 4th ed., ch. 5): :math:`m` becomes :math:`r_i`, :math:`\bar P` averages over
    units with :math:`r_i \ge 2` and :math:`p_j` over units with :math:`r_i \ge 1`. With equal
    numbers this is exactly Fleiss' statistic.

    Raises:
        ValueError: ``counts`` is not a 2-D table of non-negative integers.

    Example:
        Fleiss' (1971, Table 1) 30 patients, 6 psychiatrists each, 5 diagnoses: kappa 0.430
        (0.4302445 in R irr's ``kappam.fleiss(diagnoses)``):

        >>> table = [[0, 0, 0, 6, 0], [0, 3, 0, 0, 3], [0, 1, 4, 0, 1], [0, 0, 0, 0, 6],
        ...          [0, 3, 0, 3, 0], [2, 0, 4, 0, 0], [0, 0, 4, 0, 2], [2, 0, 3, 1, 0],
        ...          [2, 0, 0, 4, 0], [0, 0, 0, 0, 6], [1, 0, 0, 5, 0], [1, 1, 0, 4, 0],
        ...          [0, 3, 3, 0, 0], [1, 0, 0, 5, 0], [0, 2, 0, 3, 1], [0, 0, 5, 0, 1],
        ...          [3, 0, 0, 1, 2], [5, 1, 0, 0, 0], [0, 2, 0, 4, 0], [1, 0, 2, 0, 3],
        ...          [0, 0, 0, 0, 6], [0, 1, 0, 5, 0], [0, 2, 0, 1, 3], [2, 0, 0, 4, 0],
        ...          [1, 0, 0, 4, 1], [0, 5, 0, 1, 0], [4, 0, 0, 0, 2], [0, 2, 0, 4, 0],
        ...          [1, 0, 5, 0, 0], [0, 0, 0, 0, 6]]
        >>> round(fleiss_kappa(table).kappa, 4)
        0.4302
    """
    table = np.asarray(counts)
    if table.ndim != 2 or (table.size and (table < 0).any()):
        raise ValueError(
            f"counts: must be a units x categories table of non-negative counts. "
            f"Got shape {table.shape}."
        )
    table = table.astype(np.float64)
    r_all = table.sum(axis=1)
    rated = table[r_all >= 1]
    r = r_all[r_all >= 1]
    pairable = r >= 2
    n_units, n_pairable = int(rated.shape[0]), int(pairable.sum())
    n_ratings = int(r.sum())
    if n_pairable == 0:
        return FleissKappa(n_units, n_pairable, n_ratings, None, None, None, "insufficient_rows")
    pc = rated[pairable]
    rp = r[pairable]
    p_i = (pc * (pc - 1)).sum(axis=1) / (rp * (rp - 1))
    p_o = float(p_i.mean())
    p_j = (rated / r[:, None]).mean(axis=0)
    p_e = float((p_j**2).sum())
    if int((rated > 0).any(axis=0).sum()) <= 1:
        return FleissKappa(
            n_units, n_pairable, n_ratings, p_o, 1.0, None, "undefined_single_category"
        )
    kappa = (p_o - p_e) / (1 - p_e)
    return FleissKappa(n_units, n_pairable, n_ratings, p_o, p_e, kappa, "ok")


def fleiss_kappa_from_ratings(
    ratings: Sequence[Sequence[Hashable | None]],
    *,
    categories: Sequence[Hashable] | None = None,
) -> FleissKappa:
    """Fleiss' kappa from each unit's ratings (``None``: missing), see :func:`fleiss_kappa`.

    Raises:
        ValueError: A rating is outside ``categories``.

    Example:
        >>> fleiss_kappa_from_ratings([["a", "a", "a"], ["b", "b", None]]).kappa
        1.0
    """
    _, counts = rating_counts(ratings, categories=categories)
    return fleiss_kappa(counts)
