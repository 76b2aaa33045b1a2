"""Cohen's kappa for two raters, with its asymptotic standard error and confidence interval.

Entry points: :func:`cohen_kappa` (from paired ratings), :func:`cohen_kappa_from_table` (from a
confusion matrix), :func:`one_vs_rest_kappa` (one binary kappa per class).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Literal

import numpy as np
import numpy.typing as npt

from casework.agreement.table import ConfusionMatrix, Ratings, category_order, confusion_matrix

__all__ = [
    "ClassKappa",
    "CohenKappa",
    "KappaStatus",
    "cohen_kappa",
    "cohen_kappa_from_table",
    "normal_quantile",
    "one_vs_rest_kappa",
]

KappaStatus = Literal["ok", "undefined_single_category", "insufficient_rows"]
"""Why a coefficient has a value or not: `ok`; `undefined_single_category` (chance agreement is 1:
every rating fell in one category, so the coefficient is 0/0); `insufficient_rows` (nothing to rate)."""


def normal_quantile(confidence: float) -> float:
    """The two-sided standard normal quantile for ``confidence`` (1.959964 for 0.95).

    Raises:
        ValueError: ``confidence`` is not strictly between 0 and 1.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence: must lie strictly between 0 and 1. Got {confidence!r}.")
    return NormalDist().inv_cdf(1 - (1 - confidence) / 2)


@dataclass(frozen=True)
class CohenKappa:
    """Cohen's kappa of two raters, with the quantities it is made of.

    Values are ``None`` exactly when they are undefined (see ``status``), never NaN.

    Attributes:
        n: Rows rated by both raters.
        p_o: Observed agreement: share of rows on which the raters agree.
        p_e: Chance agreement from the raters' own category rates.
        kappa: ``(p_o - p_e) / (1 - p_e)``.
        kappa_max: Largest kappa the two raters' marginal rates allow.
        se: Asymptotic standard error of kappa (Fleiss, Cohen & Everitt 1969), used for the CI.
        se0: Standard error under the null hypothesis kappa = 0, used for ``z``.
        ci_low: Lower end of the asymptotic confidence interval ``kappa - z * se`` (not clipped).
        ci_high: Upper end ``kappa + z * se`` (not clipped to 1, as in statsmodels).
        z: ``kappa / se0``, the test statistic of kappa = 0.
        p_value: Two-sided p-value of that test.
        confidence: Confidence level of the interval.
        status: ``ok``, ``undefined_single_category`` or ``insufficient_rows``.
    """

    n: int
    p_o: float | None
    p_e: float | None
    kappa: float | None
    kappa_max: float | None
    se: float | None
    se0: float | None
    ci_low: float | None
    ci_high: float | None
    z: float | None
    p_value: float | None
    confidence: float
    status: KappaStatus


def _none(n: int, confidence: float, status: KappaStatus, p_o: float | None = None) -> CohenKappa:
    p_e = 1.0 if status == "undefined_single_category" else None
    return CohenKappa(
        n, p_o, p_e, None, None, None, None, None, None, None, None, confidence, status
    )


