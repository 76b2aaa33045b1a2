"""Run metrics: pass@1, pass^k and pass@k with unbiased estimators, verdict stability, bootstrap CIs.

Pure functions over per-case tallies (``n`` graded trials, ``c`` passes). Entry points:
:func:`pass_hat_k`, :func:`pass_at_k`, :func:`summarize`, :func:`bootstrap_ci`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "RETIRED_SPLIT",
    "CaseTally",
    "GroupMetrics",
    "bootstrap_ci",
    "in_population",
    "mean_pass_at_k",
    "mean_pass_hat_k",
    "pass_at_k",
    "pass_hat_k",
    "stability",
    "summarize",
]


#: The split of retired cases (`casework dataset retire`): they still run, cheaply, and count apart.
RETIRED_SPLIT = "smoke"


def in_population(split: str) -> bool:
    """Whether a case of ``split`` is in the one population every figure counts.

    The gate, the headline figures (`results show`'s `all` row, the report), the per-slice,
    per-split and per-source rows and the unsatisfiable quota all count it; retired cases (split
    `smoke`) are shown apart, never in it.

    >>> in_population("holdout"), in_population("smoke")
    (True, False)
    """
    return split != RETIRED_SPLIT


@dataclass(frozen=True)
class CaseTally:
    """Graded trials of one case in one run.

    Attributes:
        case_id: The case.
        n: Trials with a decided verdict (pass or fail).
        c: Trials that passed.
        slice: The case's slice.
        split: The case's split.
        source: `mined`, `hand` or `synthetic`.
        undetermined: Trials whose verdict could not be decided (left out of ``n``).
    """

    case_id: str
    n: int
    c: int
    slice: str = ""
    split: str = ""
    source: str = ""
    undetermined: int = 0

    def __post_init__(self) -> None:
        if self.n < 0 or self.c < 0 or self.c > self.n:
            raise ValueError(f"case {self.case_id}: need 0 <= c <= n, got n={self.n}, c={self.c}")

    @property
    def rate(self) -> float:
        """Share of graded trials that passed (0 when none was graded)."""
        return self.c / self.n if self.n else 0.0


def _check_k(n: int, k: int) -> None:
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    if k > n:
        raise ValueError(f"k={k} exceeds the {n} trials of the case")


def pass_hat_k(n: int, c: int, k: int) -> float:
    r"""Unbiased estimate that all of ``k`` i.i.d. trials pass: :math:`\binom{c}{k} / \binom{n}{k}`.

    Yao et al., *τ-bench* (2024), §4 ("pass^k"). Example: their gpt-4o airline row
    (pass^1..4 = 0.420, 0.273, 0.220, 0.200) is reproduced from 50 tasks × 4 trials in the tests.

    >>> round(pass_hat_k(4, 3, 2), 4)
    0.5
    """
    _check_k(n, k)
    return math.comb(c, k) / math.comb(n, k)


def pass_at_k(n: int, c: int, k: int) -> float:
    r"""Unbiased estimate that at least one of ``k`` trials passes: :math:`1 - \binom{n-c}{k}/\binom{n}{k}`.

    Chen et al., *Evaluating Large Language Models Trained on Code* (2021), eq. 1.

    >>> round(pass_at_k(4, 1, 2), 4)
    0.5
    """
    _check_k(n, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def _eligible(tallies: Iterable[CaseTally], k: int) -> list[CaseTally]:
    return [t for t in tallies if t.n >= k]


def mean_pass_hat_k(tallies: Iterable[CaseTally], k: int) -> float | None:
    """Mean of :func:`pass_hat_k` over cases with at least ``k`` graded trials (None if none)."""
    usable = _eligible(tallies, k)
    if not usable:
        return None
    return sum(pass_hat_k(t.n, t.c, k) for t in usable) / len(usable)


def mean_pass_at_k(tallies: Iterable[CaseTally], k: int) -> float | None:
    """Mean of :func:`pass_at_k` over cases with at least ``k`` graded trials (None if none)."""
    usable = _eligible(tallies, k)
    if not usable:
        return None
    return sum(pass_at_k(t.n, t.c, k) for t in usable) / len(usable)


def stability(tallies: Iterable[CaseTally]) -> float | None:
    """Share of cases (with 2+ graded trials) whose verdict is the same in every trial.

    A case whose verdict flips across trials of an unchanged system tells nothing on one trial.
    """
    usable = [t for t in tallies if t.n >= 2]
    if not usable:
        return None
    return sum(t.c in (0, t.n) for t in usable) / len(usable)


def bootstrap_ci(
    values: Sequence[float],
    *,
    statistic: Callable[[NDArray[np.float64]], float] | None = None,
    resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float] | None:
    """Percentile bootstrap CI of a statistic (default: the mean) over cases.

    Efron & Tibshirani, *An Introduction to the Bootstrap* (1993), ch. 13: resample the cases
    with replacement, take the (α/2, 1−α/2) percentiles of the resampled statistic.
    Cases, not trials, are resampled: trials of one case are not independent evidence.
    """
    if len(values) == 0:
        return None
    data = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(data), size=(resamples, len(data)))
    samples = data[idx]
    stats = samples.mean(axis=1) if statistic is None else np.array([statistic(s) for s in samples])
    alpha = (1.0 - confidence) / 2
    lo, hi = np.quantile(stats, [alpha, 1 - alpha])
    return float(lo), float(hi)


@dataclass(frozen=True)
class GroupMetrics:
    """Metrics of one group of cases (a slice, a split, a source, or everything).

    Attributes:
        group: Group name (`all`, `slice:refunds`, `source:real`…).
        cases: Cases with at least one graded trial.
        trials: Graded trials.
        undetermined: Trials left undecided.
        pass_hat: pass^k by k (k = 1 is pass@1).
        pass_at: pass@k by k.
        stability: Share of cases with the same verdict in every trial.
        ci_pass1: Bootstrap 95% CI of pass@1 over cases.
        ci_pass_hat_max: Bootstrap 95% CI of pass^k at the largest k.
    """

    group: str
    cases: int
    trials: int
    undetermined: int
    pass_hat: dict[int, float | None] = field(default_factory=dict)
    pass_at: dict[int, float | None] = field(default_factory=dict)
    stability: float | None = None
    ci_pass1: tuple[float, float] | None = None
    ci_pass_hat_max: tuple[float, float] | None = None

    @property
    def pass1(self) -> float | None:
        """pass@1 (= pass^1): mean per-case pass rate."""
        return self.pass_hat.get(1)


def summarize(
    group: str, tallies: Sequence[CaseTally], k_max: int, *, seed: int = 0
) -> GroupMetrics:
    """Every metric for one group, pass^k and pass@k for k = 1..k_max."""
    graded = [t for t in tallies if t.n > 0]
    ks = range(1, max(1, k_max) + 1)
    top = max(ks)
    top_values = [pass_hat_k(t.n, t.c, top) for t in graded if t.n >= top]
    return GroupMetrics(
        group=group,
        cases=len(graded),
        trials=sum(t.n for t in graded),
        undetermined=sum(t.undetermined for t in tallies),
        pass_hat={k: mean_pass_hat_k(graded, k) for k in ks},
        pass_at={k: mean_pass_at_k(graded, k) for k in ks},
        stability=stability(graded),
        ci_pass1=bootstrap_ci([t.rate for t in graded], seed=seed),
        ci_pass_hat_max=bootstrap_ci(top_values, seed=seed) if top > 1 else None,
    )
