r"""Cohen's kappa of items grouped in cases, with an interval that counts cases as the unit.

When people (or a judge and people) rated several trials of one case, the trials are not
independent: a judge that misreads a case misreads all its trials, and the asymptotic interval
over items (Fleiss, Cohen & Everitt 1969) is too narrow. :func:`clustered_kappa_interval` keeps
kappa's point and replaces its variance by a **cluster-robust (sandwich) variance by case**: the
delta-method influence of each item,

.. math:: \mathrm{IF}_i = \frac{(o_i - p_o) - (1 - \kappa)\,(p_{\cdot a_i} + p_{b_i \cdot} - 2 p_e)}
    {1 - p_e},

(:math:`o_i` 1 when the two ratings of item :math:`i` agree, :math:`a_i, b_i` its two ratings,
:math:`p_{k\cdot}, p_{\cdot k}` the margins), summed within each case,
:math:`\psi_c = \sum_{i \in c} \mathrm{IF}_i`, and :math:`\widehat{\mathrm{Var}}(\kappa) =
\sum_c \psi_c^2 / n^2` (Liang & Zeger 1986; the cluster-robust form of the delta method, as
Yang & Zhou 2014, *Statistics in Medicine* 33(19), use for clustered kappa). With one item per
case it is exactly the Fleiss–Cohen–Everitt variance (statsmodels' ``std_kappa``). With few
cases the sandwich is small, so by default it carries the small-sample corrections of
cluster-robust inference (Cameron & Miller 2015, §VI): the variance times :math:`G/(G-1)` for
:math:`G` cases and Student's t quantile on :math:`G - 1` degrees of freedom. The interval
:math:`\kappa \pm t\,\mathrm{SE}` is clipped to [-1, 1].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from casework.agreement.kappa import normal_quantile

__all__ = ["CLUSTERED_KAPPA", "ClusteredKappa", "clustered_kappa_interval"]

#: How the clustered interval is made, as the output names it (cases filled in).
CLUSTERED_KAPPA = "clustered by case ({cases} cases): cluster-robust variance, t interval"


@dataclass(frozen=True)
class ClusteredKappa:
    """Cohen's kappa with its interval clustered by case (``None`` throughout when undefined).

    Attributes:
        kappa: Cohen's kappa over every item.
        low: Lower end of the interval (at least -1).
        high: Upper end (at most 1).
        se: Cluster-robust standard error.
        cases: Cases with at least one item.
        items: Items.
        method: How the interval was made (:data:`CLUSTERED_KAPPA`).
    """

    kappa: float | None
    low: float | None
    high: float | None
    se: float | None
    cases: int
    items: int
    method: str


def clustered_kappa_interval(
    tables: Sequence[Sequence[Sequence[int]]],
    *,
    confidence: float = 0.95,
    small_sample: bool = True,
) -> ClusteredKappa:
    """Cohen's kappa of every case's items pooled, with its interval clustered by case.

    Args:
        tables: One square table of counts per case (rows: first rater, columns: second), all
            of one size.
        confidence: Confidence level of the interval.
        small_sample: Scale the variance by G/(G - 1) and take the t quantile on G - 1 degrees
            of freedom; ``False``: the plain sandwich and a normal quantile (with one item per
            case, Fleiss, Cohen & Everitt's interval).

    Returns:
        The kappa. Undefined (``None``) without items or when both raters used one category
        only; when one rater did, kappa is 0 whatever the other does, and the interval is the
        whole range [-1, 1] (as :func:`casework.agreement._rates.kappa_interval`).

    Raises:
        ValueError: Tables of different or non-square shapes, negative counts, or a confidence
            outside (0, 1).

    Example:
        Ten cases of three items, judge against people; the judge misreads two whole cases.
        Over the 30 items kappa is 0.583, whose interval over items claims [0.286, 0.880];
        clustered, the evidence of ten cases is far less sure:

        >>> right_pass, right_fail = [[3, 0], [0, 0]], [[0, 0], [0, 3]]
        >>> tables = [right_pass] * 5 + [right_fail] * 3 + [[[0, 3], [0, 0]], [[0, 0], [3, 0]]]
        >>> k = clustered_kappa_interval(tables)
        >>> round(k.kappa, 3), round(k.low, 3), round(k.high, 3), k.method
        (0.583, -0.042, 1.0, 'clustered by case (10 cases): cluster-robust variance, t interval')
    """
    from scipy.stats import t as student_t  # scipy.stats takes ~0.3 s to import: only when used

    z = normal_quantile(confidence)
    arr = np.asarray(tables, dtype=float)
    if arr.size == 0:
        return ClusteredKappa(None, None, None, None, 0, 0, CLUSTERED_KAPPA.format(cases=0))
    if arr.ndim != 3 or arr.shape[1] != arr.shape[2]:
        raise ValueError(f"tables: need one square table per case. Got shape {arr.shape}.")
    if (arr < 0).any():
        raise ValueError("tables: counts must not be negative.")
    per_case = arr.sum(axis=(1, 2))
    arr = arr[per_case > 0]
    n = float(arr.sum())
    cases = len(arr)
    method = CLUSTERED_KAPPA.format(cases=cases)
    if n == 0:
        return ClusteredKappa(None, None, None, None, 0, 0, method)
    p = arr.sum(axis=0) / n
    rows, cols = p.sum(axis=1), p.sum(axis=0)
    p_o, p_e = float(np.trace(p)), float(rows @ cols)
    one_row, one_col = (rows > 0).sum() <= 1, (cols > 0).sum() <= 1
    if one_row and one_col:
        return ClusteredKappa(None, None, None, None, cases, int(n), method)
    if one_row or one_col:
        return ClusteredKappa(0.0, -1.0, 1.0, None, cases, int(n), method)
    kappa = (p_o - p_e) / (1 - p_e)
    q = p.shape[0]
    agree = np.eye(q)
    # Each cell's influence: an item rated (a, b) moves p_o by 1[a = b] and p_e by
    # p_.a + p_b. (the margins it adds to).
    cell = ((agree - p_o) - (1 - kappa) * (cols[:, None] + rows[None, :] - 2 * p_e)) / (1 - p_e)
    psi = (arr * cell).sum(axis=(1, 2))  # summed over each case's items
    se = math.sqrt(float((psi**2).sum())) / n
    if small_sample and cases > 1:
        se *= math.sqrt(cases / (cases - 1))
        z = float(student_t.ppf(1 - (1 - confidence) / 2, cases - 1))
    low, high = max(-1.0, kappa - z * se), min(1.0, kappa + z * se)
    return ClusteredKappa(kappa, low, high, se, cases, int(n), method)
