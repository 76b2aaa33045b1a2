"""Candidate pairs and their exact verification, shared by the exact join and the LSH engine.

Entry points: :class:`Pairs` (verified pairs with exact Jaccard), :func:`pairs_within_groups`
(all pairs of members sharing a key), :func:`intersection_sizes`, :func:`shared_shingles` and
:func:`verify_pairs`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from casework.leakage import _kernels
from casework.shingling._sets import I64, ShingleSets, gather_segments

__all__ = [
    "Pairs",
    "chunks",
    "cross_group",
    "dedupe_pairs",
    "dense_rows",
    "intersection_sizes",
    "intersection_weights",
    "iter_pairs_within_groups",
    "pairs_within_groups",
    "shared_shingles",
    "verify_pairs",
]

F64 = npt.NDArray[np.float64]

#: Elements merged per chunk when counting intersections (bounds peak memory).
_CHUNK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class Pairs:
    """Verified pairs of rows (``left[i] < right[i]``) with their exact similarity."""

    left: I64
    """Row index of the first member of each pair."""
    right: I64
    """Row index of the second member."""
    shared: I64
    """Number of shingles the two rows share."""
    jaccard: F64
    """Exact Jaccard similarity of the two shingle sets."""

    def __len__(self) -> int:
        return len(self.left)

    def as_set(self) -> set[tuple[int, int]]:
        """The pairs as a set of ``(left, right)`` tuples (for comparisons in tests and benchmarks)."""
        return set(zip(self.left.tolist(), self.right.tolist(), strict=True))

    def sorted(self) -> Pairs:
        """The same pairs ordered by (left, right)."""
        order = np.lexsort((self.right, self.left))
        return Pairs(self.left[order], self.right[order], self.shared[order], self.jaccard[order])

    @classmethod
    def empty(cls) -> Pairs:
        """No pairs."""
        z = np.zeros(0, dtype=np.int64)
        return cls(z, z.copy(), z.copy(), np.zeros(0, dtype=np.float64))

    @classmethod
    def concat(cls, parts: list[Pairs]) -> Pairs:
        """Pairs of several parts, one after the other."""
        if not parts:
            return cls.empty()
        return cls(
            np.concatenate([p.left for p in parts]),
            np.concatenate([p.right for p in parts]),
            np.concatenate([p.shared for p in parts]),
            np.concatenate([p.jaccard for p in parts]),
        )


def pairs_within_groups(members: I64, keys: npt.NDArray[np.integer[Any]]) -> tuple[I64, I64]:
    """Every unordered pair of ``members`` that share a key, as ``(low, high)`` row indices.

    ``members`` and ``keys`` are parallel; a group of size ``m`` yields ``m (m - 1) / 2`` pairs.
    """
    parts = list(iter_pairs_within_groups(members, keys))
    if not parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if len(parts) == 1:
        return parts[0]
    return np.concatenate([a for a, _ in parts]), np.concatenate([b for _, b in parts])


def iter_pairs_within_groups(
    members: I64, keys: npt.NDArray[np.integer[Any]], max_pairs: int | None = None
) -> Iterator[tuple[I64, I64]]:
    """:func:`pairs_within_groups` in parts of about ``max_pairs`` pairs (one part if None).

    Templated text puts many rows under one key, and a key held by ``m`` rows makes
    ``m (m - 1) / 2`` pairs: parts bound the memory that takes, whatever the group sizes.
    """
    if len(members) < 2:
        return
    order = np.argsort(keys)
    m = members[order]
    k = keys[order]
    del order
    # Element e (in key order) pairs with the elements after it up to the end of its group.
    ends = np.empty(len(k), dtype=np.int64)
    _kernels.group_ends(k, ends)
    del k
    partners = ends - np.arange(1, len(ends) + 1, dtype=np.int64)
    limit = int(partners.sum()) if max_pairs is None else max_pairs
    for lo, hi in chunks(partners, max(1, limit)):
        count = int(partners[lo:hi].sum())
        if not count:
            continue
        low = np.empty(count, dtype=np.int64)
        high = np.empty(count, dtype=np.int64)
        _kernels.group_pairs(m, ends, lo, hi, low, high)
        yield low, high


def dedupe_pairs(left: I64, right: I64, n_rows: int) -> tuple[I64, I64]:
    """Distinct pairs, ordered by (left, right); pairs of a row with itself are dropped."""
    keep = left != right
    keys = np.unique(left[keep] * np.int64(n_rows) + right[keep])
    return keys // n_rows, keys % n_rows


def cross_group(left: I64, right: I64, groups: I64 | None) -> npt.NDArray[np.bool_]:
    """Mask of pairs whose rows lie in different groups (all pairs when ``groups`` is None)."""
    if groups is None:
        return np.ones(len(left), dtype=bool)
    return np.asarray(groups[left] != groups[right])


def chunks(sizes: I64, limit: int) -> Iterator[tuple[int, int]]:
    """Consecutive index ranges whose summed ``sizes`` stay near ``limit``."""
    if not len(sizes):
        return
    cum = np.cumsum(sizes)
    start = 0
    while start < len(sizes):
        base = cum[start - 1] if start else 0
        stop = int(np.searchsorted(cum, base + limit, side="right"))
        stop = max(stop, start + 1)
        yield start, min(stop, len(sizes))
        start = stop


def _shared_values(
    values: I64, offsets: I64, left: I64, right: I64
) -> Iterator[tuple[int, int, I64, np.int64]]:
    """Per chunk of pairs, ``(lo, hi, keys, span)`` for every value the two rows share.

    ``keys // span`` is the pair (within the chunk) and ``keys % span`` the value.
    """
    span = np.int64(int(values.max()) + 1 if len(values) else 1)
    row_sizes = np.diff(offsets)
    for lo, hi in chunks(row_sizes[left] + row_sizes[right], _CHUNK_ELEMENTS):
        idx_a, off_a = gather_segments(offsets, left[lo:hi])
        idx_b, off_b = gather_segments(offsets, right[lo:hi])
        pair_ids = np.arange(hi - lo, dtype=np.int64)
        keys_a = np.repeat(pair_ids, np.diff(off_a)) * span + values[idx_a]
        keys_b = np.repeat(pair_ids, np.diff(off_b)) * span + values[idx_b]
        # Each side is sorted already: the stable sort (timsort) is one linear merge.
        merged = np.sort(np.concatenate([keys_a, keys_b]), kind="stable")
        yield lo, hi, merged[1:][merged[1:] == merged[:-1]], span


def intersection_sizes(values: I64, offsets: I64, left: I64, right: I64) -> I64:
    """Exact ``|row(left[i]) ∩ row(right[i])|`` for rows of sorted, repeat-free non-negative ints.

    The same compiled merge as :func:`shared_shingles`, over ints instead of shingle hashes.
    """
    out = np.empty(len(left), dtype=np.int64)
    _kernels.intersections(values, offsets, left, values, offsets, right, out)
    return out


def intersection_weights(values: I64, offsets: I64, left: I64, right: I64, weight: F64) -> F64:
    """Summed ``weight[value]`` over the values each pair of rows shares (rows as in :func:`intersection_sizes`)."""
    out = np.zeros(len(left), dtype=np.float64)
    for lo, hi, dup, span in _shared_values(values, offsets, left, right):
        out[lo:hi] = np.bincount(dup // span, weights=weight[dup % span], minlength=hi - lo)
    return out


def dense_rows(sets: ShingleSets, rows: I64) -> tuple[I64, I64, I64]:
    """Rows re-coded as dense ints (order-preserving), for :func:`intersection_sizes`.

    Returns the dense values and offsets of ``rows`` and a map from original row to its position
    in the new batch (-1 for rows not included).
    """
    index, offsets = gather_segments(sets.offsets, rows)
    _, dense = np.unique(sets.hashes[index], return_inverse=True)
    where = np.full(len(sets), -1, dtype=np.int64)
    where[rows] = np.arange(len(rows), dtype=np.int64)
    return dense.astype(np.int64).reshape(-1), offsets, where


def shared_shingles(
    sets: ShingleSets, left: I64, right: I64, right_sets: ShingleSets | None = None
) -> I64:
    """Exact ``|row(left[i]) ∩ row(right[i])|``, each pair's two sorted rows merged (compiled).

    ``right`` indexes ``right_sets`` when given (two batches of rows), else ``sets``.
    """
    other = sets if right_sets is None else right_sets
    out = np.empty(len(left), dtype=np.int64)
    _kernels.intersections(sets.hashes, sets.offsets, left, other.hashes, other.offsets, right, out)
    return out


def verify_pairs(
    sets: ShingleSets,
    left: I64,
    right: I64,
    threshold: float,
    right_sets: ShingleSets | None = None,
) -> Pairs:
    """Exact Jaccard of candidate pairs; keeps those at or above ``threshold``.

    ``right`` indexes ``right_sets`` when given (two batches of rows), else ``sets``.
    """
    if len(left) == 0:
        return Pairs.empty()
    shared = shared_shingles(sets, left, right, right_sets)
    other = sets if right_sets is None else right_sets
    union = sets.sizes()[left] + other.sizes()[right] - shared
    jac = np.divide(shared, union, out=np.zeros(len(shared), dtype=np.float64), where=union > 0)
    keep = jac >= threshold
    return Pairs(left[keep], right[keep], shared[keep], jac[keep])
