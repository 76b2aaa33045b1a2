"""Exact Jaccard similarity join with prefix, size and positional filters (no false negatives).

Rows are re-coded as shingle ranks ordered rarest first. Two rows with Jaccard >= t must share a
shingle among the first ``|x| - ceil(t |x|) + 1`` of each (the prefix filter), have sizes within a
factor t (the size filter), and leave enough shingles after their first shared one to reach the
required overlap (the positional filter). Survivors are verified exactly.
Sources: Bayardo, Ma & Srikant, "Scaling up all pairs similarity search", WWW 2007 (prefix and
size filters); Xiao, Wang, Lin & Yu, "Efficient similarity joins for near duplicate detection",
WWW 2008 (positional filter, PPJoin). Entry point: :func:`exact_join`.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from casework.leakage.pairs import Pairs, chunks, cross_group, dedupe_pairs, intersection_sizes
from casework.shingling._sets import I64, ShingleSets, segment_ids, sort_unique_segments

__all__ = [
    "TWO_PREFIX_RATIO",
    "choose_prefix_tokens",
    "exact_join",
    "exact_join_mb",
    "prefix_length",
    "required_overlap",
]

_EPS = 1e-9

#: Candidate pairs generated at a time (bounds peak memory).
_CHUNK_PAIRS = 5_000_000

#: Bytes a row costs in the exact join (ranks, postings, candidates), measured at 1,000,000 rows
#: of the leakage benchmark's corpus: 8.0 GB; its growth is super-linear, so larger sets cost more.
EXACT_ROW_BYTES = 8_000


def exact_join_mb(rows: int) -> int:
    """Estimated peak memory (MB) of :func:`exact_join` over ``rows`` rows (a lower bound above 1M)."""
    return math.ceil(rows * EXACT_ROW_BYTES / (1 << 20))


def prefix_length(size: int, threshold: float) -> int:
    """Prefix a row of ``size`` shingles must share at Jaccard ``threshold``: ``s - ceil(t s) + 1``.

    >>> prefix_length(10, 0.8)
    3
    """
    if size == 0:
        return 0
    return size - math.ceil(threshold * size - _EPS) + 1


def required_overlap(size_x: int, size_y: int, threshold: float) -> int:
    """Least overlap for Jaccard >= t: ``ceil(t / (1 + t) * (|x| + |y|))`` (Xiao et al. 2008).

    >>> required_overlap(10, 10, 0.8)
    9
    """
    return math.ceil(threshold / (1 + threshold) * (size_x + size_y) - _EPS)


def _ranked_rows(sets: ShingleSets) -> tuple[I64, I64]:
    """Rows as sorted shingle ranks, rank 0 being the rarest shingle (ties broken by hash)."""
    unique, inverse, counts = np.unique(sets.hashes, return_inverse=True, return_counts=True)
    order = np.lexsort((unique, counts))
    rank = np.empty(len(unique), dtype=np.int64)
    rank[order] = np.arange(len(unique), dtype=np.int64)
    ranks = rank[inverse.reshape(-1)].astype(np.uint64)
    values, offsets = sort_unique_segments(ranks, sets.offsets)
    return values.astype(np.int64), offsets


def _prefix_postings(
    values: I64, offsets: I64, threshold: float, rows: npt.NDArray[np.bool_] | None = None
) -> tuple[I64, I64, I64]:
    """``(row, position, shingle)`` of every shingle in a row's one-shingle prefix (of ``rows``)."""
    sizes = np.diff(offsets)
    prefix = np.where(sizes > 0, sizes - np.ceil(threshold * sizes - _EPS).astype(np.int64) + 1, 0)
    if rows is not None:
        prefix = np.where(rows, prefix, 0)
    row = segment_ids(offsets)
    pos = np.arange(len(values), dtype=np.int64) - offsets[row]
    in_prefix = pos < prefix[row]
    return row[in_prefix], pos[in_prefix], values[in_prefix]


