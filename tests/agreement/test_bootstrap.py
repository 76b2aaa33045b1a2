"""Paired bootstrap of kappa: reproducible, equal to a naive loop, honest about undefined draws."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from casework.agreement import cohen_kappa
from casework.agreement.bootstrap import bootstrap_kappa
from tests.agreement.test_kappa import SEED_TABLE, ratings_of

NAMES = ["resolve", "clarify", "escalate"]


def test_same_seed_same_interval_and_other_seed_differs() -> None:
    a, b = ratings_of(SEED_TABLE, NAMES)
    one = bootstrap_kappa(a, b, n_resamples=800, seed=7)
    two = bootstrap_kappa(a, b, n_resamples=800, seed=7)
    other = bootstrap_kappa(a, b, n_resamples=800, seed=8)
    assert one == two
    assert (one.low, one.high) != (other.low, other.high)
    assert one.n_undefined == 0
    assert one.seed == 7


def test_equals_naive_loop_over_resamples() -> None:
    a, b = ratings_of(SEED_TABLE, NAMES)
    n = len(a)
    rng = np.random.default_rng(3)
    idx = rng.integers(0, n, size=(400, n))
    arr_a, arr_b = np.array(a), np.array(b)
    naive = [cohen_kappa_score(arr_a[i], arr_b[i]) for i in idx]
    low, high = np.quantile(naive, [0.05, 0.95])
    ci = bootstrap_kappa(a, b, n_resamples=400, seed=3, confidence=0.90)
    assert ci.low == pytest.approx(low, abs=1e-12)
    assert ci.high == pytest.approx(high, abs=1e-12)


def test_chunks_continue_the_same_stream() -> None:
    # More resamples than one batch: the first batch's replicates are unchanged.
    a, b = ratings_of(SEED_TABLE, NAMES)
    n = len(a)
    rng = np.random.default_rng(11)
    first = rng.integers(0, n, size=(500, n))
    second = rng.integers(0, n, size=(100, n))
    arr_a, arr_b = np.array(a), np.array(b)
    naive = [cohen_kappa_score(arr_a[i], arr_b[i]) for i in np.vstack([first, second])]
    ci = bootstrap_kappa(a, b, n_resamples=600, seed=11)
    assert ci.low == pytest.approx(np.quantile(naive, 0.025), abs=1e-12)
    assert ci.high == pytest.approx(np.quantile(naive, 0.975), abs=1e-12)


def test_brackets_the_estimate() -> None:
    a, b = ratings_of(SEED_TABLE, NAMES)
    ci = bootstrap_kappa(a, b, n_resamples=2000, seed=0)
    k = cohen_kappa(a, b).kappa
    assert ci.low is not None and ci.high is not None and k is not None
    assert ci.low < k < ci.high


def test_undefined_resamples_are_counted_and_left_out() -> None:
    # One row of "b" among 9 "a": many resamples see only "a" (kappa 0/0).
    a = ["a"] * 9 + ["b"]
    ci = bootstrap_kappa(a, list(a), n_resamples=1000, seed=1)
    assert 0 < ci.n_undefined < 1000
    assert ci.low == 1.0 and ci.high == 1.0


def test_all_undefined_and_empty() -> None:
    ci = bootstrap_kappa(["a"] * 4, ["a"] * 4, n_resamples=50, seed=0)
    assert (ci.low, ci.high, ci.n_undefined) == (None, None, 50)
    empty = bootstrap_kappa([], [], n_resamples=10)
    assert (empty.low, empty.high) == (None, None)


def test_bad_parameters() -> None:
    with pytest.raises(ValueError) as exc:
        bootstrap_kappa(["a"], ["a"], n_resamples=0)
    assert str(exc.value) == "n_resamples: must be at least 1. Got 0."
    with pytest.raises(ValueError) as exc:
        bootstrap_kappa(["a"], ["a", "b"])
    assert str(exc.value) == "rater_b: must rate as many rows as rater_a (1). Got 2."
