"""Coverage of casework's nominal 95% intervals on data whose trials are clustered in cases.

Seeded simulations (each well under 10 s): cases whose trials pass all together or not at all,
and a beta-binomial with intra-case correlation 0.5, k = 3 trials per case, judges of known TPR
and TNR. casework's case-level intervals cover the true rate 93-97% of the time; in the same
simulation the trial-level interval (statsmodels' Wilson interval over trials, or the
trial-level corrected interval) covers far less. The truth is the population mean of the cases'
pass probabilities, the quantity pass@1 estimates.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from numpy.typing import NDArray
from statsmodels.stats.proportion import proportion_confint

from casework.agreement._rates import (
    ClusteredPart,
    RatePart,
    cluster_corrected_rate,
    combined_corrected_rate,
)
from casework.runner.metrics import bootstrap_ci
from casework.runner.paired import paired_difference

CASES, K, SIMS = 100, 3, 600
TRUE_RATE = 0.7

Probabilities = Callable[[np.random.Generator, int, float], NDArray[np.float64]]


def all_or_nothing(rng: np.random.Generator, n: int, mean: float) -> NDArray[np.float64]:
    """Every trial of a case passes, or none does (intra-case correlation 1)."""
    return (rng.random(n) < mean).astype(float)


def beta_icc_half(rng: np.random.Generator, n: int, mean: float) -> NDArray[np.float64]:
    """Beta(a, b) with a + b = 1: intra-case correlation 1 / (a + b + 1) = 0.5."""
    return rng.beta(mean, 1 - mean, n)


SCENARIOS = {"all-or-nothing": all_or_nothing, "beta-binomial ICC 0.5": beta_icc_half}


def trials(rng: np.random.Generator, probs: NDArray[np.float64]) -> NDArray[np.int64]:
    """Passes of K trials per case."""
    return rng.binomial(K, probs)


def pass1_coverage(scenario: str) -> tuple[float, float]:
    """Coverage of pass@1's interval over cases, and of Wilson's over trials."""
    rng = np.random.default_rng(1)
    draw = SCENARIOS[scenario]
    covered = naive = 0
    for _ in range(SIMS):
        passes = trials(rng, draw(rng, CASES, TRUE_RATE))
        low, high = bootstrap_ci((passes / K).tolist()) or (0.0, 0.0)
        covered += low <= TRUE_RATE <= high
        n_low, n_high = proportion_confint(int(passes.sum()), CASES * K, method="wilson")
        naive += n_low <= TRUE_RATE <= n_high
    return covered / SIMS, naive / SIMS


@pytest.mark.parametrize("scenario", SCENARIOS, ids=str)
def test_pass1_interval_covers_and_the_trial_level_one_does_not(scenario: str) -> None:
    covered, naive = pass1_coverage(scenario)
    assert 0.93 <= covered <= 0.97, covered
    assert naive < 0.90, naive


def judge(
    rng: np.random.Generator, truth: NDArray[np.int64], tpr: float, tnr: float
) -> NDArray[np.int64]:
    """The judge's pass verdicts on trials whose true verdicts are ``truth`` (0/1)."""
    u = rng.random(truth.shape)
    return np.where(truth == 1, u < tpr, u >= tnr).astype(np.int64)


def corrected_coverage(scenario: str) -> tuple[float, float]:
    """Half the cases programmatic, half judged (TPR 0.9, TNR 0.85, 150 + 150 certified)."""
    rng = np.random.default_rng(2)
    draw = SCENARIOS[scenario]
    tpr, tnr, n_cal = 0.9, 0.85, 150
    sims = 300
    covered = naive = 0
    weight = 1 / CASES
    for _ in range(sims):
        truth = rng.random((CASES, K)) < draw(rng, CASES, TRUE_RATE)[:, None]
        seen = truth.astype(np.int64)
        judged_case = np.arange(CASES) >= CASES // 2
        seen[judged_case] = judge(rng, seen[judged_case], tpr, tnr)
        per_case = seen.sum(axis=1) / K * weight
        tp, tn = int(rng.binomial(n_cal, tpr)), int(rng.binomial(n_cal, tnr))
        cert = (tp, n_cal - tp, tn, n_cal - tn)
        parts = [
            ClusteredPart(
                np.where(judged_case == j, weight, 0.0).tolist(),
                np.where(judged_case == j, per_case, 0.0).tolist(),
                CASES // 2 * K,
                cert if j else None,
            )
            for j in (False, True)
        ]
        r = cluster_corrected_rate(parts, resamples=1000)
        covered += (r.low or 0) <= TRUE_RATE <= (r.high or 0)
        prog_passes, judged_passes = seen[~judged_case].sum(), seen[judged_case].sum()
        flat = combined_corrected_rate(
            [
                RatePart(0.5, float(prog_passes), CASES // 2 * K),
                RatePart(0.5, float(judged_passes), CASES // 2 * K, cert),
            ]
        )
        naive += (flat.low or 0) <= TRUE_RATE <= (flat.high or 0)
    return covered / sims, naive / sims


@pytest.mark.parametrize("scenario", SCENARIOS, ids=str)
def test_corrected_interval_covers_and_the_trial_level_one_does_not(scenario: str) -> None:
    covered, naive = corrected_coverage(scenario)
    assert 0.93 <= covered <= 0.97, covered
    assert naive < 0.90, naive


def paired_coverage(scenario: str) -> tuple[float, float]:
    """Two agents on the same cases: case difficulty is shared, the new one is 0.05 worse."""
    rng = np.random.default_rng(3)
    draw = SCENARIOS[scenario]
    delta = -0.05
    covered = naive = 0
    for _ in range(SIMS):
        base_p = draw(rng, CASES, TRUE_RATE)
        # The run fails some cases outright and is the baseline elsewhere: difficulty is shared.
        worse = rng.random(CASES) < -delta / TRUE_RATE
        run_p = np.where(worse, 0.0, base_p)
        a, b = trials(rng, run_p) / K, trials(rng, base_p) / K
        d = paired_difference(a.tolist(), b.tolist())
        assert d is not None
        covered += d.low <= delta <= d.high
        # The same paired interval with trials as the unit: trial j of one run against trial j
        # of the other, as if the K trials of a case were K cases.
        ta = (np.arange(K) < (a * K)[:, None]).ravel().astype(float)
        tb = (np.arange(K) < (b * K)[:, None]).ravel().astype(float)
        flat = paired_difference(ta.tolist(), tb.tolist())
        assert flat is not None
        naive += flat.low <= delta <= flat.high
    return covered / SIMS, naive / SIMS


@pytest.mark.parametrize("scenario", SCENARIOS, ids=str)
def test_paired_difference_covers_and_the_trial_level_one_does_not(scenario: str) -> None:
    covered, naive = paired_coverage(scenario)
    assert 0.93 <= covered <= 0.97, covered
    assert naive < 0.90, naive