def _two_prefix_keys(values: I64, offsets: I64, threshold: float) -> tuple[I64, I64, I64]:
    """``(row, position - 1, key)`` for every pair of shingles inside a row's two-shingle prefix.

    ``position`` is that of the pair's later shingle: for a pair's two rarest shared shingles, the
    rows share at most ``2 + min(|x| - position_x - 1, |y| - position_y - 1)``, which is the bound
    the positional filter computes for one shingle at ``position - 1``.

    Two rows at Jaccard >= t share at least ``o = ceil(t max(|x|, |y|))`` shingles; when ``o >= 2``
    their two rarest shared shingles both lie among the first ``|x| - ceil(t |x|) + 2`` of each
    (Wang, Li & Feng, "Can we beat the prefix filtering?", SIGMOD 2012), so they share a key.
    """
    sizes = np.diff(offsets)
    prefix = np.minimum(sizes, sizes - np.ceil(threshold * sizes - _EPS).astype(np.int64) + 2)
    row = segment_ids(offsets)
    pos = np.arange(len(values), dtype=np.int64) - offsets[row]
    keep = pos < prefix[row]
    row, pos, tok = row[keep], pos[keep], values[keep]
    # Posting e pairs with the later postings of its row's prefix.
    partners = prefix[row] - pos - 1
    first = np.repeat(np.arange(len(row), dtype=np.int64), partners)
    pair_offsets = np.zeros(len(row) + 1, dtype=np.int64)
    np.cumsum(partners, out=pair_offsets[1:])
    second = np.arange(int(pair_offsets[-1]), dtype=np.int64) - np.repeat(
        pair_offsets[:-1], partners
    )
    second += first + 1
    span = np.int64(int(values.max()) + 1) if len(values) else np.int64(1)
    return row[first], pos[second] - 1, tok[first] * span + tok[second]


def _pairs_of_postings(
    p_row: I64, p_pos: I64, p_tok: I64, sizes: I64, threshold: float, groups: I64 | None
) -> tuple[list[I64], list[I64]]:
    """Pairs of rows sharing a posting key that pass the size and positional filters."""
    # Postings grouped by key, rows inside a group by size so the size filter can cut early.
    order = np.lexsort((sizes[p_row], p_tok))
    p_row, p_pos, p_tok = p_row[order], p_pos[order], p_tok[order]
    lows: list[I64] = []
    highs: list[I64] = []
    if not len(p_tok):
        return lows, highs
    boundary = np.flatnonzero(p_tok[1:] != p_tok[:-1]) + 1
    starts = np.concatenate([[0], boundary]).astype(np.int64)
    ends = np.concatenate([boundary, [len(p_tok)]]).astype(np.int64)
    group_end = np.repeat(ends, ends - starts)
    p_size = sizes[p_row]
    # Each posting pairs with the later postings of its group whose size is within 1/t of its own.
    limit = np.floor(p_size / threshold + _EPS).astype(np.int64)
    span = np.int64(int(sizes.max()) + 1)
    group_rank = np.repeat(np.arange(len(starts), dtype=np.int64), ends - starts)
    sorted_keys = group_rank * span + p_size
    stop = np.searchsorted(
        sorted_keys, group_rank * span + np.minimum(limit, span - 1), side="right"
    )
    stop = np.minimum(stop, group_end)
    first = np.arange(len(p_row), dtype=np.int64)
    partners = np.maximum(stop - first - 1, 0)
    for lo, hi in chunks(partners, _CHUNK_PAIRS):
        a = np.repeat(first[lo:hi], partners[lo:hi])
        pair_offsets = np.zeros(hi - lo + 1, dtype=np.int64)
        np.cumsum(partners[lo:hi], out=pair_offsets[1:])
        b = (
            np.arange(int(pair_offsets[-1]), dtype=np.int64)
            - np.repeat(pair_offsets[:-1], partners[lo:hi])
            + a
            + 1
        )
        x, y = p_row[a], p_row[b]
        # Positional filter, occurrence by occurrence: the bound is only sound for a pair's first
        # shared shingle, and that occurrence always survives when the pair qualifies; later
        # occurrences that survive too are removed as duplicates below.
        sx, sy = p_size[a], p_size[b]
        bound = 1 + np.minimum(sx - p_pos[a] - 1, sy - p_pos[b] - 1)
        need = np.ceil(threshold / (1 + threshold) * (sx + sy) - _EPS).astype(np.int64)
        keep = (bound >= need) & (x != y) & cross_group(x, y, groups)
        lows.append(np.minimum(x[keep], y[keep]))
        highs.append(np.maximum(x[keep], y[keep]))
    return lows, highs


