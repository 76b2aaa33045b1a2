"""The compiled loops of casework.leakage._kernels against the numpy code they replaced.

The ``_numpy_*`` functions are the numpy versions the kernels replaced, kept here as oracles
written another way: the kernels must give the same values bit for bit, on seeded random rows
and on the edges (empty rows, one shingle, rows longer than the old numpy block, repeated
hashes, the largest hash, products past 2**32).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt
import pytest

from casework.leakage import _kernels
from casework.leakage.lsh import band_keys
from casework.leakage.minhash import EMPTY, MinHasher, agreements, fingerprints
from casework.leakage.pairs import (
    iter_pairs_within_groups,
    pairs_within_groups,
    shared_shingles,
)
from casework.shingling._sets import I64, U64, ShingleSets

U32 = npt.NDArray[np.uint32]
U8 = npt.NDArray[np.uint8]


def _numpy_signatures(sets: ShingleSets, a: U32, b: U32) -> U32:
    """MinHash in numpy: ``num_perm x block`` products, then ``minimum.reduceat`` per row."""
    out = np.full((len(sets), len(a)), EMPTY, dtype=np.uint32)
    sizes = sets.sizes()
    rows = np.flatnonzero(sizes > 0)
    if not len(rows):
        return out
    h = sets.hashes
    folded = (h ^ (h >> np.uint64(32))).astype(np.uint32)
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(sizes[rows], out=offsets[1:])
    sub = np.empty((len(rows), len(a)), dtype=np.uint32)
    first = 0
    while first < len(rows):
        stop = int(np.searchsorted(offsets, offsets[first] + 4096, side="right")) - 1
        stop = max(stop, first + 1)
        lo, hi = int(offsets[first]), int(offsets[stop])
        values = np.multiply(a[:, None], folded[None, lo:hi])
        np.add(values, b[:, None], out=values)
        sub[first:stop] = np.minimum.reduceat(values, offsets[first:stop] - lo, axis=1).T
        first = stop
    out[rows] = sub
    return out


def _numpy_band_keys(signatures: U32, band: int, rows: int) -> U64:
    """Band keys in numpy: the band's columns viewed as 64-bit words, mixed column by column."""
    block = signatures[:, band * rows : (band + 1) * rows]
    if rows % 2:
        block = np.concatenate([block, np.zeros((len(block), 1), dtype=np.uint32)], axis=1)
    words = np.ascontiguousarray(block).view(np.uint64)
    seed = ((band + 1) * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    key = np.full(len(signatures), seed, dtype=np.uint64)
    for c in range(words.shape[1]):
        key ^= words[:, c]
        key *= np.uint64(0xFF51AFD7ED558CCD)
        key ^= key >> np.uint64(32)
    return key


def _numpy_agreements(prints: U8, left: I64, right: I64, other: U8) -> I64:
    """Agreeing fingerprints in numpy: both rows of each pair gathered, compared, counted."""
    counts: I64 = np.count_nonzero(prints[left] == other[right], axis=1).astype(np.int64)
    return counts


def _numpy_intersections(hashes: U64, offsets: I64, left: I64, right: I64) -> I64:
    """Intersections in numpy: padded ``width x width`` grids, rows past 64 shingles merged."""
    sizes = np.diff(offsets)
    out = np.zeros(len(left), dtype=np.int64)
    size_a, size_b = sizes[left], sizes[right]
    widest = np.maximum(size_a, size_b)
    live = (size_a > 0) & (size_b > 0)
    wide = live & (widest > 64)
    for i in np.flatnonzero(wide):  # counted as sets: the merge under test is not the oracle
        a = hashes[offsets[left[i]] : offsets[left[i] + 1]]
        b = hashes[offsets[right[i]] : offsets[right[i] + 1]]
        out[i] = int(np.isin(a, b).sum())
    narrow = np.flatnonzero(live & ~wide)
    widths = -(-widest[narrow] // 8) * 8
    for width in np.unique(widths):
        w = int(width)
        pick = narrow[widths == width]
        cols = np.arange(w, dtype=np.int64)[None, :]
        sa, sb = size_a[pick][:, None], size_b[pick][:, None]
        a = hashes[offsets[left[pick]][:, None] + np.minimum(cols, sa - 1)]
        b = hashes[offsets[right[pick]][:, None] + np.minimum(cols, sb - 1)]
        found = (a[:, :, None] == b[:, None, :]).any(axis=2)
        found &= cols < sa
        out[pick] = np.count_nonzero(found, axis=1)
    return out


def _numpy_pairs_within_groups(members: I64, keys: U64) -> tuple[I64, I64]:
    """Pairs sharing a key in numpy: group bounds, then every element's partners by repeats."""
    if len(members) < 2:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.argsort(keys)
    m, k = members[order], keys[order]
    boundary = np.flatnonzero(k[1:] != k[:-1]) + 1
    starts = np.concatenate([[0], boundary]).astype(np.int64)
    sizes = np.diff(np.concatenate([starts, [len(k)]])).astype(np.int64)
    in_group = np.repeat(sizes >= 2, sizes)
    elem = np.flatnonzero(in_group).astype(np.int64)
    group_end = np.repeat(starts + sizes, sizes)[in_group]
    counts = group_end - elem - 1
    first = np.repeat(elem, counts)
    offsets = np.zeros(len(elem) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    second = (
        np.arange(int(offsets[-1]), dtype=np.int64)
        - np.repeat(offsets[:-1], counts)
        + np.repeat(elem + 1, counts)
    )
    a, b = m[first], m[second]
    return np.minimum(a, b), np.maximum(a, b)


def _random_sets(rng: np.random.Generator, sizes: list[int], pool: int) -> ShingleSets:
    """Rows of the given sizes drawn from ``pool`` hashes spread over 64 bits (sorted, distinct).

    The pool holds 0 and 2**64 - 1, and values whose two halves cancel when folded.
    """
    spread = rng.integers(0, 2**64, size=pool, dtype=np.uint64, endpoint=False)
    spread[:4] = [0, 2**64 - 1, 0xDEADBEEFDEADBEEF, 1 << 32]
    return ShingleSets.from_rows(rng.choice(spread, size, replace=False).tolist() for size in sizes)


def _edge_sizes(rng: np.random.Generator) -> list[int]:
    """Empty rows, one shingle, short and long rows, one past the old numpy block of 4,096."""
    sizes = [0, 1, 1, 2, 3, 7, 8, 9, 63, 64, 65, 200, 0, 5000]
    return sizes + [int(s) for s in rng.integers(0, 120, size=300)]


@pytest.fixture
def sets() -> ShingleSets:
    rng = np.random.default_rng(7)
    return _random_sets(rng, _edge_sizes(rng), pool=6000)


@pytest.mark.parametrize("num_perm", [1, 7, 208])
def test_signatures_equal_numpy_bit_for_bit(sets: ShingleSets, num_perm: int) -> None:
    hasher = MinHasher(num_perm, seed=3, threads=1)
    found = hasher.signatures(sets)
    expected = _numpy_signatures(sets, hasher._a, hasher._b)
    assert found.dtype == np.uint32 and found.shape == (len(sets), num_perm)
    assert np.array_equal(found, expected)
    assert (found[sets.sizes() == 0] == EMPTY).all()


def test_signatures_on_two_threads_equal_one() -> None:
    rng = np.random.default_rng(11)
    many = _random_sets(rng, rng.integers(0, 40, size=5000).tolist(), pool=3000)
    one = MinHasher(64, threads=1).signatures(many)
    assert np.array_equal(MinHasher(64, threads=2).signatures(many), one)
    assert np.array_equal(one, _numpy_signatures(many, MinHasher(64)._a, MinHasher(64)._b))


def test_signatures_of_repeated_hashes_and_of_no_rows() -> None:
    # ShingleSets rows never repeat a hash, but a repeat changes no minimum.
    hashes = np.array([5, 5, 5, 2**64 - 1, 9, 9], dtype=np.uint64)
    repeated = ShingleSets(hashes, np.array([0, 3, 4, 6], dtype=np.int64))
    hasher = MinHasher(32, threads=1)
    expected = _numpy_signatures(repeated, hasher._a, hasher._b)
    assert np.array_equal(hasher.signatures(repeated), expected)
    none = ShingleSets(np.zeros(0, dtype=np.uint64), np.zeros(1, dtype=np.int64))
    assert hasher.signatures(none).shape == (0, 32)


@pytest.mark.parametrize("rows", [1, 5, 8])
def test_band_keys_equal_numpy(sets: ShingleSets, rows: int) -> None:
    sig = MinHasher(4 * rows, threads=1).signatures(sets)
    for band in range(4):
        assert np.array_equal(band_keys(sig, band, rows), _numpy_band_keys(sig, band, rows))


def test_agreements_equal_numpy_within_one_block_and_across_two(sets: ShingleSets) -> None:
    rng = np.random.default_rng(5)
    prints = fingerprints(MinHasher(208, threads=1).signatures(sets))
    other = fingerprints(MinHasher(208, seed=2, threads=1).signatures(sets))
    left = rng.integers(0, len(sets), size=4000)
    right = rng.integers(0, len(sets), size=4000)
    assert np.array_equal(
        agreements(prints, left, right), _numpy_agreements(prints, left, right, prints)
    )
    assert np.array_equal(
        agreements(prints, left, right, other), _numpy_agreements(prints, left, right, other)
    )
    assert (agreements(prints, left, left) == 208).all()
    assert len(agreements(prints, left[:0], right[:0])) == 0


def _all_pairs(n: int) -> Iterator[I64]:
    left, right = np.triu_indices(n, k=1)
    yield left.astype(np.int64)
    yield right.astype(np.int64)


def test_intersections_equal_the_numpy_grids_and_merges() -> None:
    rng = np.random.default_rng(9)
    # A small pool: pairs share many hashes; rows of up to 300 cross the old grid's limit of 64.
    sizes = [0, 1, 2, 8, 9, 40, 64, 65, 300, *rng.integers(0, 90, size=60).tolist()]
    small = _random_sets(rng, sizes, pool=400)
    left, right = _all_pairs(len(small))
    expected = _numpy_intersections(small.hashes, small.offsets, left, right)
    assert expected.sum() > 0
    assert np.array_equal(shared_shingles(small, left, right), expected)
    assert np.array_equal(shared_shingles(small, right, left), expected)


def test_intersections_across_two_batches_equal_one_batch(sets: ShingleSets) -> None:
    rng = np.random.default_rng(4)
    cut = len(sets) // 2
    first = sets.take(np.arange(cut))
    second = sets.take(np.arange(cut, len(sets)))
    left = rng.integers(0, cut, size=3000)
    right = rng.integers(0, len(sets) - cut, size=3000)
    expected = _numpy_intersections(sets.hashes, sets.offsets, left, right + cut)
    assert np.array_equal(shared_shingles(first, left, right, second), expected)


def test_intersections_count_repeated_hashes_as_the_grid_did() -> None:
    # A row's positions whose hash the other row holds: a repeat on the left counts twice,
    # one on the right once (rows sorted; ShingleSets never repeats, the count is defined anyway).
    hashes = np.array([1, 3, 3, 7, 3, 7, 7, 9, 2**64 - 1], dtype=np.uint64)
    offsets = np.array([0, 4, 8, 9], dtype=np.int64)
    rows = ShingleSets(hashes, offsets)
    left = np.array([0, 1, 0, 2, 1], dtype=np.int64)
    right = np.array([1, 0, 0, 2, 2], dtype=np.int64)
    expected = _numpy_intersections(hashes, offsets, left, right)
    assert expected.tolist() == [3, 3, 4, 1, 0]
    assert shared_shingles(rows, left, right).tolist() == expected.tolist()


@pytest.mark.parametrize("case", ["mixed", "singletons", "one group", "one row", "no rows"])
def test_pairs_within_groups_equal_numpy_in_the_same_order(case: str) -> None:
    rng = np.random.default_rng(13)
    keys = {
        # One key of 120 rows, small groups, single rows; keys near 2**64 too.
        "mixed": np.concatenate(
            [
                np.full(120, 2**64 - 1, dtype=np.uint64),
                rng.integers(0, 300, 900).astype(np.uint64),
                np.arange(10**6, 10**6 + 400, dtype=np.uint64),
            ]
        ),
        "singletons": np.arange(500),
        "one group": np.full(60, 7),
        "one row": np.array([3]),
        "no rows": np.zeros(0),
    }[case].astype(np.uint64)
    members = rng.permutation(len(keys)).astype(np.int64) * 3
    expected = _numpy_pairs_within_groups(members, keys)
    found = pairs_within_groups(members, keys)
    assert found[0].tolist() == expected[0].tolist()
    assert found[1].tolist() == expected[1].tolist()
    parts = list(iter_pairs_within_groups(members, keys, max_pairs=500))
    assert all(len(low) for low, _ in parts)
    joined = [np.concatenate([p[i] for p in parts]).tolist() if parts else [] for i in (0, 1)]
    assert joined == [expected[0].tolist(), expected[1].tolist()]


def test_python_bodies_give_the_compiled_results(sets: ShingleSets) -> None:
    """Each kernel's Python body (what numba compiles) run as Python: the same values."""
    small = sets.take(np.arange(40))
    hasher = MinHasher(16, threads=1)
    sig = np.empty((len(small), 16), dtype=np.uint32)
    _kernels.minhash.py_func(small.hashes, small.offsets, hasher._a, hasher._b, sig)
    assert np.array_equal(sig, hasher.signatures(small))
    key = np.empty(len(small), dtype=np.uint64)
    with np.errstate(over="ignore"):  # numpy scalars warn where the 64-bit product wraps
        _kernels.band_key.py_func(sig, 5, 5, np.uint64(2 * 0x9E3779B97F4A7C15 % 2**64), key)
    assert np.array_equal(key, band_keys(sig, 1, 5))
    left, right = _all_pairs(len(small))
    count = np.empty(len(left), dtype=np.int64)
    prints = fingerprints(sig)
    _kernels.agreements.py_func(prints, left, prints, right, count)
    assert np.array_equal(count, agreements(prints, left, right))
    _kernels.intersections.py_func(
        small.hashes, small.offsets, left, small.hashes, small.offsets, right, count
    )
    assert np.array_equal(count, shared_shingles(small, left, right))
    keys = np.sort(key % np.uint64(7))  # a few groups of equal keys, in key order
    ends = np.empty(len(keys), dtype=np.int64)
    _kernels.group_ends.py_func(keys, ends)
    members = np.arange(len(keys), dtype=np.int64)[::-1].copy()
    partners = int((ends - np.arange(1, len(ends) + 1)).sum())
    low, high = np.empty(partners, dtype=np.int64), np.empty(partners, dtype=np.int64)
    _kernels.group_pairs.py_func(members, ends, 0, len(keys), low, high)
    expected_low, expected_high = _numpy_pairs_within_groups(members, keys)
    assert sorted(zip(low.tolist(), high.tolist(), strict=True)) == sorted(
        zip(expected_low.tolist(), expected_high.tolist(), strict=True)
    )


def test_a_kernel_compiles_without_a_cache_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    # numba refuses `cache=True` when neither the package folder nor its cache folder can be
    # written (a read-only install without a home): the loop is then compiled for this process.
    import numba  # type: ignore[import-untyped]

    from casework.shingling._kernels import Kernel

    real = numba.njit
    asked: list[bool] = []

    def njit(*args: object, **options: object) -> object:
        if args:  # numba's own uses, while it compiles
            return real(*args, **options)
        asked.append(bool(options["cache"]))
        if options["cache"]:
            raise RuntimeError("cannot cache function '_total': no locator available")
        return real(**options)

    def _total(values: npt.NDArray[np.float64], out: npt.NDArray[np.float64]) -> None:
        out[0] = values.sum()

    monkeypatch.setattr(numba, "njit", njit)
    kernel = Kernel(_total)
    out = np.zeros(1)
    kernel(np.arange(5.0), out)
    assert out[0] == 10.0 and asked == [True, False]
