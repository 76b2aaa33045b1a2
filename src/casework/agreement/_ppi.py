r"""Prediction-powered pass rates: people's verdicts on a sample, the judge's on every trial.

PPI++ (Angelopoulos, Duchi & Zrnic 2023, *PPI++: Efficient Prediction-Powered Inference*,
arXiv:2311.01453) estimates a mean from a small labelled sample (people's verdicts :math:`Y_i`
with the judge's verdicts :math:`\hat Y_i` on the same replies, :math:`i = 1..n`) and a large
unlabelled one (the judge's verdicts :math:`\hat Y^u_j` on every trial, :math:`j = 1..N`):

.. math:: \hat\theta_\lambda = \lambda\,\overline{\hat Y^u} + \overline{(Y - \lambda\hat Y)},

unbiased for every :math:`\lambda`; the power-tuning parameter that minimises its variance is
estimated as :math:`\hat\lambda = \widehat{\mathrm{Cov}}(Y, \hat Y) / ((1 + n/N)\,
\widehat{\mathrm{Var}}(\hat Y))`, clipped to [0, 1] (0 is the people's mean alone, 1 is plain
PPI). Its interval is :math:`\hat\theta \pm z\sqrt{\lambda^2 \hat\sigma^2_{\hat Y^u}/N +
\hat\sigma^2_{Y-\lambda\hat Y}/n}`. :func:`ppi_mean` is that estimator as ``ppi_py``'s
``ppi_mean_ci`` computes it (same variance conventions).

:func:`stratified_ppi` is the form a run needs: one stratum per slice and check kind (each with
its own :math:`\lambda`), the programmatic verdicts as an exact stratum, and every term's
variance **clustered by case** — the sandwich :math:`\sum_c \psi_c^2` over the cases' summed
influences, a case's labelled and unlabelled trials summed together, so trials of one case (and
a reviewed trial that is also one of the run's) count as the one piece of evidence they are.
With one stratum and every item its own case it is :func:`ppi_mean` (``small_sample=False``).

By default the interval carries the small-sample corrections of cluster-robust inference
(Cameron & Miller 2015, *A Practitioner's Guide to Cluster-Robust Inference*, J. Human Resources
50(2), §VI): each term's case influences are scaled by :math:`\sqrt{G/(G-1)}` for its :math:`G`
clusters (CR1: the run's cases for the judge's mean, each stratum's reviewed cases for its
rectifier), and the quantile is Student's t on (reviewed cases - judged strata) degrees of freedom.
The rectifier's clusters are few (tens of reviewed cases), so the plain sandwich with a normal
quantile covered 0.928-0.937 at nominal 0.95 in the simulation of
``tests/agreement/test_estimator_choice.py``, and 0.939-0.947 with the corrections.
:func:`ppi_difference` is the corrected difference of two runs of one release, paired by case.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from casework.agreement.kappa import normal_quantile

#: How the PPI++ interval is made, as the output names it.
PPI_METHOD = "PPI++ (power-tuned), variance clustered by case (CR1), t interval"
#: The same without the small-sample corrections (``small_sample=False``).
PPI_METHOD_LARGE = "PPI++ (power-tuned), variance clustered by case, normal interval"


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered estimate with its normal interval.

    Attributes:
        estimate: The point estimate.
        low: Lower end of the interval (clipped to the parameter's range).
        high: Upper end of the interval (clipped to the parameter's range).
        se: Standard error of the estimate.
        lam: The power-tuning parameter of each judged stratum, in order.
        method: How the interval was made.
        df: Degrees of freedom of the t quantile (``None``: a normal quantile).
    """

    estimate: float
    low: float
    high: float
    se: float
    lam: tuple[float, ...]
    method: str = PPI_METHOD
    df: int | None = None


def _as_array(values: ArrayLike, name: str) -> NDArray[np.float64]:
    out = np.asarray(values, dtype=float)
    if out.ndim != 1:
        raise ValueError(f"{name}: must be one-dimensional. Got shape {out.shape}.")
    return out