def _candidate_pairs(
    values: I64, offsets: I64, threshold: float, groups: I64 | None, prefix_tokens: int = 1
) -> tuple[I64, I64]:
    """Pairs sharing a prefix shingle (or two) that pass the size and positional filters."""
    sizes = np.diff(offsets)
    if prefix_tokens == 1:
        lows, highs = _pairs_of_postings(
            *_prefix_postings(values, offsets, threshold), sizes, threshold, groups
        )
    else:
        lows, highs = _pairs_of_postings(
            *_two_prefix_keys(values, offsets, threshold), sizes, threshold, groups
        )
        # Rows needing a single shared shingle (ceil(t |x|) < 2) pair through the one-shingle
        # prefix, among themselves: a partner needing two is covered by the keys above.
        small = np.ceil(threshold * sizes - _EPS).astype(np.int64) < 2
        if small.any():
            more = _pairs_of_postings(
                *_prefix_postings(values, offsets, threshold, small), sizes, threshold, groups
            )
            lows += more[0]
            highs += more[1]
    if not lows:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return dedupe_pairs(np.concatenate(lows), np.concatenate(highs), len(sizes))


def choose_prefix_tokens(sets: ShingleSets, threshold: float) -> int:
    """How many prefix shingles candidate pairs should share (1 or 2), by estimated cost.

    The one-shingle prefix filter enumerates, for each prefix shingle held by ``m`` rows, up to
    ``m (m - 1) / 2`` pairs; on large templated corpora the common shingles make this quadratic. The
    two-shingle prefix instead pays for every pair of shingles inside each row's (one longer)
    prefix. Both are exact; this picks two when the first's pair count exceeds
    :data:`TWO_PREFIX_RATIO` times the second's key count. Deterministic in the rows.
    """
    if len(sets) < 2:
        return 1
    values, offsets = _ranked_rows(sets)
    return _choose(values, offsets, threshold)


#: One-shingle pairs per two-shingle key above which the two-shingle prefix is cheaper (measured
#: on the leakage benchmark's corpus: see docs/leakage.md).
TWO_PREFIX_RATIO = 4.0


def _choose(values: I64, offsets: I64, threshold: float) -> int:
    _, _, tok = _prefix_postings(values, offsets, threshold)
    if not len(tok):
        return 1
    counts = np.unique(tok, return_counts=True)[1].astype(np.float64)
    pairs_one = float((counts * (counts - 1) / 2).sum())
    sizes = np.diff(offsets)
    prefix = np.minimum(sizes, sizes - np.ceil(threshold * sizes - _EPS).astype(np.int64) + 2)
    keys_two = float((prefix * (prefix - 1) / 2).sum())
    return 2 if pairs_one > TWO_PREFIX_RATIO * max(keys_two, 1.0) else 1


def exact_join(
    sets: ShingleSets,
    threshold: float,
    *,
    groups: I64 | None = None,
    prefix_tokens: int | None = None,
) -> Pairs:
    """Every pair of rows with Jaccard >= ``threshold``, exactly (optionally only across groups).

    Equal to the naive double loop over all pairs (tested against it), at a small share of the
    cost: on templated support text most rows' rare prefix shingles are shared with nobody.
    ``prefix_tokens`` picks the candidate filter (1: one shared prefix shingle; 2: two, from one
    longer prefix); None chooses by estimated cost (:func:`choose_prefix_tokens`). The pairs are
    the same either way.
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1]. Got {threshold}.")
    if len(sets) < 2:
        return Pairs.empty()
    if prefix_tokens not in (None, 1, 2):
        raise ValueError(f"prefix_tokens must be 1, 2 or None. Got {prefix_tokens}.")
    values, offsets = _ranked_rows(sets)
    tokens = prefix_tokens or _choose(values, offsets, threshold)
    left, right = _candidate_pairs(values, offsets, threshold, groups, tokens)
    shared = intersection_sizes(values, offsets, left, right)
    sizes = np.diff(offsets)
    union = sizes[left] + sizes[right] - shared
    jac: npt.NDArray[np.float64] = np.divide(
        shared, union, out=np.zeros(len(shared), dtype=np.float64), where=union > 0
    )
    keep = jac >= threshold
    return Pairs(left[keep], right[keep], shared[keep], jac[keep]).sorted()
