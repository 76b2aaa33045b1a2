"""MinHash-LSH join as a Ray Data pipeline: signatures, a shuffle of band buckets, verification.

Every stage runs on Ray workers and calls the same functions as the local :func:`lsh_join`:

1. **signatures**: ``map_batches`` shingles and MinHashes the texts (:func:`sketch_batch`);
2. **band buckets**: each row emits one ``(band, key)`` per band (:func:`band_keys`), and a
   ``groupby`` shuffles them so that every bucket lands whole on one worker, which pairs its
   members across groups (:func:`pairs_within_groups`, :func:`cross_group`);
3. **verification**: candidates are deduplicated by a shuffle on the pair, joined with both rows'
   sets and signatures (two hash joins), and filtered on workers exactly as locally: the size
   filter, the MinHash estimate pre-filter (:func:`~casework.leakage.lsh.prefilter`) and exact Jaccard
   (:func:`verify_pairs`).

Each stage's filter is a function of one pair, so the verified pairs and their Jaccard equal the
local engine's exactly (the tests compare them). Only the pairs come back to the driver.
Entry point: :func:`ray_lsh_join`.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from casework.leakage.batches import BATCH_ROWS, sketch_batch
from casework.leakage.lsh import LshParams, band_keys, choose_params, prefilter
from casework.leakage.minhash import EMPTY, fingerprints
from casework.leakage.pairs import (
    Pairs,
    cross_group,
    dedupe_pairs,
    pairs_within_groups,
    verify_pairs,
)
from casework.leakage.ray_engine import ensure_ray
from casework.shingling._sets import I64, ShingleSets

__all__ = ["BUCKETS_PER_PARTITION", "ray_lsh_join"]

#: Band rows per shuffle partition: a partition holds whole buckets and is paired with numpy at
#: once, so the per-group cost of ``map_groups`` is paid per partition, not per bucket.
BUCKETS_PER_PARTITION = 200_000

_MIX = np.uint64(0x9E3779B97F4A7C15)


def _mix(*columns: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.uint64]:
    """A well-spread 64-bit hash of equal-length integer columns (SplitMix64 finaliser)."""
    h = np.zeros(len(columns[0]), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for column in columns:
            h ^= np.asarray(column).astype(np.uint64) + _MIX + (h << np.uint64(6))
            h ^= h >> np.uint64(30)
            h *= np.uint64(0xBF58476D1CE4E5B9)
            h ^= h >> np.uint64(27)
            h *= np.uint64(0x94D049BB133111EB)
            h ^= h >> np.uint64(31)
    return h


def _sketch_rows(
    batch: pa.Table, *, k: int, num_perm: int, seed: int
) -> dict[str, npt.NDArray[Any]]:
    """Stage 1: the row's shingle set and signature, as bytes (joins carry binary columns)."""
    sketch = sketch_batch(batch.column("text"), k=k, num_perm=num_perm, perm_seed=seed)
    sets, sigs = sketch.sets, sketch.signatures
    assert sigs is not None
    offsets = sets.offsets
    blobs = np.array(
        [sets.hashes[offsets[r] : offsets[r + 1]].tobytes() for r in range(len(sets))],
        dtype=object,
    )
    return {
        "i": batch.column("i").to_numpy(),
        "g": batch.column("g").to_numpy(),
        "size": np.diff(offsets),
        "sets": blobs,
        "sig": np.array([row.tobytes() for row in sigs], dtype=object),
    }


def _signatures(blobs: Sequence[bytes], num_perm: int) -> npt.NDArray[np.uint32]:
    if not len(blobs):
        return np.zeros((0, num_perm), dtype=np.uint32)
    return np.frombuffer(b"".join(blobs), dtype=np.uint32).reshape(len(blobs), num_perm)


