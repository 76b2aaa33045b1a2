"""MinHash-LSH join in bounded memory: batches sketched to disk, band keys sorted per band.

The same join as :func:`casework.leakage.lsh.lsh_join` (same signatures, bands, filters and
exact verification, so the same pairs with the same Jaccard), with memory bounded by
``memory_mb`` instead of the row count:

1. each batch of texts is shingled and MinHashed; its band keys (one file per band), signature
   fingerprints, shingle hashes and set sizes are appended to files in a scratch folder;
2. the rows are cut into blocks (contiguous row ranges) so that two blocks' fingerprints and
   shingle hashes fit the setting; each band's keys are read back and sorted (in key-range parts
   when a band does not fit), and the rows sharing a key give candidate pairs, written to one
   bucket file per pair of blocks;
3. each bucket's pairs are de-duplicated, and verified in batches against its two blocks, read
   whole from disk (never mapped: mapped pages count as resident memory, and a candidate's rows
   lie anywhere in the files): the size filter, the fingerprint pre-filter and exact Jaccard.

However heavy the buckets (templated text gives millions of candidates), the memory is the
blocks', the batch's and that of one bucket's keys, all bounded by the setting.
Entry points: :func:`streamed_lsh_join`, :func:`batch_rows`, :func:`in_memory_mb`.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from casework.errors import UsageError
from casework.leakage.batches import BATCH_ROWS, Sketch, sketch_batch
from casework.leakage.lsh import LshParams, band_keys, choose_params, prefilter
from casework.leakage.minhash import fingerprints
from casework.leakage.pairs import (
    Pairs,
    cross_group,
    iter_pairs_within_groups,
    verify_pairs,
)
from casework.shingling._sets import I64, ShingleSets
from casework.shingling._shingles import DEFAULT_SEED

__all__ = [
    "StreamStats",
    "batch_rows",
    "in_memory_mb",
    "streamed_lsh_join",
]

#: Bytes a row costs on the in-memory LSH path (text, shingle sets, signatures, candidates),
#: with room: 2.66 GB measured at 1,000,000 rows of the leakage benchmark's corpus and 5.29 GB
#: at 2,000,000 (linear; the corpus of old, whose candidates grew with the square of the rows,
#: took 7.03 GB at 2,000,000).
IN_MEMORY_ROW_BYTES = 3_200
#: Bytes a row costs while a batch is sketched (text, Arrow tokens, shingles, signatures).
_SKETCH_ROW_BYTES = 6_000
#: Bytes a live row costs while its band part is sorted (key, row, order, sorted copies).
_BAND_ROW_BYTES = 96
#: Bytes a candidate pair costs while a bucket is de-duplicated (key, its sorted copy, masks).
_PAIR_BYTES = 40
#: Bytes a candidate pair costs while a band's pairs are made (indices, rows, filters, unique).
_PAIR_GEN_BYTES = 120
#: Bytes a row of a verification block costs besides its shingle hashes (offsets, sizes).
_BLOCK_ROW_BYTES = 16
#: Share of the budget each of the two blocks being verified may take.
_BLOCK_SHARE = 0.3
#: Share of the budget one bucket's keys may take while de-duplicated (the blocks are loaded).
_UNIQUE_SHARE = 0.2
#: Blocks at most: a bucket file per pair of blocks (253 files) stay open during the bands.
_MAX_BLOCKS = 22
#: Bytes a candidate pair costs while one verification batch runs (rows, masks, counts; the
#: compiled loops read the blocks in place).
_VERIFY_PAIR_BYTES = 1_000
#: Bands sorted at once.
_BAND_THREADS = 2
#: Verification batches running at once (the compiled loops release the GIL).
_VERIFY_THREADS = 2
_MB = 1 << 20


def in_memory_mb(rows: int) -> int:
    """Estimated peak memory (MB) of the in-memory LSH join of ``rows`` rows."""
    return math.ceil(rows * IN_MEMORY_ROW_BYTES / _MB)


def batch_rows(memory_mb: float) -> int:
    """Texts per batch that the first pass of :func:`streamed_lsh_join` sketches at a time."""
    return max(100, int(memory_mb * _MB) // _SKETCH_ROW_BYTES)


@dataclass(frozen=True)
class StreamStats:
    """How a streamed join ran (said in the scan's output)."""

    rows: int
    """Rows joined."""
    batches: int
    """Batches of texts sketched."""
    band_parts: int
    """Key-range parts each band was sorted in (1: a whole band at a time)."""
    candidates: int
    """Distinct candidate pairs verified."""
    memory_mb: float
    """The memory setting the join kept to."""
    blocks: int = 1
    """Row blocks the candidates were verified in (a bucket of candidates per pair of blocks)."""


@dataclass(frozen=True)
class _Part:
    """One slice of a batch, sketched, with its band keys."""

    sketch: Sketch
    keys: list[npt.NDArray[np.uint64]]


def _sketch_part(texts: pa.Array, params: LshParams, k: int, shingle_seed: int, seed: int) -> _Part:
    sketch = sketch_batch(texts, k=k, seed=shingle_seed, num_perm=params.num_perm, perm_seed=seed)
    assert sketch.signatures is not None
    keys = [band_keys(sketch.signatures, band, params.rows) for band in range(params.bands)]
    return _Part(sketch, keys)


class _Sketches:
    """Append-only files of the first pass: band keys, fingerprints, shingle hashes and set sizes."""

    def __init__(self, folder: Path, bands: int, stack: ExitStack) -> None:
        self.folder = folder
        self.bands = bands
        self.band_files: list[BinaryIO] = [
            stack.enter_context((folder / f"band-{b}.u64").open("wb")) for b in range(bands)
        ]
        self.prints = stack.enter_context((folder / "prints.u8").open("wb"))
        self.hashes = stack.enter_context((folder / "hashes.u64").open("wb"))
        self.sizes = stack.enter_context((folder / "sizes.i64").open("wb"))
        self.rows = 0
        self.batches = 0

    def add(self, part: _Part) -> None:
        for keys, out in zip(part.keys, self.band_files, strict=True):
            out.write(keys.data)
        assert part.sketch.signatures is not None
        self.prints.write(fingerprints(part.sketch.signatures).data)
        self.hashes.write(np.ascontiguousarray(part.sketch.sets.hashes).data)
        self.sizes.write(part.sketch.sets.sizes().astype(np.int64).data)
        self.rows += len(part.sketch.sets)

    def close(self) -> None:
        for out in [*self.band_files, self.prints, self.hashes, self.sizes]:
            out.close()


#: Share of the budget a band's row arrays may take, and the share its pairs may take; the
#: rest is for what the process holds anyway (libraries, sizes and offsets of every row).
_BAND_SHARE = 0.4


def _band_parts(live: int, budget: int) -> int:
    """Key-range parts a band is sorted in, so that its rows' arrays fit their share.

    Measured at 10,000,000 rows: a band's arrays take about 90 bytes a live row; with the pairs
    made from them in parts of the budget's whole, a 2 GB setting peaked at 2.7 GB.
    """
    return max(1, math.ceil(live * _BAND_ROW_BYTES / (budget * _BAND_SHARE)))


def _band_pairs(
    keys_path: Path,
    live: npt.NDArray[np.bool_],
    part: int,
    parts: int,
    keep: _Keep,
    budget: int,
) -> Iterator[tuple[I64, I64]]:
    """Candidate pairs of one band among live rows whose key falls in key-range ``part``.

    Yielded in parts of at most about ``budget`` bytes as ``(low, high)`` rows, with the pairs
    :class:`_Keep` drops (same group, sizes too far apart) already dropped. A row has one key a
    band, so a band makes each pair once; pairs repeated across bands are removed per bucket.
    """
    n = len(live)
    if not n:
        return
    rows_parts: list[I64] = []
    key_parts: list[npt.NDArray[np.uint64]] = []
    lo = 0
    for keys in _read_chunks(keys_path, np.uint64, max(1, budget // 32)):
        hi = lo + len(keys)
        chosen = live[lo:hi]
        if parts > 1:
            chosen = chosen & (keys % np.uint64(parts) == np.uint64(part))
        picked = np.flatnonzero(chosen)
        rows_parts.append(picked + lo)
        key_parts.append(np.array(keys[picked]))
        lo = hi
    members, keys = np.concatenate(rows_parts), np.concatenate(key_parts)
    del rows_parts, key_parts
    pairs_at_once = max(1, int(budget * _BAND_SHARE) // _PAIR_GEN_BYTES)
    for left, right in iter_pairs_within_groups(members, keys, pairs_at_once):
        kept = keep(left, right)
        yield left[kept], right[kept]


@dataclass(frozen=True)
class _Keep:
    """The filters that need no signature: pairs across groups whose sizes are within ``t``.

    The in-memory join applies the size filter after merging the bands; a filter of single
    pairs gives the same result before, and keeps the pairs it drops off the disk.
    """

    sizes: I64
    threshold: float
    groups: I64 | None

    def __call__(self, left: I64, right: I64) -> npt.NDArray[np.bool_]:
        a, b = self.sizes[left], self.sizes[right]
        fits = np.minimum(a, b) >= self.threshold * np.maximum(a, b) - 1e-9
        return fits & cross_group(left, right, self.groups)


def _block_cuts(sizes: I64, width: int, budget: int) -> I64:
    """Row boundaries of the verification blocks (length blocks + 1).

    Each block's fingerprints and shingle hashes take at most :data:`_BLOCK_SHARE` of the budget;
    at most :data:`_MAX_BLOCKS` blocks, so a setting too small for that gets fewer, larger ones.
    """
    n = len(sizes)
    if not n:
        return np.zeros(2, dtype=np.int64)
    cost = np.cumsum(width + _BLOCK_ROW_BYTES + 8 * sizes)
    per = max(budget * _BLOCK_SHARE, float(cost[-1]) / _MAX_BLOCKS)
    count = max(1, math.ceil(float(cost[-1]) / per))
    inner = np.searchsorted(cost, np.arange(1, count) * (float(cost[-1]) / count))
    return np.unique(np.concatenate([[0], inner, [n]]).astype(np.int64))


class _Buckets:
    """Candidate pair keys ``left * n + right``, appended to one file per pair of blocks."""

    def __init__(self, folder: Path, n: int, cuts: I64, stack: ExitStack) -> None:
        self.n = n
        self.cuts = cuts
        self.blocks = len(cuts) - 1
        self.pairs = [(i, j) for i in range(self.blocks) for j in range(i, self.blocks)]
        self.paths = [folder / f"pairs-{i}-{j}.i64" for i, j in self.pairs]
        # Unbuffered: whole arrays are written at once, and 253 buffers of 8 KB would be the
        # biggest thing a small setting holds while the bands run.
        self.files = [stack.enter_context(p.open("wb", buffering=0)) for p in self.paths]
        self.written = 0

    def block_of(self, rows: I64) -> I64:
        """The block of each row."""
        return np.searchsorted(self.cuts, rows, side="right").astype(np.int64) - 1

    def add(self, left: I64, right: I64) -> None:
        if not len(left):
            return
        i, j = self.block_of(left), self.block_of(right)
        # Buckets in the order of self.pairs: those of block i start after i full rows of the
        # triangle (which = i * blocks - i * (i - 1) / 2 + j - i).
        which = i * self.blocks - i * (i - 1) // 2 + (j - i)
        keys = left * np.int64(self.n) + right
        # At most 253 buckets: a stable sort of one-byte codes is numpy's radix sort, linear.
        order = np.argsort(which.astype(np.uint8), kind="stable")
        keys, which = keys[order], which[order]
        cuts = np.searchsorted(which, np.arange(len(self.files) + 1))
        self.written += len(keys)
        for b, out in enumerate(self.files):
            if cuts[b] < cuts[b + 1]:
                out.write(keys[cuts[b] : cuts[b + 1]].tobytes())

    def close(self) -> None:
        for out in self.files:
            out.close()


def _unique_keys(path: Path, lo: int, hi: int, n: int, budget: int) -> Iterator[I64]:
    """Distinct pair keys of a bucket holding first rows ``[lo, hi)``, in order, in bounded memory.

    A bucket too big to de-duplicate at once is split by first row into as many parts as it
    needs (again, if one part is still too big: all its pairs have nearly the same first row).
    """
    size = path.stat().st_size
    if size // 8 * _PAIR_BYTES <= budget or hi - lo <= 1:
        yield np.unique(np.fromfile(path, dtype=np.int64))
        path.unlink()
        return
    # One split into parts of about half the budget: a second level would copy it again.
    ways = min(hi - lo, 256, max(2, math.ceil(2 * size // 8 * _PAIR_BYTES / budget)))
    cuts = np.unique(np.linspace(lo, hi, ways + 1).astype(np.int64))
    subs = [path.with_name(f"{path.name}.{i}") for i in range(len(cuts) - 1)]
    with ExitStack() as stack:
        outs = [stack.enter_context(p.open("wb")) for p in subs]
        for keys in _read_chunks(path, np.int64, max(1, budget // 32)):
            which = np.clip(np.searchsorted(cuts, keys // n, side="right") - 1, 0, len(outs) - 1)
            # At most 256 parts: one-byte codes, sorted by numpy's (linear) radix sort.
            order = np.argsort(which.astype(np.uint8), kind="stable")
            keys, which = keys[order], which[order]
            ends = np.searchsorted(which, np.arange(len(outs) + 1))
            for i, out in enumerate(outs):
                out.write(keys[ends[i] : ends[i + 1]].tobytes())
    path.unlink()
    for i, sub in enumerate(subs):
        yield from _unique_keys(sub, int(cuts[i]), int(cuts[i + 1]), n, budget)


def _read_chunks(path: Path, dtype: type[np.generic], count: int) -> Iterator[npt.NDArray[Any]]:
    """The file's records, ``count`` at a time, read rather than mapped.

    Mapped pages count as resident memory while the map lives: gigabytes for a file of billions
    of candidate pairs.
    """
    with path.open("rb") as handle:
        while len(chunk := np.fromfile(handle, dtype=dtype, count=count)):
            yield chunk


@dataclass(frozen=True)
class _Block:
    """Rows ``[lo, hi)``: their fingerprints and shingle sets, read whole from the scratch files."""

    lo: int
    prints: npt.NDArray[np.uint8]
    sets: ShingleSets

    @classmethod
    def read(cls, folder: Path, lo: int, hi: int, offsets: I64, width: int) -> _Block:
        prints = np.fromfile(
            folder / "prints.u8", dtype=np.uint8, count=(hi - lo) * width, offset=lo * width
        ).reshape(-1, width)
        start, stop = int(offsets[lo]), int(offsets[hi])
        hashes = np.fromfile(
            folder / "hashes.u64", dtype=np.uint64, count=stop - start, offset=start * 8
        )
        return cls(lo, prints, ShingleSets(hashes, offsets[lo : hi + 1] - start))


@dataclass(frozen=True)
class _Verifier:
    """Exact verification of a batch of candidates whose rows lie in two loaded blocks."""

    sizes: I64
    threshold: float

    def __call__(self, first: _Block, second: _Block, left: I64, right: I64) -> Pairs:
        small = np.minimum(self.sizes[left], self.sizes[right])
        large = np.maximum(self.sizes[left], self.sizes[right])
        keep = small >= self.threshold * large - 1e-9
        a, b = left[keep] - first.lo, right[keep] - second.lo
        keep = prefilter(first.prints, a, b, self.threshold, second.prints)
        found = verify_pairs(first.sets, a[keep], b[keep], self.threshold, second.sets)
        return Pairs(first.lo + found.left, second.lo + found.right, found.shared, found.jaccard)


def _sketch_all(
    batches: Iterable[Sequence[str] | pa.Array],
    scratch: Path,
    params: LshParams,
    k: int,
    shingle_seed: int,
    seed: int,
    say: Callable[[str], None],
) -> _Sketches:
    """The first pass: every batch sketched and appended to the scratch files (then closed).

    A function of its own so that the last batch's texts and sketch are dropped when it returns
    (tens of MB at the default setting that the later stages would otherwise hold).
    """
    with ExitStack() as stack:
        sketches = _Sketches(scratch, params.bands, stack)
        # Slices of a batch are sketched on all cores (Arrow and the compiled loops release the
        # GIL) and written in order, without first joining them into one batch.
        pool = stack.enter_context(ThreadPoolExecutor(os.cpu_count() or 1))
        for texts in batches:
            arr = texts if isinstance(texts, pa.Array) else pa.array(texts, pa.large_string())
            slices = [arr.slice(i, BATCH_ROWS) for i in range(0, len(arr), BATCH_ROWS)]
            for sketched in pool.map(
                lambda t: _sketch_part(t, params, k, shingle_seed, seed), slices
            ):
                sketches.add(sketched)
            sketches.batches += 1
            say(f"sketched {sketches.rows:,} rows")
        sketches.close()
    return sketches


def streamed_lsh_join(
    batches: Iterable[Sequence[str] | pa.Array],
    threshold: float,
    *,
    scratch: Path,
    memory_mb: float,
    k: int = 3,
    shingle_seed: int = DEFAULT_SEED,
    num_perm: int = 256,
    seed: int = 1,
    min_recall: float = 0.99,
    groups: I64 | None = None,
    progress: Callable[[str], None] | None = None,
) -> tuple[Pairs, LshParams, StreamStats]:
    """Pairs of rows with Jaccard >= ``threshold``, as :func:`~casework.leakage.lsh.lsh_join` finds.

    Args:
        batches: The texts, in batches (rows are numbered across batches in order); a batch of
            :func:`batch_rows` texts keeps the first pass within ``memory_mb``.
        threshold: Jaccard similarity to report at or above.
        scratch: An empty folder for the join's files (see :mod:`casework.leakage.scratch`).
        memory_mb: Memory the band sorts, the de-duplication and the verification keep to.
        k: Words per shingle.
        shingle_seed: Seed of the shingle hashes.
        num_perm: Largest signature width the parameters may use.
        seed: Seed of the MinHash permutations.
        min_recall: Theoretical recall required at the threshold.
        groups: Optional group (split) code per row; only pairs across groups are returned.
        progress: Called with a line of text as each stage ends (long scans take minutes).

    Returns:
        The verified pairs (ordered by row), the banding parameters and how the join ran.

    Raises:
        UsageError: ``memory_mb`` is not positive, or ``groups`` does not give one code per row.
    """
    if not memory_mb > 0:
        raise UsageError(f"must be positive. Got {memory_mb}.", param="memory_mb")
    params = choose_params(threshold, num_perm, min_recall)
    budget = max(1, int(memory_mb * _MB))
    say = progress or (lambda line: None)
    sketches = _sketch_all(batches, scratch, params, k, shingle_seed, seed, say)
    n = sketches.rows
    if groups is not None and len(groups) != n:
        raise UsageError(f"must give one code per row ({n}). Got {len(groups)}.", param="groups")
    sizes = np.fromfile(scratch / "sizes.i64", dtype=np.int64)
    live = sizes > 0
    keep = _Keep(sizes, threshold, groups)
    cuts = _block_cuts(sizes, params.num_perm, budget)
    # Bands are sorted two at a time (numpy releases the GIL in its sorts), each in half the budget.
    parts_of_bands = _band_parts(int(live.sum()), budget // _BAND_THREADS)
    lock = threading.Lock()
    with ExitStack() as stack:
        buckets = _Buckets(scratch, max(n, 1), cuts, stack)

        def one_band(band: int) -> None:
            path = scratch / f"band-{band}.u64"
            for part in range(parts_of_bands):
                for left, right in _band_pairs(
                    path, live, part, parts_of_bands, keep, budget // _BAND_THREADS
                ):
                    with lock:
                        buckets.add(left, right)
            path.unlink()

        with ThreadPoolExecutor(_BAND_THREADS) as pool:
            for done, _ in enumerate(pool.map(one_band, range(params.bands)), 1):
                say(f"band {done} of {params.bands}: {buckets.written:,} candidate pairs written")
        buckets.close()
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    verify = _Verifier(sizes, threshold)
    step = max(1_000, int(budget * 0.2) // (_VERIFY_PAIR_BYTES * _VERIFY_THREADS))
    found: list[Pairs] = []
    candidates = 0
    first: _Block | None = None
    pool = ThreadPoolExecutor(_VERIFY_THREADS)
    with pool:
        for (i, j), path in zip(buckets.pairs, buckets.paths, strict=True):
            if path.stat().st_size == 0:
                path.unlink()
                continue
            lo, hi = int(cuts[i]), int(cuts[i + 1])
            if first is None or first.lo != lo:
                first = None  # the last block is dropped before the next one is read
                first = _Block.read(scratch, lo, hi, offsets, params.num_perm)
            second = (
                first
                if j == i
                else _Block.read(scratch, int(cuts[j]), int(cuts[j + 1]), offsets, params.num_perm)
            )
            unique_budget = max(1, int(budget * _UNIQUE_SHARE))
            for keys in _unique_keys(path, lo, hi, max(n, 1), unique_budget):
                candidates += len(keys)
                parts = [keys[s : s + step] for s in range(0, len(keys), step)]
                found += pool.map(
                    lambda part, one=first, two=second: verify(one, two, part // n, part % n),
                    parts,
                )
                say(f"verified {candidates:,} distinct candidates of {buckets.written:,} written")
            del second
    stats = StreamStats(
        n, sketches.batches, parts_of_bands, candidates, memory_mb, blocks=buckets.blocks
    )
    # The parts are dropped once joined: the pairs are held twice at most, not three times.
    pairs = Pairs.concat(found)
    found.clear()
    return pairs.sorted(), params, stats
