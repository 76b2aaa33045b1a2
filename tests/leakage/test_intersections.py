"""Exact intersection counts of pairs of shingle rows, by merging them."""

from __future__ import annotations

import numpy as np

from casework.leakage.pairs import shared_shingles
from casework.shingling._sets import ShingleSets


def _rows(rng: np.random.Generator, sizes: list[int], pool: int) -> ShingleSets:
    """Rows of distinct hashes drawn from a small pool (so pairs share many), sorted."""
    rows = [np.sort(rng.choice(pool, size, replace=False)) for size in sizes]
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    # Hashes spread over all 64 bits, the largest value included (no value is kept as padding).
    spread = np.array([2**64 - 1 - 7 * v for v in range(pool)], dtype=np.uint64)
    return ShingleSets(np.concatenate([np.sort(spread[r]) for r in rows]), offsets)


def test_counts_equal_python_sets_for_narrow_wide_and_empty_rows() -> None:
    rng = np.random.default_rng(21)
    # Short rows, rows over 64 shingles, empty rows and single shingles.
    sizes = [0, 1, 3, 8, 9, 24, 31, 40, 64, 65, 120, 0, 2, 17]
    sets = _rows(rng, sizes * 3, pool=150)
    n = len(sets)
    left, right = np.triu_indices(n, k=1)
    left, right = left.astype(np.int64), right.astype(np.int64)
    found = shared_shingles(sets, left, right)
    as_sets = [set(sets.hashes[sets.offsets[i] : sets.offsets[i + 1]].tolist()) for i in range(n)]
    expected = [len(as_sets[a] & as_sets[b]) for a, b in zip(left, right, strict=True)]
    assert found.tolist() == expected
    # Either order of a pair, and a row with itself.
    assert shared_shingles(sets, right, left).tolist() == expected
    same = np.arange(n, dtype=np.int64)
    assert shared_shingles(sets, same, same).tolist() == sizes * 3