def _band_rows(
    batch: dict[str, npt.NDArray[Any]], *, rows: int, bands: int, num_perm: int, partitions: int
) -> dict[str, npt.NDArray[Any]]:
    """Stage 2a: one ``(band, key)`` per band of every row with shingles."""
    sigs = _signatures(list(batch["sig"]), num_perm)
    live = np.flatnonzero(sigs[:, 0] != EMPTY) if len(sigs) else np.zeros(0, dtype=np.int64)
    sigs = sigs[live]
    out: dict[str, list[npt.NDArray[Any]]] = {"band": [], "key": [], "i": [], "g": []}
    for band in range(bands):
        out["band"].append(np.full(len(live), band, dtype=np.int64))
        out["key"].append(band_keys(sigs, band, rows))
        out["i"].append(np.asarray(batch["i"], dtype=np.int64)[live])
        out["g"].append(np.asarray(batch["g"], dtype=np.int64)[live])
    table = {name: np.concatenate(parts) for name, parts in out.items()}
    table["part"] = (_mix(table["band"], table["key"]) % np.uint64(partitions)).astype(np.int64)
    return table


def _bucket_pairs(
    batch: dict[str, npt.NDArray[Any]], *, partitions: int
) -> dict[str, npt.NDArray[Any]]:
    """Stage 2b: pairs of rows sharing a bucket, across groups (one whole partition of buckets)."""
    band = np.asarray(batch["band"], dtype=np.int64)
    key = np.asarray(batch["key"], dtype=np.uint64)
    members = np.asarray(batch["i"], dtype=np.int64)
    groups = np.asarray(batch["g"], dtype=np.int64)
    lefts: list[I64] = []
    rights: list[I64] = []
    # Bands one at a time, as locally: a key is only meaningful within its band.
    for b in np.unique(band):
        here = band == b
        local_left, local_right = pairs_within_groups(np.flatnonzero(here), key[here])
        keep = cross_group(local_left, local_right, groups)
        lefts.append(members[local_left[keep]])
        rights.append(members[local_right[keep]])
    left = np.concatenate(lefts) if lefts else np.zeros(0, dtype=np.int64)
    right = np.concatenate(rights) if rights else np.zeros(0, dtype=np.int64)
    low, high = np.minimum(left, right), np.maximum(left, right)
    span = int(max(int(high.max()) + 1, 1)) if len(high) else 1
    low, high = dedupe_pairs(low, high, span)
    return {
        "left": low,
        "right": high,
        "part": (_mix(low, high) % np.uint64(partitions)).astype(np.int64),
    }


_RECORD = pa.schema(
    [
        ("id", pa.int64()),
        ("part", pa.int64()),
        ("l", pa.int64()),
        ("r", pa.int64()),
        ("sets", pa.binary()),
        ("sig", pa.binary()),
    ]
)


def _records(
    ids: I64, left: I64, right: I64, sets: Sequence[bytes], sig: Sequence[bytes], partitions: int
) -> pa.Table:
    part = (_mix(ids) % np.uint64(partitions)).astype(np.int64)
    return pa.table(
        [ids, part, left, right, pa.array(sets, pa.binary()), pa.array(sig, pa.binary())],
        schema=_RECORD,
    )


def _row_records(batch: dict[str, npt.NDArray[Any]], *, partitions: int) -> pa.Table:
    """Stage 3a: each row's set and signature, addressed to the partition of its id."""
    ids = np.asarray(batch["i"], dtype=np.int64)
    none = np.full(len(ids), -1, dtype=np.int64)
    return _records(ids, none, none, list(batch["sets"]), list(batch["sig"]), partitions)


def _endpoint_records(batch: dict[str, npt.NDArray[Any]], *, partitions: int) -> pa.Table:
    """Stage 3b: each distinct pair once, as two requests for its rows' data."""
    left = np.asarray(batch["left"], dtype=np.int64)
    right = np.asarray(batch["right"], dtype=np.int64)
    span = int(right.max()) + 1 if len(right) else 1
    left, right = dedupe_pairs(left, right, span)
    ids = np.concatenate([left, right])
    empty = [b""] * len(ids)
    return _records(ids, np.tile(left, 2), np.tile(right, 2), empty, empty, partitions)


