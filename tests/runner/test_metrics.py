from __future__ import annotations

import itertools
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casework.runner import pass_at_k, pass_hat_k
from casework.runner.metrics import (
    CaseTally,
    bootstrap_ci,
    mean_pass_at_k,
    mean_pass_hat_k,
    stability,
    summarize,
)


def _tasks(counts: dict[int, int], n: int) -> list[CaseTally]:
    """Tasks from a histogram {successes: number of tasks}, each with ``n`` trials."""
    out = []
    for c, how_many in counts.items():
        out += [CaseTally(f"t{c}-{i}", n, c) for i in range(how_many)]
    return out


def test_tau_bench_gpt4o_airline_row_is_reproduced() -> None:
    # τ-bench README (sierra-research/tau-bench), Airline leaderboard, TC (gpt-4o):
    # pass^1..4 = 0.420, 0.273, 0.220, 0.200 over 50 tasks x 4 trials. The only histogram of
    # per-task successes matching all four: 14 tasks 0/4, 12 1/4, 10 2/4, 4 3/4, 10 4/4.
    tasks = _tasks({0: 14, 1: 12, 2: 10, 3: 4, 4: 10}, 4)
    assert len(tasks) == 50
    got = [round(mean_pass_hat_k(tasks, k) or 0.0, 3) for k in (1, 2, 3, 4)]
    assert got == [0.420, 0.273, 0.220, 0.200]


def test_tau_bench_gpt4o_retail_row_is_reproduced() -> None:
    # Same README, Retail, TC (gpt-4o): 0.604, 0.491, 0.430, 0.383 over 115 tasks x 4 trials.
    tasks = _tasks({0: 22, 1: 18, 2: 9, 3: 22, 4: 44}, 4)
    assert len(tasks) == 115
    got = [round(mean_pass_hat_k(tasks, k) or 0.0, 3) for k in (1, 2, 3, 4)]
    assert got == [0.604, 0.491, 0.430, 0.383]


def test_pass_hat_k_is_not_the_pass_rate_to_the_kth_power() -> None:
    tasks = _tasks({0: 14, 1: 12, 2: 10, 3: 4, 4: 10}, 4)
    p1 = mean_pass_hat_k(tasks, 1) or 0.0
    assert round(p1**4, 3) == 0.031
    assert mean_pass_hat_k(tasks, 4) == pytest.approx(0.2)


def _brute_force(n: int, c: int, k: int) -> tuple[float, float]:
    """Enumerate every k-subset of the n trials: share where all pass, share where any passes."""
    trials = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    all_pass = sum(all(trials[i] for i in s) for s in subsets) / len(subsets)
    any_pass = sum(any(trials[i] for i in s) for s in subsets) / len(subsets)
    return all_pass, any_pass


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n)))
)
def test_estimators_match_brute_force_enumeration(args: tuple[int, int, int]) -> None:
    n, c, k = args
    all_pass, any_pass = _brute_force(n, c, k)
    assert pass_hat_k(n, c, k) == pytest.approx(all_pass)
    assert pass_at_k(n, c, k) == pytest.approx(any_pass)


def test_means_over_random_cases_match_brute_force() -> None:
    rng = random.Random(7)
    tallies = []
    for i in range(40):
        n = rng.randint(1, 6)
        tallies.append(CaseTally(f"c{i}", n, rng.randint(0, n)))
    for k in (1, 2, 3):
        usable = [t for t in tallies if t.n >= k]
        hat = sum(_brute_force(t.n, t.c, k)[0] for t in usable) / len(usable)
        at = sum(_brute_force(t.n, t.c, k)[1] for t in usable) / len(usable)
        assert mean_pass_hat_k(tallies, k) == pytest.approx(hat)
        assert mean_pass_at_k(tallies, k) == pytest.approx(at)


def test_k_larger_than_trials_is_an_error() -> None:
    with pytest.raises(ValueError, match="k=3 exceeds the 2 trials"):
        pass_hat_k(2, 1, 3)
    with pytest.raises(ValueError, match="k must be at least 1"):
        pass_at_k(2, 1, 0)
    with pytest.raises(ValueError, match="need 0 <= c <= n"):
        CaseTally("x", 2, 3)
    assert mean_pass_hat_k([CaseTally("a", 1, 1)], 2) is None


def test_stability_on_constructed_runs() -> None:
    # 4 stable cases (all pass or all fail), 2 flipping, 1 with one trial (not counted).
    tallies = [
        CaseTally("a", 3, 3),
        CaseTally("b", 3, 0),
        CaseTally("c", 3, 3),
        CaseTally("d", 2, 0),
        CaseTally("e", 3, 1),
        CaseTally("f", 3, 2),
        CaseTally("g", 1, 1),
    ]
    assert stability(tallies) == pytest.approx(4 / 6)
    assert stability([CaseTally("g", 1, 1)]) is None


def test_bootstrap_ci_brackets_the_mean_and_is_deterministic() -> None:
    values = [1.0] * 30 + [0.0] * 20
    lo, hi = bootstrap_ci(values, seed=3) or (0.0, 0.0)
    assert lo < 0.6 < hi
    assert (lo, hi) == bootstrap_ci(values, seed=3)
    # Binomial standard error of a proportion 0.6 over 50 cases: sqrt(.6*.4/50) = 0.069.
    assert hi - lo == pytest.approx(2 * 1.96 * math.sqrt(0.24 / 50), abs=0.03)
    assert bootstrap_ci([]) is None


def test_summarize_reports_every_k() -> None:
    tasks = _tasks({0: 14, 1: 12, 2: 10, 3: 4, 4: 10}, 4)
    g = summarize("all", tasks, 4)
    assert g.cases == 50 and g.trials == 200
    assert g.pass1 == pytest.approx(0.42)
    assert g.pass_at[4] == pytest.approx(36 / 50)
    assert g.stability == pytest.approx(24 / 50)
    assert g.ci_pass1 is not None and g.ci_pass_hat_max is not None