def power_tuning(
    y: NDArray[np.float64], yhat: NDArray[np.float64], unlabelled_sum: float, big_n: float
) -> float:
    r"""PPI++'s :math:`\hat\lambda` for a mean, clipped to [0, 1].

    :math:`\widehat{\mathrm{Cov}}` divides by :math:`n`; :math:`\widehat{\mathrm{Var}}(\hat Y)`
    is the sample variance (divisor :math:`n + N - 1`) of the judge's verdicts on the labelled and
    unlabelled items pooled. Binary verdicts need only their count and sum on the unlabelled
    side (``unlabelled_sum`` of ``big_n``), so a run's trials are passed as totals.
    """
    n = len(y)
    if n == 0 or big_n <= 0:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    total = n + big_n
    mean = (float(yhat.sum()) + unlabelled_sum) / total
    # Binary unlabelled verdicts: the sum of squares equals the sum.
    squares = float((yhat**2).sum()) + unlabelled_sum
    if total <= 1:
        return 0.0
    var = (squares - total * mean * mean) / (total - 1)
    if var <= 0:
        return 0.0
    return min(1.0, max(0.0, cov / ((1 + n / big_n) * var)))


def ppi_mean(
    y: ArrayLike,
    yhat: ArrayLike,
    yhat_unlabelled: ArrayLike,
    *,
    lam: float | None = None,
    confidence: float = 0.95,
) -> PPIEstimate:
    r"""The PPI++ mean and its interval, every item independent (the unclustered estimator).

    Args:
        y: People's verdicts (1 pass, 0 fail) on the labelled items.
        yhat: The judge's verdicts on the same items.
        yhat_unlabelled: The judge's verdicts on the unlabelled items.
        lam: The power-tuning parameter; ``None`` estimates it (:func:`power_tuning`), 1 is plain
            PPI, 0 is the people's mean alone.
        confidence: Confidence level of the interval.

    Returns:
        The estimate; the bounds are not clipped (the mean of any numbers).

    Raises:
        ValueError: Arrays of different lengths, an empty sample, or a bad confidence.

    Example:
        Four reviewed replies (people 1, 1, 0, 1; judge 1, 0, 0, 1) and the judge's verdicts on
        eight trials (six passes); plain PPI is 6/8 + (3 - 2)/4 = 1.0:

        >>> round(ppi_mean([1, 1, 0, 1], [1, 0, 0, 1], [1, 1, 1, 0, 1, 1, 0, 1], lam=1).estimate, 3)
        1.0
    """
    ya, fa, fu = _as_array(y, "y"), _as_array(yhat, "yhat"), _as_array(yhat_unlabelled, "unl")
    if len(ya) != len(fa):
        raise ValueError(f"yhat: needs one verdict per labelled item ({len(ya)}). Got {len(fa)}.")
    if len(ya) == 0 or len(fu) == 0:
        raise ValueError("y: the labelled and the unlabelled samples must not be empty.")
    z = normal_quantile(confidence)
    if lam is None:
        n, big_n = len(ya), len(fu)
        cov = float(np.mean((ya - ya.mean()) * (fa - fa.mean())))
        pooled = np.concatenate([fa, fu])
        var = float(pooled.var(ddof=1)) if len(pooled) > 1 else 0.0
        lam = 0.0 if var <= 0 else min(1.0, max(0.0, cov / ((1 + n / big_n) * var)))
    rect = ya - lam * fa
    est = lam * float(fu.mean()) + float(rect.mean())
    se = math.sqrt(lam * lam * float(fu.var()) / len(fu) + float(rect.var()) / len(ya))
    return PPIEstimate(est, est - z * se, est + z * se, se, (lam,), PPI_METHOD_LARGE)