def _attach(batch: dict[str, npt.NDArray[Any]], *, partitions: int) -> pa.Table:
    """Stage 3c: requests of one partition get their row's data, then go to the pair's partition.

    A hash join written as one shuffle: rows and requests with the same id share a partition.
    """
    ids = np.asarray(batch["id"], dtype=np.int64)
    left = np.asarray(batch["l"], dtype=np.int64)
    is_row = left < 0
    row_ids = ids[is_row]
    order = np.argsort(row_ids)
    want = np.flatnonzero(~is_row)
    where = np.flatnonzero(is_row)[order][np.searchsorted(row_ids[order], ids[want])]
    sets, sig = batch["sets"], batch["sig"]
    pair_left = left[want]
    pair_right = np.asarray(batch["r"], dtype=np.int64)[want]
    part = (_mix(pair_left, pair_right) % np.uint64(partitions)).astype(np.int64)
    return pa.table(
        [
            ids[want],
            part,
            pair_left,
            pair_right,
            pa.array(list(sets[where]), pa.binary()),
            pa.array(list(sig[where]), pa.binary()),
        ],
        schema=_RECORD,
    )


def _verify(
    batch: dict[str, npt.NDArray[Any]], *, threshold: float, num_perm: int
) -> dict[str, npt.NDArray[Any]]:
    """Stage 3d: the local engine's filters on the pairs of one partition: size, estimate, exact."""
    ids = np.asarray(batch["id"], dtype=np.int64)
    pair_left = np.asarray(batch["l"], dtype=np.int64)
    pair_right = np.asarray(batch["r"], dtype=np.int64)
    # Both halves of a pair are here: the left row's record first, then the right row's.
    order = np.lexsort((ids != pair_left, pair_right, pair_left))
    halves = order.reshape(-1, 2)
    m = len(halves)
    blobs = list(batch["sets"][halves[:, 0]]) + list(batch["sets"][halves[:, 1]])
    arrays = [np.frombuffer(b, dtype=np.uint64) for b in blobs]
    offsets = np.zeros(2 * m + 1, dtype=np.int64)
    np.cumsum([len(a) for a in arrays], out=offsets[1:])
    flat = np.concatenate(arrays) if arrays else np.zeros(0, dtype=np.uint64)
    sets = ShingleSets(flat, offsets)
    sigs = _signatures(
        list(batch["sig"][halves[:, 0]]) + list(batch["sig"][halves[:, 1]]), num_perm
    )
    left = np.arange(m, dtype=np.int64)
    right = left + m
    sizes = sets.sizes()
    small = np.minimum(sizes[left], sizes[right])
    large = np.maximum(sizes[left], sizes[right])
    keep = small >= threshold * large - 1e-9
    left, right = left[keep], right[keep]
    keep = prefilter(fingerprints(sigs), left, right, threshold)
    found = verify_pairs(sets, left[keep], right[keep], threshold)
    return {
        "left": pair_left[halves[found.left, 0]],
        "right": pair_right[halves[found.left, 0]],
        "shared": found.shared,
        "jaccard": found.jaccard,
    }


#: The environment variable with which Ray Data users choose a shuffle; when it is set, theirs holds.
SHUFFLE_ENV = "RAY_DATA_DEFAULT_SHUFFLE_STRATEGY"


@contextmanager
def _sort_shuffle(ray: Any) -> Iterator[None]:
    """Ray Data's sort-based shuffle for this pipeline, unless the user chose one in the environment.

    Ray's default hash shuffle starts aggregator actors for every ``groupby``: 12-18 s a join on
    two CPUs whatever the rows (700 texts: 12-18 s with it, under 1 s with the sort shuffle once
    Ray runs), which small scans and CI pay in full. The previous strategy is put back after.
    """
    if os.environ.get(SHUFFLE_ENV):
        yield
        return
    from ray.data.context import ShuffleStrategy

    context = ray.data.DataContext.get_current()
    before = context.shuffle_strategy
    context.shuffle_strategy = ShuffleStrategy.SORT_SHUFFLE_PULL_BASED
    try:
        yield
    finally:
        context.shuffle_strategy = before


