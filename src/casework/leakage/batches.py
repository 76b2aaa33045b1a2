"""Batch functions shared by the local and the Ray engine: text in, shingle sets / signatures out.

Both engines call exactly these functions on slices of the input, so their results are equal.
Entry points: :func:`sets_of`, :func:`sketch_batch`, :func:`sets_from_lists`, :func:`sets_to_lists`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from casework.leakage.minhash import MinHasher
from casework.shingling._sets import ShingleSets
from casework.shingling._shingles import DEFAULT_SEED, shingle_sets

__all__ = ["BATCH_ROWS", "Sketch", "sets_from_lists", "sets_of", "sets_to_lists", "sketch_batch"]

BATCH_ROWS = 20_000
"""Texts per batch: big enough for numpy to pay off, small enough to stay in cache-friendly memory."""


@dataclass(frozen=True)
class Sketch:
    """Shingle sets of some texts and, when asked for, their MinHash signatures."""

    sets: ShingleSets
    """Hashed shingle sets, one row per text."""
    signatures: npt.NDArray[np.uint32] | None
    """``uint32[rows, num_perm]`` or ``None``."""


def sketch_batch(
    texts: Sequence[str] | pa.Array | pa.ChunkedArray,
    *,
    k: int,
    seed: int = DEFAULT_SEED,
    num_perm: int = 0,
    perm_seed: int = 1,
) -> Sketch:
    """Shingle (and, if ``num_perm``, MinHash) one batch of texts, single-threaded."""
    sets = shingle_sets(texts, k, seed)
    sigs = MinHasher(num_perm, perm_seed, threads=1).signatures(sets) if num_perm else None
    return Sketch(sets, sigs)


def sets_of(
    texts: Sequence[str] | pa.Array,
    *,
    k: int,
    seed: int = DEFAULT_SEED,
    num_perm: int = 0,
    perm_seed: int = 1,
    threads: int | None = None,
) -> Sketch:
    """:func:`sketch_batch` over batches of :data:`BATCH_ROWS` texts in a thread pool (local engine).

    ``threads`` defaults to the machine's cores: numpy and Arrow release the GIL in the heavy parts.
    """
    threads = threads or os.cpu_count() or 1
    arr = texts if isinstance(texts, pa.Array) else pa.array(list(texts), type=pa.large_string())
    slices = [arr.slice(i, BATCH_ROWS) for i in range(0, len(arr), BATCH_ROWS)] or [arr]

    def one(part: pa.Array) -> Sketch:
        return sketch_batch(part, k=k, seed=seed, num_perm=num_perm, perm_seed=perm_seed)

    if threads > 1 and len(slices) > 1:
        with ThreadPoolExecutor(threads) as pool:
            parts = list(pool.map(one, slices))
    else:
        parts = [one(s) for s in slices]
    return merge_sketches(parts, num_perm)


def merge_sketches(parts: Sequence[Sketch], num_perm: int) -> Sketch:
    """Rows of several sketches, one after the other."""
    sets = ShingleSets.concat([p.sets for p in parts])
    if not num_perm:
        return Sketch(sets, None)
    sigs = [p.signatures for p in parts if p.signatures is not None]
    stacked = np.concatenate(sigs) if sigs else np.zeros((0, num_perm), dtype=np.uint32)
    return Sketch(sets, stacked)


def sets_to_lists(sets: ShingleSets) -> pa.LargeListArray:
    """Arrow ``large_list<uint64>`` view of a batch (for moving sets between Ray workers)."""
    return pa.LargeListArray.from_arrays(pa.array(sets.offsets), pa.array(sets.hashes))


def sets_from_lists(lists: pa.LargeListArray | pa.ListArray | pa.ChunkedArray) -> ShingleSets:
    """Inverse of :func:`sets_to_lists`."""
    if isinstance(lists, pa.ChunkedArray):
        lists = (
            lists.combine_chunks() if lists.num_chunks else pa.array([], pa.large_list(pa.uint64()))
        )
    lists = lists.cast(pa.large_list(pa.uint64()))
    offsets = np.asarray(lists.offsets.to_numpy(), dtype=np.int64)
    flat = lists.values.to_numpy(zero_copy_only=False)[offsets[0] : offsets[-1]]
    return ShingleSets(np.asarray(flat, dtype=np.uint64), offsets - offsets[0])