@dataclass(frozen=True)
class PPIStratum:
    """One stratum of a run's pass rate, case by case.

    The per-case arrays are aligned over the strata of one rate (one entry per case, in the same
    order), as in :class:`casework.agreement._rates.ClusteredPart`.

    Attributes:
        weights: Per case, the share of the whole figure its trials in this stratum carry (over
            every stratum and case the weights sum to 1).
        passes: Per case, the weighted judge passes of its trials in this stratum (for an exact
            stratum, the passes).
        n: Trials in the stratum.
        human: People's verdicts on the reviewed items of the stratum (1 pass, 0 fail); empty
            and ``exact`` for programmatic verdicts.
        judge: The judge's verdicts on the same items.
        cases: The case (index into the per-case arrays) of each reviewed item; ``-1`` puts the
            item in a case of its own (a reviewed reply from outside these cases).
        exact: Programmatic verdicts, which count as they are.
    """

    weights: ArrayLike
    passes: ArrayLike
    n: int
    human: ArrayLike = ()
    judge: ArrayLike = ()
    cases: ArrayLike = ()
    exact: bool = False


@dataclass(frozen=True)
class _Fit:
    estimate: float
    lam: tuple[float, ...]
    influence: NDArray[np.float64]  # per case of the run
    outside: NDArray[np.float64]  # reviewed items in cases of their own
    df: int  # clusters behind the rectifiers, less one per judged stratum


def _cr1(clusters: int, small_sample: bool) -> float:
    """The CR1 factor on an influence: sqrt(G / (G - 1)) for G clusters (1 when off or G < 2)."""
    return math.sqrt(clusters / (clusters - 1)) if small_sample and clusters > 1 else 1.0


def _fit(
    strata: Sequence[PPIStratum], cases: int, lam: float | None, small_sample: bool = False
) -> _Fit:
    total = 0.0
    lams: list[float] = []
    run_part = np.zeros(cases)  # the judge's mean and the exact strata, per case of the run
    influence = np.zeros(cases)
    outside: list[float] = []
    df = 0
    for s in strata:
        w, p = _as_array(s.weights, "weights"), _as_array(s.passes, "passes")
        if len(w) != cases or len(p) != cases:
            raise ValueError("strata: every stratum needs one weight and one pass count per case.")
        share = float(w.sum())
        if s.n == 0 or share <= 0:
            continue
        mu = float(p.sum()) / share
        if s.exact:
            total += share * mu
            run_part += p - w * mu
            continue
        y, f = _as_array(s.human, "human"), _as_array(s.judge, "judge")
        idx = np.asarray(s.cases, dtype=int)
        if len(y) == 0:
            raise ValueError("human: a judged stratum needs people's verdicts on reviewed items.")
        if len(f) != len(y) or len(idx) != len(y):
            raise ValueError("judge: needs one judge verdict and one case per reviewed item.")
        if ((idx < -1) | (idx >= cases)).any():
            raise ValueError(f"cases: must lie in [-1, {cases}).")
        k = power_tuning(y, f, mu * s.n, s.n) if lam is None else lam
        lams.append(k)
        rect = y - k * f
        delta = float(rect.mean())
        total += share * (k * mu + delta)
        # Linearised contributions to the figure: unlabelled (weighted, per case) and labelled.
        run_part += k * (p - w * mu)
        inside = idx >= 0
        clusters = len(np.unique(idx[inside])) + int((~inside).sum())
        labelled = share * (rect - delta) / len(y) * _cr1(clusters, small_sample)
        np.add.at(influence, idx[inside], labelled[inside])
        outside.extend(labelled[~inside].tolist())
        df += clusters - 1
    influence += run_part * _cr1(cases, small_sample)
    if not lams:
        df = cases - 1
    return _Fit(total, tuple(lams), influence, np.asarray(outside, dtype=float), max(1, df))