def ray_lsh_join(
    texts: Sequence[str],
    threshold: float,
    *,
    k: int = 3,
    groups: I64 | None = None,
    num_perm: int = 256,
    seed: int = 1,
    min_recall: float = 0.99,
    batch_rows: int = BATCH_ROWS,
    partitions: int | None = None,
) -> tuple[Pairs, LshParams]:
    """Pairs of texts with Jaccard >= ``threshold``: :func:`lsh_join`, every stage on Ray Data.

    Args:
        texts: The texts (row ``i`` of the result refers to ``texts[i]``).
        threshold: Jaccard similarity to report at or above.
        k: Words per shingle.
        groups: Optional group (split) code per text; only pairs across groups are returned.
        num_perm: Largest signature width the parameters may use.
        seed: Seed of the MinHash permutations.
        min_recall: Theoretical recall required at the threshold.
        batch_rows: Texts per signature batch.
        partitions: Shuffle partitions (default: about :data:`BUCKETS_PER_PARTITION` band rows
            each, at least the cluster's CPUs).

    Returns:
        The verified pairs (ordered by row) and the banding parameters, equal to
        :func:`lsh_join` on the same texts.
    """
    ray = ensure_ray()
    params = choose_params(threshold, num_perm, min_recall)
    n = len(texts)
    if groups is None:
        # Every row its own group: all pairs qualify, as in the local join without groups.
        groups = np.arange(n, dtype=np.int64)
    if n < 2:
        return Pairs.empty(), params
    cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
    wanted = partitions or max(cpus, -(-n * params.bands // BUCKETS_PER_PARTITION))
    table = pa.table(
        {
            "i": pa.array(np.arange(n, dtype=np.int64)),
            "g": pa.array(np.asarray(groups, dtype=np.int64)),
            "text": pa.array(list(texts), pa.large_string()),
        }
    )
    with _sort_shuffle(ray):
        rows = (
            ray.data.from_arrow(table)
            .repartition(max(cpus, -(-n // batch_rows)))
            .map_batches(
                _sketch_rows,
                batch_format="pyarrow",
                batch_size=batch_rows,
                fn_kwargs={"k": k, "num_perm": params.num_perm, "seed": seed},
            )
            .materialize()
        )
        candidates = (
            rows.map_batches(
                _band_rows,
                batch_format="numpy",
                batch_size=batch_rows,
                fn_kwargs={
                    "rows": params.rows,
                    "bands": params.bands,
                    "num_perm": params.num_perm,
                    "partitions": wanted,
                },
            )
            .groupby("part")
            .map_groups(_bucket_pairs, batch_format="numpy", fn_kwargs={"partitions": wanted})
            .groupby("part")
            .map_groups(_endpoint_records, batch_format="numpy", fn_kwargs={"partitions": wanted})
        )
        requests = rows.map_batches(
            _row_records, batch_format="numpy", fn_kwargs={"partitions": wanted}
        ).union(candidates)
        verified = (
            requests.groupby("part")
            .map_groups(_attach, batch_format="numpy", fn_kwargs={"partitions": wanted})
            .groupby("part")
            .map_groups(
                _verify,
                batch_format="numpy",
                fn_kwargs={"threshold": threshold, "num_perm": params.num_perm},
            )
        )
        parts = [ray.get(ref) for ref in verified.to_arrow_refs()]
    parts = [p for p in parts if p.num_rows]
    if not parts:
        return Pairs.empty(), params
    result = pa.concat_tables(parts)
    pairs = Pairs(
        np.asarray(result.column("left").to_numpy(), dtype=np.int64),
        np.asarray(result.column("right").to_numpy(), dtype=np.int64),
        np.asarray(result.column("shared").to_numpy(), dtype=np.int64),
        np.asarray(result.column("jaccard").to_numpy(), dtype=np.float64),
    )
    return pairs.sorted(), params
