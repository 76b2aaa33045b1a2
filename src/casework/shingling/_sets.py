"""Batches of shingle sets in CSR form (flat sorted hashes + row offsets) and their segment ops.

Entry points: :class:`ShingleSets` (the batch every engine passes around), :func:`segment_ids`,
:func:`gather_segments` and :func:`sort_unique_segments` (vectorised per-row operations).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


def segment_ids(offsets: I64) -> I64:
    """Row index of every flat element, from CSR ``offsets`` (length rows + 1)."""
    sizes = np.diff(offsets)
    return np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)


def gather_segments(offsets: I64, rows: I64) -> tuple[I64, I64]:
    """Flat indices of the elements of ``rows`` (in that order) and the new CSR offsets.

    ``values[index]`` is then the concatenation of ``values[offsets[r]:offsets[r + 1]]`` for each
    ``r`` in ``rows``, without a Python loop.
    """
    rows = np.asarray(rows, dtype=np.int64)
    starts = offsets[rows]
    sizes = offsets[rows + 1] - starts
    new_offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(sizes, out=new_offsets[1:])
    total = int(new_offsets[-1])
    index = np.arange(total, dtype=np.int64) - np.repeat(new_offsets[:-1] - starts, sizes)
    return index, new_offsets


def sort_unique_segments(values: U64, offsets: I64) -> tuple[U64, I64]:
    """Sort each row's values and drop repeats within the row; returns new values and offsets.

    Rows are bucketed by length (powers of two) and sorted as padded matrices, which keeps the
    work linear-logarithmic in the row length without a Python loop over rows.
    """
    sizes = np.diff(offsets)
    n = len(sizes)
    if n == 0:
        return values[:0].copy(), offsets.copy()
    out_sorted = np.empty_like(values)
    width_class = np.zeros(n, dtype=np.int64)
    nonzero = sizes > 0
    width_class[nonzero] = np.ceil(np.log2(sizes[nonzero])).astype(np.int64)
    sentinel = np.iinfo(values.dtype).max
    for cls in np.unique(width_class[nonzero]):
        rows = np.flatnonzero(nonzero & (width_class == cls))
        width = int(sizes[rows].max())
        index, sub_offsets = gather_segments(offsets, rows)
        sub_sizes = np.diff(sub_offsets)
        local_row = np.repeat(np.arange(len(rows), dtype=np.int64), sub_sizes)
        col = np.arange(len(index), dtype=np.int64) - np.repeat(sub_offsets[:-1], sub_sizes)
        block = np.full((len(rows), width), sentinel, dtype=values.dtype)
        block[local_row, col] = values[index]
        block.sort(axis=1)
        out_sorted[index] = block[local_row, col]
    row = segment_ids(offsets)
    keep = np.ones(len(values), dtype=bool)
    if len(values) > 1:
        keep[1:] = (out_sorted[1:] != out_sorted[:-1]) | (row[1:] != row[:-1])
    new_sizes = np.bincount(row[keep], minlength=n).astype(np.int64)
    new_offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(new_sizes, out=new_offsets[1:])
    return out_sorted[keep], new_offsets


@dataclass(frozen=True)
class ShingleSets:
    """Shingle sets of a batch of texts: row ``i`` is ``hashes[offsets[i]:offsets[i + 1]]``.

    Each row is sorted and free of repeats, so row sizes are set sizes and two rows can be
    intersected by merging. An empty row (a text without any word) never matches anything.
    """

    hashes: U64
    """Flat 64-bit shingle hashes, sorted within each row."""
    offsets: I64
    """Row boundaries (length ``len(self) + 1``, starting at 0)."""

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def row(self, i: int) -> U64:
        """Sorted shingle hashes of row ``i``."""
        return self.hashes[self.offsets[i] : self.offsets[i + 1]]

    def sizes(self) -> I64:
        """Number of distinct shingles of every row."""
        return np.diff(self.offsets)

    def take(self, rows: Sequence[int] | I64) -> ShingleSets:
        """A new batch holding ``rows`` in the given order."""
        index, offsets = gather_segments(self.offsets, np.asarray(rows, dtype=np.int64))
        return ShingleSets(self.hashes[index], offsets)

    @classmethod
    def from_rows(cls, rows: Iterable[Iterable[int]]) -> ShingleSets:
        """Build a batch from per-row hash collections (sorted and de-duplicated here)."""
        arrays = [np.fromiter(r, dtype=np.uint64) for r in rows]
        offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
        np.cumsum([len(a) for a in arrays], out=offsets[1:])
        flat = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.uint64)
        hashes, offsets = sort_unique_segments(flat.astype(np.uint64), offsets)
        return cls(hashes, offsets)

    @classmethod
    def concat(cls, batches: Sequence[ShingleSets]) -> ShingleSets:
        """Rows of several batches, one after the other."""
        if not batches:
            return cls(np.zeros(0, dtype=np.uint64), np.zeros(1, dtype=np.int64))
        hashes = np.concatenate([b.hashes for b in batches])
        sizes = np.concatenate([b.sizes() for b in batches])
        offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        return cls(hashes, offsets)
