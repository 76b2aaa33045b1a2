"""The bootstrap's faster counting draws and counts exactly what the first version did."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from casework.agreement.bootstrap import bootstrap_kappa
from casework.agreement.table import category_order, encode


def reference_kappas(
    a: Sequence[str], b: Sequence[str], n_resamples: int, seed: int
) -> npt.NDArray[np.float64]:
    """The first implementation: int64 draws, one bincount over a whole batch."""
    order = category_order(a, b)
    q = len(order)
    cell = encode(a, order) * q + encode(b, order)
    n = len(a)
    rng = np.random.default_rng(seed)
    out = []
    done = 0
    while done < n_resamples:
        size = min(500, n_resamples - done)
        idx = rng.integers(0, n, size=(size, n))
        offsets = (np.arange(size) * q * q)[:, None]
        flat = np.bincount((cell[idx] + offsets).ravel(), minlength=size * q * q)
        tables = flat.reshape(size, q, q).astype(np.float64) / n
        p_o = np.trace(tables, axis1=1, axis2=2)
        p_e = (tables.sum(axis=2) * tables.sum(axis=1)).sum(axis=1)
        defined = p_e < 1 - 1e-12
        out.append((p_o[defined] - p_e[defined]) / (1 - p_e[defined]))
        done += size
    return np.concatenate(out)


@pytest.mark.parametrize(("n", "resamples", "seed"), [(2, 40, 0), (37, 1200, 3), (5000, 600, 11)])
def test_interval_equals_the_first_implementation(n: int, resamples: int, seed: int) -> None:
    rng = np.random.default_rng(n)
    cats = ["resolve", "clarify", "refuse", "escalate"]
    a = [cats[i] for i in rng.integers(0, 4, n)]
    b = [x if rng.random() < 0.8 else cats[int(rng.integers(0, 4))] for x in a]
    values = reference_kappas(a, b, resamples, seed)
    got = bootstrap_kappa(a, b, n_resamples=resamples, seed=seed)
    tail = (1 - 0.95) / 2  # as the bootstrap computes it (not exactly 0.025)
    low, high = np.quantile(values, [tail, 1 - tail])
    assert (got.low, got.high) == (float(low), float(high))
    assert got.n_undefined == resamples - len(values)


@pytest.mark.parametrize("n", [1, 2, 3, 1000, 2**20 + 7, 2**31 - 1])
def test_int32_and_int64_draws_are_the_same_indices(n: int) -> None:
    wide = np.random.default_rng(5).integers(0, n, size=(3, 257))
    narrow = np.random.default_rng(5).integers(0, n, size=(3, 257), dtype=np.int32)
    assert np.array_equal(wide, narrow)