def cohen_kappa_from_table(
    table: Sequence[Sequence[int]] | npt.NDArray[np.int64] | ConfusionMatrix,
    *,
    confidence: float = 0.95,
) -> CohenKappa:
    r"""Cohen's (1960) kappa from a square table of counts (rows: first rater, columns: second).

    With :math:`p_{ij}` the share of rows in cell :math:`(i, j)`, :math:`p_{i\cdot}` and
    :math:`p_{\cdot j}` the margins:

    .. math::

        p_o = \sum_i p_{ii}, \quad p_e = \sum_i p_{i\cdot} p_{\cdot i}, \quad
        \kappa = \frac{p_o - p_e}{1 - p_e}, \quad
        \kappa_{max} = \frac{\sum_i \min(p_{i\cdot}, p_{\cdot i}) - p_e}{1 - p_e}.

    The large-sample variance is Fleiss, Cohen & Everitt (1969, Psychological Bulletin 72(5),
    eq. 13), the ``ASE`` of SAS PROC FREQ and ``std_kappa`` of statsmodels' ``cohens_kappa``:

    .. math::

        \mathrm{Var}(\kappa) = \frac{A + B - C}{n (1 - p_e)^2},\;
        A = \sum_i p_{ii}\,[1 - (p_{i\cdot} + p_{\cdot i})(1 - \kappa)]^2,\;
        B = (1 - \kappa)^2 \sum_{i \ne j} p_{ij} (p_{\cdot i} + p_{j\cdot})^2,\;
        C = [\kappa - p_e (1 - \kappa)]^2.

    The interval is :math:`\kappa \pm z_{1-\alpha/2}\,\mathrm{SE}`. The test of
    :math:`\kappa = 0` uses the null variance
    :math:`[p_e + p_e^2 - \sum_i p_{i\cdot} p_{\cdot i}(p_{i\cdot} + p_{\cdot i})] / [n (1-p_e)^2]`
    (``std_kappa0`` in statsmodels).

    Args:
        table: Square table of counts, or a :class:`ConfusionMatrix`.
        confidence: Confidence level of the interval.

    Returns:
        The coefficient; ``status`` is ``insufficient_rows`` for an empty table and
        ``undefined_single_category`` when both raters used one and the same category
        (``p_o`` is then 1 and ``kappa`` is ``None``).

    Raises:
        ValueError: The table is not square, holds negative counts, or ``confidence`` is not in (0, 1).

    Example:
        The SAS PROC FREQ example reproduced by statsmodels' tests
        (kappa 0.4842, ASE 0.1380, 95% CI 0.2137 to 0.7547):

        >>> k = cohen_kappa_from_table([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
        >>> round(k.kappa, 4), round(k.se, 4), round(k.ci_low, 4), round(k.ci_high, 4)
        (0.4842, 0.138, 0.2137, 0.7547)
    """
    quantile = normal_quantile(confidence)
    counts = table.array() if isinstance(table, ConfusionMatrix) else np.asarray(table)
    if counts.ndim != 2 or counts.shape[0] != counts.shape[1]:
        raise ValueError(f"table: must be a square table of counts. Got shape {counts.shape}.")
    if (counts < 0).any():
        raise ValueError("table: counts must not be negative. Got a negative count.")
    n = int(counts.sum())
    if n == 0:
        return _none(0, confidence, "insufficient_rows")
    rows = counts.sum(axis=1)
    cols = counts.sum(axis=0)
    # Exact integer test: chance agreement is 1 only when one category holds every rating.
    if int((rows * cols).sum()) == n * n:
        return _none(n, confidence, "undefined_single_category", p_o=1.0)
    p = counts / n
    p_row = rows / n
    p_col = cols / n
    p_o = float(np.trace(p))
    p_e = float((p_row * p_col).sum())
    kappa = (p_o - p_e) / (1 - p_e)
    kappa_max = (float(np.minimum(p_row, p_col).sum()) - p_e) / (1 - p_e)
    diag = np.diag(p)
    term_a = float((diag * (1 - (p_row + p_col) * (1 - kappa)) ** 2).sum())
    off = p * (p_col[:, None] + p_row[None, :]) ** 2
    np.fill_diagonal(off, 0.0)
    term_b = (1 - kappa) ** 2 * float(off.sum())
    term_c = (kappa - p_e * (1 - kappa)) ** 2
    var = max((term_a + term_b - term_c) / ((1 - p_e) ** 2 * n), 0.0)
    # The null variance is exactly 0 when one rater used a single category; keep float noise out.
    num0 = p_e + p_e**2 - float((p_row * p_col * (p_row + p_col)).sum())
    se = var**0.5
    se0 = (num0 / ((1 - p_e) ** 2 * n)) ** 0.5 if num0 > 1e-12 else 0.0
    z = kappa / se0 if se0 > 0 else None
    p_value = 2 * NormalDist().cdf(-abs(z)) if z is not None else None
    return CohenKappa(
        n=n,
        p_o=p_o,
        p_e=p_e,
        kappa=kappa,
        kappa_max=kappa_max,
        se=se,
        se0=se0,
        ci_low=kappa - quantile * se,
        ci_high=kappa + quantile * se,
        z=z,
        p_value=p_value,
        confidence=confidence,
        status="ok",
    )


def cohen_kappa(
    rater_a: Ratings,
    rater_b: Ratings,
    *,
    categories: Sequence[Hashable] | None = None,
    confidence: float = 0.95,
) -> CohenKappa:
    """Cohen's kappa of two raters' ratings of the same rows (see :func:`cohen_kappa_from_table`).

    Args:
        rater_a: First rater's category for each row.
        rater_b: Second rater's category for the same rows.
        categories: The scale's categories (default: the values seen); unused ones change nothing.
        confidence: Confidence level of the asymptotic interval.

    Raises:
        ValueError: Lengths differ, a rating is ``None`` or outside ``categories``.

    Example:
        The worked example of the casework design notes: 60 rows, observed agreement 0.75,
        chance agreement 0.48, kappa (0.75 - 0.48) / 0.52 = 0.519:

        >>> a = ["escalate"] * 18 + ["clarify"] * 42
        >>> b = ["escalate"] * 18 + ["escalate"] * 15 + ["clarify"] * 27
        >>> k = cohen_kappa(a, b)
        >>> k.p_o, round(k.p_e, 4), round(k.kappa, 4)
        (0.75, 0.48, 0.5192)
    """
    return cohen_kappa_from_table(
        confusion_matrix(rater_a, rater_b, categories=categories), confidence=confidence
    )


@dataclass(frozen=True)
class ClassKappa:
    """Kappa of one class against all the others (the raters' "is it this class?" agreement).

    Attributes:
        category: The class.
        first: Rows the first rater put in the class.
        second: Rows the second rater put in the class.
        both: Rows both raters put in the class.
        kappa: Binary Cohen's kappa of "in the class" versus "not in the class".
    """

    category: Hashable
    first: int
    second: int
    both: int
    kappa: CohenKappa


def one_vs_rest_kappa(
    rater_a: Sequence[Hashable],
    rater_b: Sequence[Hashable],
    *,
    categories: Sequence[Hashable] | None = None,
    confidence: float = 0.95,
) -> tuple[ClassKappa, ...]:
    """Binary kappa of each class against the rest, to see which class the raters disagree on.

    A class neither rater used has ``undefined_single_category`` (every row is "not this class").

    Raises:
        ValueError: As :func:`cohen_kappa`.

    Example:
        >>> [round(c.kappa.kappa, 3) for c in one_vs_rest_kappa("aabb", "abbb")]
        [0.5, 0.5]
    """
    matrix = confusion_matrix(rater_a, rater_b, categories=categories)
    counts = matrix.array()
    n = matrix.n
    out = []
    for i, category in enumerate(category_order(categories=matrix.categories)):
        both = int(counts[i, i])
        first = int(counts[i, :].sum())
        second = int(counts[:, i].sum())
        binary = [[both, first - both], [second - both, n - first - second + both]]
        out.append(
            ClassKappa(
                category, first, second, both, cohen_kappa_from_table(binary, confidence=confidence)
            )
        )
    return tuple(out)
