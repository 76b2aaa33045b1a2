"""Rates of a judge against people, and pass rates corrected for the judge's measured error.

Entry points: :func:`proportion_interval` (Wilson or Clopper–Pearson), :func:`kappa_interval`,
:func:`more_needed` (the sample-size rule), :func:`rogan_gladen`, :func:`corrected_rate` (one
judged group, Lang & Reiczigel 2014 interval) and :func:`combined_corrected_rate` (programmatic
and judged verdicts together). Counts follow one convention: positive means the check passes, so
``tp`` counts replies people and the judge both passed, ``fn`` replies people passed and the judge
failed, ``tn`` both failed, ``fp`` people failed and the judge passed.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

import numpy as np
import numpy.typing as npt
from numpy.typing import NDArray

from casework.agreement.kappa import cohen_kappa, cohen_kappa_from_table, normal_quantile

IntervalMethod = Literal["wilson", "clopper-pearson"]


@dataclass(frozen=True)
class Proportion:
    """A rate with its confidence interval.

    Attributes:
        successes: Rows counted as successes.
        n: Rows.
        estimate: ``successes / n`` (``None`` when ``n`` is 0).
        low: Lower end of the interval (``None`` when ``n`` is 0).
        high: Upper end of the interval (``None`` when ``n`` is 0).
        method: ``wilson`` or ``clopper-pearson``.
        confidence: Confidence level of the interval, e.g. 0.95.
    """

    successes: int
    n: int
    estimate: float | None
    low: float | None
    high: float | None
    method: str
    confidence: float


def _check_counts(successes: float, n: int) -> None:
    if n < 0:
        raise ValueError(f"n: must not be negative. Got {n}.")
    if not 0 <= successes <= n:
        raise ValueError(f"successes: must lie between 0 and n ({n}). Got {successes}.")


def _wilson(successes: float, n: float, z: float) -> tuple[float, float]:
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # At the edges the bound is exactly 0 (or 1); keep float noise out.
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == n else min(1.0, centre + half)
    return low, high


def _clopper_pearson(successes: float, n: float, confidence: float) -> tuple[float, float]:
    from scipy.stats import beta  # scipy.stats takes ~0.3 s to import: only when used

    alpha = 1 - confidence
    low = 0.0 if successes == 0 else float(beta.ppf(alpha / 2, successes, n - successes + 1))
    high = 1.0 if successes == n else float(beta.ppf(1 - alpha / 2, successes + 1, n - successes))
    return low, high


def _bounds(
    successes: float, n: float, confidence: float, method: IntervalMethod
) -> tuple[float, float]:
    if method == "wilson":
        return _wilson(successes, n, normal_quantile(confidence))
    if method == "clopper-pearson":
        return _clopper_pearson(successes, n, confidence)
    raise ValueError(f"method: must be 'wilson' or 'clopper-pearson'. Got {method!r}.")


def proportion_interval(
    successes: int,
    n: int,
    *,
    confidence: float = 0.95,
    method: IntervalMethod = "wilson",
) -> Proportion:
    r"""A binomial proportion with its Wilson (1927) or Clopper–Pearson (1934) interval.

    Wilson's score interval, with :math:`\hat p = x/n` and :math:`z = z_{1-\alpha/2}`:

    .. math::

        \frac{\hat p + z^2/2n \pm z\sqrt{\hat p(1-\hat p)/n + z^2/4n^2}}{1 + z^2/n}.

    Clopper–Pearson's exact interval takes the :math:`\alpha/2` quantile of
    :math:`\mathrm{Beta}(x, n-x+1)` and the :math:`1-\alpha/2` quantile of
    :math:`\mathrm{Beta}(x+1, n-x)` (0 and 1 at the edges). Both are ``method="wilson"`` and
    ``method="beta"`` of statsmodels' ``proportion_confint``.

    Args:
        successes: Rows counted as successes.
        n: Rows.
        confidence: Confidence level, strictly between 0 and 1.
        method: ``wilson`` (default) or ``clopper-pearson``.

    Returns:
        The proportion; estimate and bounds are ``None`` when ``n`` is 0.

    Raises:
        ValueError: Negative ``n``, ``successes`` outside ``[0, n]``, a confidence outside
            (0, 1) or an unknown method.

    Example:
        Wilson's interval of 81 successes in 263 trials (Newcombe 1998, Table I, example 1:
        0.2553 to 0.3662):

        >>> p = proportion_interval(81, 263)
        >>> round(p.low, 4), round(p.high, 4)
        (0.2553, 0.3662)
    """
    _check_counts(successes, n)
    if n == 0:
        normal_quantile(confidence)  # the level is still checked
        return Proportion(successes, 0, None, None, None, method, confidence)
    low, high = _bounds(successes, n, confidence, method)
    return Proportion(successes, n, successes / n, low, high, method, confidence)


#: How a clustered rate's interval is made, as the output names it.
CLUSTERED_RATE = "{method}, effective sample size of a cluster-robust variance by case"


def clustered_proportion_interval(
    successes: Sequence[int],
    n: Sequence[int],
    *,
    confidence: float = 0.95,
    method: IntervalMethod = "wilson",
) -> Proportion:
    r"""A proportion of items grouped in cases, with an interval that counts cases as the unit.

    Items of one case (several trials of one case people reviewed) are not independent: a judge
    that misreads a case misreads all its trials. The rate is the pooled
    :math:`\hat p = \sum_c x_c / \sum_c n_c`; its cluster-robust (ratio-estimator) variance is
    :math:`v = \sum_c (x_c - \hat p n_c)^2 / (\sum_c n_c)^2` over the :math:`G`
    cases, the design effect :math:`d = \max(1, v\,n / \hat p(1-\hat p))`, and the interval is
    Wilson's or Clopper–Pearson's on the effective sample :math:`n/d` with :math:`\hat p\,n/d`
    successes (Korn & Graubard 1998, *Survey Methodology* 24(2), 193–201). With one item per
    case (or no excess variance) it is :func:`proportion_interval`'s. At :math:`\hat p \in
    \{0, 1\}` the variance says nothing, and the interval is taken on the cases alone.

    Args:
        successes: Successes per case.
        n: Items per case.
        confidence: Confidence level.
        method: ``wilson`` (default) or ``clopper-pearson``.

    Returns:
        The proportion (``successes`` and ``n`` are the totals; ``method`` names the
        clustering).

    Raises:
        ValueError: Arrays of different lengths, bad counts, confidence or method.

    Example:
        Ten cases of three items; the judge is right on every item of eight cases and wrong on
        every item of two: 24 of 30 items, but the evidence of 10 cases, so the interval is
        Wilson's on 8 of 10 (0.490 to 0.943), not on 24 of 30 (0.627 to 0.905):

        >>> p = clustered_proportion_interval([3] * 8 + [0] * 2, [3] * 10)
        >>> round(p.estimate, 3), round(p.low, 3), round(p.high, 3)
        (0.8, 0.49, 0.943)
    """
    if len(successes) != len(n):
        raise ValueError(f"n: needs one count per case ({len(successes)}). Got {len(n)}.")
    for x, m in zip(successes, n, strict=True):
        _check_counts(x, m)
    x_arr, n_arr = np.asarray(successes, dtype=float), np.asarray(n, dtype=float)
    keep = n_arr > 0
    x_arr, n_arr = x_arr[keep], n_arr[keep]
    total, hits = int(n_arr.sum()), int(x_arr.sum())
    name = CLUSTERED_RATE.format(method=method)
    if total == 0:
        normal_quantile(confidence)
        _bounds(1, 1, confidence, method)
        return Proportion(0, 0, None, None, None, name, confidence)
    p = hits / total
    effective = _effective(x_arr, n_arr)
    low, high = _bounds(p * effective, effective, confidence, method)
    return Proportion(hits, total, p, low, high, name, confidence)


def _effective(x_arr: npt.NDArray[np.float64], n_arr: npt.NDArray[np.float64]) -> float:
    """The effective sample of items grouped in cases: items over the design effect."""
    total, groups = float(n_arr.sum()), len(n_arr)
    p = float(x_arr.sum()) / total
    if p in (0.0, 1.0) or groups < 2:
        # No spread to measure: count each case once, as the least the data can claim.
        return float(groups)
    v = float(((x_arr - p * n_arr) ** 2).sum()) / total**2
    return total / max(1.0, v * total / (p * (1 - p)))


def effective_sample(successes: Sequence[int], n: Sequence[int]) -> float:
    """How many independent items the cases' items are worth (:func:`clustered_proportion_interval`).

    >>> round(effective_sample([3] * 8 + [0] * 2, [3] * 10), 6)
    10.0
    """
    x_arr, n_arr = np.asarray(successes, dtype=float), np.asarray(n, dtype=float)
    keep = n_arr > 0
    return _effective(x_arr[keep], n_arr[keep]) if keep.any() else 0.0


class KappaInterval(NamedTuple):
    """Cohen's kappa with its asymptotic interval (``None`` throughout when undefined)."""

    kappa: float | None
    low: float | None
    high: float | None


def kappa_interval(
    table: Sequence[Sequence[int]] | None = None,
    *,
    ratings: tuple[Sequence[Hashable], Sequence[Hashable]] | None = None,
    confidence: float = 0.95,
) -> KappaInterval:
    r"""Cohen's kappa with the asymptotic interval :math:`\kappa \pm z\,\mathrm{SE}`.

    The standard error is the large-sample one of Fleiss, Cohen & Everitt (1969, Psychological
    Bulletin 72(5), eq. 13) — SAS PROC FREQ's ``ASE``, statsmodels' ``std_kappa`` — computed by
    :func:`casework.agreement.cohen_kappa_from_table`. The bounds are clipped to [-1, 1].

    Args:
        table: A square table of counts (rows: first rater, columns: second).
        ratings: Instead of a table, the two raters' ratings of the same rows.
        confidence: Confidence level of the interval.

    Returns:
        ``(kappa, low, high)``; all ``None`` for an empty table or when every rating fell in one
        category (kappa is then 0/0).

    Raises:
        ValueError: Neither or both of ``table`` and ``ratings``, a table that is not square or
            holds negative counts, ratings of different lengths, or a confidence outside (0, 1).

    Example:
        The SAS PROC FREQ example reproduced by statsmodels' tests (kappa 0.4842,
        95% CI 0.2137 to 0.7547):

        >>> k = kappa_interval([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
        >>> round(k.kappa, 4), round(k.low, 4), round(k.high, 4)
        (0.4842, 0.2137, 0.7547)
    """
    if (table is None) == (ratings is None):
        raise ValueError("table: give either a table of counts or `ratings`, not both or neither.")
    if table is not None:
        k = cohen_kappa_from_table([list(row) for row in table], confidence=confidence)
    else:
        assert ratings is not None
        k = cohen_kappa(list(ratings[0]), list(ratings[1]), confidence=confidence)
    if k.kappa is None or k.ci_low is None or k.ci_high is None:
        return KappaInterval(None, None, None)
    if _one_sided(table, ratings):
        # One side used a single category: kappa is 0 whatever the other does, and the
        # asymptotic SE degenerates to 0/0 (statsmodels: nan). A zero-width interval would
        # claim certainty the data cannot give; the whole range says "not informative".
        return KappaInterval(0.0, -1.0, 1.0)
    return KappaInterval(k.kappa, max(-1.0, k.ci_low), min(1.0, k.ci_high))


def _one_sided(
    table: Sequence[Sequence[int]] | None,
    ratings: tuple[Sequence[Hashable], Sequence[Hashable]] | None,
) -> bool:
    """Whether one side put every item in a single category (kappa is then 0 by construction)."""
    if table is not None:
        rows = [sum(r) for r in table]
        cols = [sum(col) for col in zip(*table, strict=True)] if table else []
        return sum(x > 0 for x in rows) <= 1 or sum(x > 0 for x in cols) <= 1
    assert ratings is not None
    return len(set(ratings[0])) <= 1 or len(set(ratings[1])) <= 1


def _reaches(
    successes: float, n: int, threshold: float, confidence: float, method: IntervalMethod
) -> bool:
    return _bounds(successes, n, confidence, method)[0] >= threshold


def more_needed(
    successes: int,
    n: int,
    threshold: float,
    *,
    confidence: float = 0.95,
    method: IntervalMethod = "wilson",
    cap: int = 10_000,
) -> int | None:
    """The sample-size rule: how many more verdicts of a class the lower bound needs.

    The further verdicts are assumed to agree at the current observed rate (``successes / n``
    is kept; with no verdict yet the rate is taken as 1.0). The answer is the fewest further
    verdicts ``m`` for which the lower bound of the interval on ``n + m`` verdicts reaches
    ``threshold``, found by doubling then bisection (the lower bound grows with the sample at a
    fixed rate).

    Args:
        successes: Verdicts of the class where the judge agreed with people.
        n: Verdicts of the class so far.
        threshold: The lower bound to reach (e.g. 0.80).
        confidence: Confidence level of the interval.
        method: ``wilson`` or ``clopper-pearson``.
        cap: Largest answer worth giving.

    Returns:
        0 when the bound already reaches ``threshold``; ``None`` when it never can (observed
        rate at or below ``threshold``) or needs more than ``cap``.

    Raises:
        ValueError: Bad counts, confidence or method.

    Example:
        No verdict yet: 16 agreeing verdicts put Wilson's lower bound at 16 / (16 + 1.96²) =
        0.806, while 15 leave it at 0.796.

        >>> more_needed(0, 0, 0.8)
        16
    """
    _check_counts(successes, n)
    _bounds(1, 1, confidence, method)  # checks the level and the method
    rate = successes / n if n else 1.0
    if rate <= threshold:
        return None
    if n and _reaches(successes, n, threshold, confidence, method):
        return 0
    high = 1
    while not _reaches(rate * (n + high), n + high, threshold, confidence, method):
        if high > cap:
            return None
        high *= 2
    low = high // 2  # does not reach (or is 0, checked above)
    while high - low > 1:
        mid = (low + high) // 2
        if _reaches(rate * (n + mid), n + mid, threshold, confidence, method):
            high = mid
        else:
            low = mid
    return high if high <= cap else None


def _rates_of(tp: int, fn: int, tn: int, fp: int) -> tuple[float, float] | None:
    for name, value in (("tp", tp), ("fn", fn), ("tn", tn), ("fp", fp)):
        if value < 0:
            raise ValueError(f"{name}: must not be negative. Got {value}.")
    if tp + fn == 0 or tn + fp == 0:
        return None
    return tp / (tp + fn), tn / (tn + fp)


def rogan_gladen(positives: float, n: int, *, tp: int, fn: int, tn: int, fp: int) -> float | None:
    r"""The true pass rate behind an observed one, corrected for the judge's error (Rogan & Gladen 1978).

    With :math:`\hat p` the observed pass share, :math:`Se = tp/(tp+fn)` (the judge's
    true-positive rate) and :math:`Sp = tn/(tn+fp)` (its true-negative rate):

    .. math:: \hat\pi = \frac{\hat p + Sp - 1}{Se + Sp - 1}, \text{ clipped to } [0, 1].

    Args:
        positives: Trials the judge passed (a weighted count may be fractional).
        n: Trials the judge decided.
        tp: Replies people and the judge passed.
        fn: Replies people passed and the judge failed.
        tn: Replies people and the judge failed.
        fp: Replies people failed and the judge passed.

    Returns:
        The corrected rate; ``None`` when ``n`` is 0, a class of the certification is empty, or
        :math:`Se + Sp - 1 \le 0` (the judge is no better than chance).

    Raises:
        ValueError: Negative counts or ``positives`` outside ``[0, n]``.

    Example:
        Observed 0.60 with Se 0.90 and Sp 0.80: (0.60 + 0.80 - 1) / (0.90 + 0.80 - 1) = 0.5714.

        >>> round(rogan_gladen(60, 100, tp=90, fn=10, tn=80, fp=20), 4)
        0.5714
    """
    _check_counts(positives, n)
    rates = _rates_of(tp, fn, tn, fp)
    if n == 0 or rates is None:
        return None
    se, sp = rates
    youden = se + sp - 1
    if youden <= 0:
        return None
    return min(1.0, max(0.0, (positives / n + sp - 1) / youden))


@dataclass(frozen=True)
class CorrectedRate:
    """A pass rate before and after correcting for the judge's measured error.

    Attributes:
        raw: The pass rate as the verdicts say (``None`` without trials).
        corrected: The rate corrected with Rogan–Gladen (``None``: not correctable, e.g. the
            judge is not certified or no better than chance).
        low: Lower end of the corrected rate's interval.
        high: Upper end of the corrected rate's interval.
        n: Trials behind the rate.
        judged: Of them, trials a judge decided.
        method: How the interval was made (``lang-reiczigel``).
    """

    raw: float | None
    corrected: float | None
    low: float | None
    high: float | None
    n: int
    judged: int
    method: str


@dataclass(frozen=True)
class RatePart:
    """One part of a pass rate: programmatic verdicts, or verdicts of one certified judge kind.

    Attributes:
        weight: Share of the whole figure this part carries (the parts' weights sum to 1).
        passes: Passes in the part (a weighted count may be fractional).
        n: Trials in the part.
        certification: ``(tp, fn, tn, fp)`` of the judge that decided the part; ``None`` for
            programmatic verdicts, which count as they are.
    """

    weight: float
    passes: float
    n: int
    certification: tuple[int, int, int, int] | None = None


class _Piece(NamedTuple):
    centre: float
    variance: float


def _lang_reiczigel(part: RatePart, z: float) -> _Piece | None:
    """Centre and variance of one judged part's corrected rate (Lang & Reiczigel 2014)."""
    assert part.certification is not None
    tp, fn, tn, fp = part.certification
    # Agresti–Coull for the observed rate, "add one success and one failure" for Se and Sp.
    n_obs = part.n + z * z
    p_obs = (part.passes + z * z / 2) / n_obs
    n_se, n_sp = tp + fn + 2, tn + fp + 2
    se, sp = (tp + 1) / n_se, (tn + 1) / n_sp
    youden = se + sp - 1
    if youden <= 0:
        return None
    est = (p_obs + sp - 1) / youden
    var_se, var_sp = se * (1 - se) / n_se, sp * (1 - sp) / n_sp
    variance = (p_obs * (1 - p_obs) / n_obs + var_se * est**2 + var_sp * (1 - est) ** 2) / youden**2
    shift = 2 * z * z * (est * var_se - (1 - est) * var_sp)
    return _Piece(est + shift, variance)


def _programmatic(part: RatePart, z: float) -> _Piece:
    n_adj = part.n + z * z
    p_adj = (part.passes + z * z / 2) / n_adj
    return _Piece(part.passes / part.n, p_adj * (1 - p_adj) / n_adj)


def combined_corrected_rate(
    parts: Sequence[RatePart], *, confidence: float = 0.95
) -> CorrectedRate:
    r"""A pass rate of programmatic and judge-decided verdicts, the judged parts corrected.

    The raw rate is :math:`\sum_i w_i \hat p_i`; the corrected rate replaces each judged part's
    :math:`\hat p_i` by its Rogan–Gladen rate (:func:`rogan_gladen`). With weights
    :math:`n_i / n` this is ``(programmatic passes + Σ judged_n × RG) / n``.

    The interval carries the calibration sample's uncertainty as well as the trials': each
    judged part contributes the adjusted centre and variance of Lang & Reiczigel (2014,
    Preventive Veterinary Medicine 113, 13–22) — the observed rate Agresti–Coull adjusted
    (:math:`x + z^2/2` of :math:`n + z^2`), Se and Sp with one success and one failure added,
    a delta-method variance

    .. math:: \frac{\tilde p(1-\tilde p)/\tilde n + \tilde\pi^2\,\widetilde{Se}(1-\widetilde{Se})/\tilde n_{Se}
        + (1-\tilde\pi)^2\,\widetilde{Sp}(1-\widetilde{Sp})/\tilde n_{Sp}}{(\widetilde{Se}+\widetilde{Sp}-1)^2}

    and the shift :math:`2z^2[\tilde\pi\,\mathrm{Var}(\widetilde{Se}) - (1-\tilde\pi)\mathrm{Var}(\widetilde{Sp})]`;
    a programmatic part contributes its observed rate and an Agresti–Coull binomial variance.
    The parts are independent, so the interval is :math:`\sum w_i c_i \pm z\sqrt{\sum w_i^2 v_i}`,
    clipped to [0, 1]; with one judged part of weight 1 it is exactly Lang & Reiczigel's. Trials
    are taken as independent (trials of one case are not quite), so with several trials per
    case the interval is on the narrow side.

    Args:
        parts: The parts of the rate (weights summing to 1; parts without trials are ignored).
        confidence: Confidence level of the interval.

    Returns:
        Raw and corrected rates; ``corrected`` and the bounds are ``None`` when a judged part
        has no certification that corrects (an empty class, or Se + Sp - 1 <= 0), or there is
        no trial; with no judged part the corrected rate is the raw one.

    Raises:
        ValueError: Bad counts or confidence.
    """
    z = normal_quantile(confidence)
    used = [p for p in parts if p.n > 0]
    n = sum(p.n for p in used)
    judged = sum(p.n for p in used if p.certification is not None)
    if not used:
        return CorrectedRate(None, None, None, None, 0, 0, "lang-reiczigel")
    raw = sum(p.weight * p.passes / p.n for p in used)
    corrected, pieces = 0.0, []
    for part in used:
        if part.certification is None:
            corrected += part.weight * part.passes / part.n
            pieces.append(_programmatic(part, z))
            continue
        tp, fn, tn, fp = part.certification
        point = rogan_gladen(part.passes, part.n, tp=tp, fn=fn, tn=tn, fp=fp)
        piece = _lang_reiczigel(part, z)
        if point is None or piece is None:
            return CorrectedRate(raw, None, None, None, n, judged, "lang-reiczigel")
        corrected += part.weight * point
        pieces.append(piece)
    centre = sum(p.weight * c.centre for p, c in zip(used, pieces, strict=True))
    half = z * math.sqrt(sum(p.weight**2 * c.variance for p, c in zip(used, pieces, strict=True)))
    low, high = max(0.0, centre - half), min(1.0, centre + half)
    return CorrectedRate(raw, corrected, low, high, n, judged, "lang-reiczigel")


def corrected_rate(
    positives: int,
    n: int,
    *,
    tp: int,
    fn: int,
    tn: int,
    fp: int,
    confidence: float = 0.95,
) -> CorrectedRate:
    """One judge-decided pass rate corrected with Rogan–Gladen, with Lang & Reiczigel's interval.

    See :func:`combined_corrected_rate` for the formulas (this is its single judged part).

    Example:
        Observed 60 passes in 100 trials, a judge certified on 100 passing and 100 failing
        replies with Se 0.90 and Sp 0.80:

        >>> r = corrected_rate(60, 100, tp=90, fn=10, tn=80, fp=20)
        >>> round(r.raw, 2), round(r.corrected, 4), round(r.low, 3), round(r.high, 3)
        (0.6, 0.5714, 0.413, 0.722)
    """
    return combined_corrected_rate(
        [RatePart(1.0, positives, n, (tp, fn, tn, fp))], confidence=confidence
    )


#: How the clustered intervals are made, as the output names it (resamples and seed filled in).
CLUSTER_BOOTSTRAP = "cluster bootstrap over cases, {resamples} resamples, seed {seed}"


@dataclass(frozen=True)
class ClusteredPart:
    """One part of a pass rate, case by case: programmatic verdicts or one certified judge kind.

    The per-case arrays are aligned across the parts of one rate (one entry per case, in the
    same order), so a resample of cases picks each case's trials in every part together.

    Attributes:
        weights: Per case, the share of the whole figure its trials in this part carry (over
            every part and case the weights sum to 1).
        passes: Per case, the weighted passes of its trials in this part (at most its weight).
        n: Trials in the part.
        certification: ``(tp, fn, tn, fp)`` of the judge that decided the part; ``None`` for
            programmatic verdicts, which count as they are.
        certification_cases: The same counts case by case (one ``(tp, fn, tn, fp)`` per case
            people reviewed, summing to ``certification``): the bootstrap then resamples the
            reviewed cases, as reviewers who saw several trials of one case gave the evidence
            of one case. Empty: each class's replies are resampled as independent.
    """

    weights: Sequence[float]
    passes: Sequence[float]
    n: int
    certification: tuple[int, int, int, int] | None = None
    certification_cases: Sequence[tuple[int, int, int, int]] = ()


def _resampled_rate(
    successes: int, n: int, resamples: int, rng: np.random.Generator
) -> NDArray[np.float64]:
    """Bootstrap replicates of ``successes / n``: the class's items resampled with replacement."""
    return rng.binomial(n, successes / n, size=resamples) / n


def _resampled_cases(
    counts: Sequence[tuple[int, int, int, int]], resamples: int, rng: np.random.Generator
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Replicates of TPR and TNR with the reviewed cases resampled (a case's items together).

    A replicate without an item of a class has no rate of it (NaN), and so no corrected rate.
    """
    table = np.asarray(counts, dtype=float)  # cases x (tp, fn, tn, fp)
    drawn = rng.multinomial(len(table), np.full(len(table), 1 / len(table)), size=resamples)
    tp, fn, tn, fp = (drawn @ table).T
    with np.errstate(invalid="ignore", divide="ignore"):
        return tp / (tp + fn), tn / (tn + fp)


def cluster_corrected_rate(
    parts: Sequence[ClusteredPart],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> CorrectedRate:
    r"""A pass rate of programmatic and judge-decided verdicts, corrected, with a case-level interval.

    The point is :func:`combined_corrected_rate`'s: :math:`\sum_j W_j \hat\pi_j`, each judged
    part's weighted pass share :math:`\hat p_j` replaced by its Rogan–Gladen rate
    (:func:`rogan_gladen`, clipped to [0, 1]).

    The interval is a percentile **cluster bootstrap over cases** (Davison & Hinkley 1997,
    *Bootstrap Methods*, §3.8): each replicate draws the cases with replacement — a case's trials
    stay together, since trials of one case are not independent evidence — and, independently,
    the certification sample (people's passing and failing replies, each class resampled on its
    own; with ``certification_cases``, the reviewed cases resampled, a case's replies together);
    the corrected rate is recomputed from both. A
    replicate whose resampled judge is no better than chance (:math:`Se + Sp \le 1`) has no
    corrected rate and is left out. Every replicate lies in [0, 1], and so does the interval.

    Args:
        parts: The parts of the rate, with per-case arrays of one length.
        confidence: Confidence level of the interval.
        resamples: Bootstrap replicates.
        seed: Seed of the resampling, so the interval is reproducible.

    Returns:
        Raw and corrected rates and the interval; ``method`` names the bootstrap. ``corrected``
        and the bounds are ``None`` when a judged part's certification corrects nothing (an
        empty class, or Se + Sp - 1 <= 0) or there is no trial.

    Raises:
        ValueError: Parts of different lengths, bad counts, confidence or resamples.

    Example:
        Four cases of two trials, all judged; the judge (Se 0.9, Sp 0.8 on 100 + 100 replies)
        passed 5 of the 8 trials:

        >>> w = [0.25] * 4
        >>> r = cluster_corrected_rate(
        ...     [ClusteredPart(w, [0.25, 0.25, 0.125, 0.0], 8, (90, 10, 80, 20))]
        ... )
        >>> round(r.raw, 3), round(r.corrected, 4), r.method
        (0.625, 0.6071, 'cluster bootstrap over cases, 2000 resamples, seed 0')
    """
    normal_quantile(confidence)  # checks the level
    if resamples < 1:
        raise ValueError(f"resamples: must be at least 1. Got {resamples}.")
    method = CLUSTER_BOOTSTRAP.format(resamples=resamples, seed=seed)
    used = [p for p in parts if p.n > 0]
    if not used:
        return CorrectedRate(None, None, None, None, 0, 0, method)
    cases = len(used[0].weights)
    weights, passes = _per_case(used, cases)
    n = sum(p.n for p in used)
    judged = sum(p.n for p in used if p.certification is not None)
    raw = float(passes.sum())
    point = _point(used, weights, passes)
    if point is None:
        return CorrectedRate(raw, None, None, None, n, judged, method)
    rng = np.random.default_rng(seed)
    # Case multiplicities of each replicate: a case drawn twice brings all its trials twice.
    drawn = rng.multinomial(cases, np.full(cases, 1 / cases), size=resamples).astype(float)
    total = _replicates(used, weights, passes, drawn, _JudgeDraws(resamples, rng))
    alpha = 1 - confidence
    low, high = (float(v) for v in np.nanquantile(total, [alpha / 2, 1 - alpha / 2]))
    return CorrectedRate(
        raw, min(1.0, max(0.0, point)), max(0.0, low), min(1.0, high), n, judged, method
    )


class _JudgeDraws:
    """Bootstrap replicates of each certification's TPR and TNR, drawn once per certification.

    Two runs corrected with the same certification (one judge, one measurement) share its
    replicates, so the judge's measured error moves both runs' corrected rates together.
    """

    def __init__(self, resamples: int, rng: np.random.Generator) -> None:
        self.resamples, self.rng = resamples, rng
        self.drawn: dict[object, tuple[NDArray[np.float64], NDArray[np.float64]]] = {}

    def of(self, part: ClusteredPart) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        assert part.certification is not None
        key = (part.certification, tuple(part.certification_cases))
        if key not in self.drawn:
            tp, fn, tn, fp = part.certification
            if part.certification_cases:
                self.drawn[key] = _resampled_cases(
                    part.certification_cases, self.resamples, self.rng
                )
            else:
                se = _resampled_rate(tp, tp + fn, self.resamples, self.rng)
                self.drawn[key] = (se, _resampled_rate(tn, tn + fp, self.resamples, self.rng))
        return self.drawn[key]


def _replicates(
    used: Sequence[ClusteredPart],
    weights: NDArray[np.float64],
    passes: NDArray[np.float64],
    drawn: NDArray[np.float64],
    judges: _JudgeDraws,
) -> NDArray[np.float64]:
    """The corrected rate of each replicate (NaN where a resampled judge corrects nothing)."""
    w_b = drawn @ weights  # replicates x parts
    with np.errstate(invalid="ignore", divide="ignore"):
        p_b = np.where(w_b > 0, (drawn @ passes) / w_b, 0.0)
    total = np.zeros(len(drawn))
    for j, part in enumerate(used):
        if part.certification is None:
            total += w_b[:, j] * p_b[:, j]
            continue
        se, sp = judges.of(part)
        youden = se + sp - 1
        with np.errstate(invalid="ignore", divide="ignore"):
            fixed_b = np.where(youden > 0, np.clip((p_b[:, j] + sp - 1) / youden, 0.0, 1.0), np.nan)
        total += w_b[:, j] * fixed_b
    return total


def _per_case(
    used: Sequence[ClusteredPart], cases: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Weights and weighted passes as ``cases x parts`` arrays."""
    if any(len(p.weights) != cases or len(p.passes) != cases for p in used):
        raise ValueError("parts: every part needs one weight and one pass count per case.")
    weights = np.array([p.weights for p in used], dtype=float).reshape(len(used), cases).T
    passes = np.array([p.passes for p in used], dtype=float).reshape(len(used), cases).T
    return weights, passes


def _point(
    used: Sequence[ClusteredPart], weights: NDArray[np.float64], passes: NDArray[np.float64]
) -> float | None:
    """The corrected rate, or ``None`` when a judged part's certification corrects nothing."""
    part_w = weights.sum(axis=0)
    point = 0.0
    for j, part in enumerate(used):
        observed = float(passes[:, j].sum() / part_w[j])
        if part.certification is None:
            point += part_w[j] * observed
            continue
        tp, fn, tn, fp = part.certification
        fixed = rogan_gladen(observed * part.n, part.n, tp=tp, fn=fn, tn=tn, fp=fp)
        if fixed is None:
            return None
        point += part_w[j] * fixed
    return min(1.0, max(0.0, point))


@dataclass(frozen=True)
class CorrectedDifference:
    """The difference of two corrected pass rates on the same cases (a - b), with its interval.

    Attributes:
        raw: The difference of the raw rates.
        corrected: The difference of the corrected rates (``None``: a judged part of either
            run is not correctable).
        low: Lower end of the interval (at least -1).
        high: Upper end of the interval (at most 1).
        cases: Cases both rates are over.
        method: How the interval was made.
    """

    raw: float
    corrected: float | None
    low: float | None
    high: float | None
    cases: int
    method: str


def cluster_corrected_difference(
    a: Sequence[ClusteredPart],
    b: Sequence[ClusteredPart],
    *,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> CorrectedDifference:
    r"""Two runs' corrected pass rates on the same cases, subtracted (a - b), paired by case.

    Each run's point is :func:`cluster_corrected_rate`'s (Rogan–Gladen per judged part). The
    interval is the same cluster bootstrap, **paired**: each replicate draws the cases once for
    both runs (a case's difficulty, shared by the runs, cancels in the difference) and each
    certification once (a certification both runs are corrected with moves both alike); the
    percentiles of the replicates' differences, clipped to [-1, 1].

    Args:
        a: The parts of the first run, with per-case arrays over the shared cases.
        b: The parts of the second run, over the same cases in the same order.
        confidence: Confidence level of the interval.
        resamples: Bootstrap replicates.
        seed: Seed of the resampling.

    Raises:
        ValueError: Runs over different numbers of cases, bad counts, confidence or resamples.

    Example:
        Four cases; a judge (Se 0.9, Sp 0.8) passed 5 of a's 8 trials and 3 of b's. Corrected,
        (0.625 - 0.2) / 0.7 - (0.375 - 0.2) / 0.7 = 0.357:

        >>> w = [0.25] * 4
        >>> d = cluster_corrected_difference(
        ...     [ClusteredPart(w, [0.25, 0.25, 0.125, 0.0], 8, (90, 10, 80, 20))],
        ...     [ClusteredPart(w, [0.25, 0.125, 0.0, 0.0], 8, (90, 10, 80, 20))],
        ... )
        >>> round(d.raw, 3), round(d.corrected, 3)
        (0.25, 0.357)
    """
    normal_quantile(confidence)
    if resamples < 1:
        raise ValueError(f"resamples: must be at least 1. Got {resamples}.")
    method = "paired " + CLUSTER_BOOTSTRAP.format(resamples=resamples, seed=seed)
    used_a, used_b = [p for p in a if p.n > 0], [p for p in b if p.n > 0]
    sizes = {len(p.weights) for p in (*used_a, *used_b)}
    if len(sizes) > 1:
        raise ValueError(f"b: the runs must be over the same cases. Got {sorted(sizes)} cases.")
    cases = sizes.pop() if sizes else 0
    if not used_a or not used_b:
        return CorrectedDifference(0.0, None, None, None, cases, method)
    (wa, pa), (wb, pb) = _per_case(used_a, cases), _per_case(used_b, cases)
    raw = float(pa.sum() - pb.sum())
    point_a, point_b = _point(used_a, wa, pa), _point(used_b, wb, pb)
    if point_a is None or point_b is None:
        return CorrectedDifference(raw, None, None, None, cases, method)
    rng = np.random.default_rng(seed)
    drawn = rng.multinomial(cases, np.full(cases, 1 / cases), size=resamples).astype(float)
    judges = _JudgeDraws(resamples, rng)
    diffs = _replicates(used_a, wa, pa, drawn, judges) - _replicates(used_b, wb, pb, drawn, judges)
    alpha = 1 - confidence
    low, high = (float(v) for v in np.nanquantile(diffs, [alpha / 2, 1 - alpha / 2]))
    return CorrectedDifference(
        raw, point_a - point_b, max(-1.0, low), min(1.0, high), cases, method
    )