def _interval(
    estimate: float,
    variance: float,
    confidence: float,
    lam: tuple[float, ...],
    floor: float,
    df: int | None,
) -> PPIEstimate:
    from scipy.stats import t as student_t  # scipy.stats takes ~0.3 s to import: only when used

    z = normal_quantile(confidence)
    if df is not None:
        z = float(student_t.ppf(1 - (1 - confidence) / 2, df))
    se = math.sqrt(max(0.0, variance))
    low = max(floor, estimate - z * se)
    high = min(1.0, estimate + z * se)
    method = PPI_METHOD if df is not None else PPI_METHOD_LARGE
    return PPIEstimate(estimate, low, high, se, lam, method, df)


def stratified_ppi(
    strata: Sequence[PPIStratum],
    *,
    lam: float | None = None,
    confidence: float = 0.95,
    small_sample: bool = True,
) -> PPIEstimate:
    r"""A run's pass rate by PPI++, stratified, its variance clustered by case.

    The estimate is :math:`\sum_s W_s \hat\theta_s`: an exact stratum contributes its weighted
    pass share, a judged one :math:`\lambda_s \hat\mu^u_s + \overline{(Y - \lambda_s\hat Y)}_s`
    with its own :math:`\lambda_s` (:func:`power_tuning`). Each case's influence is the sum of
    its trials' and its reviewed items' linearised contributions; the variance is
    :math:`\sum_c \psi_c^2` (plus the squares of reviewed items in cases of their own). The
    interval is clipped to [0, 1].

    Args:
        strata: The strata, with per-case arrays of one length.
        lam: One power-tuning parameter for every stratum (``None``: estimated per stratum).
        confidence: Confidence level of the interval.
        small_sample: Scale each term's influences by CR1's :math:`\sqrt{G/(G-1)}` and take
            Student's t quantile on (reviewed cases - judged strata) degrees of freedom (the
            module's note); ``False``: the plain sandwich and a normal quantile.

    Raises:
        ValueError: Per-case arrays of different lengths, a judged stratum without reviewed
            items, bad case indices or a bad confidence.
    """
    normal_quantile(confidence)
    if not strata:
        raise ValueError("strata: give at least one stratum.")
    fit = _fit(strata, len(_as_array(strata[0].weights, "weights")), lam, small_sample)
    variance = float((fit.influence**2).sum() + (fit.outside**2).sum())
    df = fit.df if small_sample else None
    return _interval(min(1.0, max(0.0, fit.estimate)), variance, confidence, fit.lam, 0.0, df)


def ppi_difference(
    a: Sequence[PPIStratum],
    b: Sequence[PPIStratum],
    *,
    lam: float | None = None,
    confidence: float = 0.95,
    small_sample: bool = True,
) -> PPIEstimate:
    r"""The PPI++-corrected difference of two runs' pass rates (a - b), paired by case.

    Both runs are of one release, so their per-case arrays are aligned on the same cases. Each
    run's estimate is :func:`stratified_ppi`'s; the variance of the difference is
    :math:`\sum_c (\psi^a_c - \psi^b_c)^2`, so what a case does to both runs (its difficulty)
    cancels. The interval is clipped to [-1, 1]; with ``small_sample`` its t quantile takes the
    smaller of the two runs' degrees of freedom.

    Raises:
        ValueError: As :func:`stratified_ppi`, or runs over different numbers of cases.
    """
    normal_quantile(confidence)
    if not a or not b:
        raise ValueError("strata: give at least one stratum for each run.")
    cases, other = len(_as_array(a[0].weights, "weights")), len(_as_array(b[0].weights, "weights"))
    if other != cases:
        raise ValueError(f"b: the runs must be over the same cases ({cases}). Got {other}.")
    fa, fb = _fit(a, cases, lam, small_sample), _fit(b, cases, lam, small_sample)
    diff = fa.estimate - fb.estimate
    variance = float(
        ((fa.influence - fb.influence) ** 2).sum() + (fa.outside**2).sum() + (fb.outside**2).sum()
    )
    df = min(fa.df, fb.df) if small_sample else None
    return _interval(diff, variance, confidence, fa.lam + fb.lam, -1.0, df)
