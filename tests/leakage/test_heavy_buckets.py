"""Templated text makes heavy LSH buckets: the streamed join verifies them within its setting."""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path

import numpy as np

from casework.leakage.batches import sets_of
from casework.leakage.lsh import (
    band_candidates,
    choose_params,
    lsh_join,
    prefilter,
    prefilter_cutoff,
)
from casework.leakage.minhash import estimate_jaccard, fingerprints
from casework.leakage.pairs import Pairs, verify_pairs
from casework.leakage.streamed import StreamStats, streamed_lsh_join
from tests.leakage.corpora import planted

THRESHOLD = 0.8
TEMPLATE = (
    "hello support where is my refund for order {o} i returned the blue kettle on {d} march "
    "and the tracking page has not changed since then please help me"
)


def _templated(n: int, seed: int) -> list[str]:
    """``n`` messages of one template that differ in three slots: nearly every pair collides."""
    rng = random.Random(seed)
    return [
        TEMPLATE.format(
            o=rng.randrange(10**6, 10**7), p=rng.choice("abcdefgh"), d=rng.randrange(28)
        )
        for _ in range(n)
    ]


def _in_memory(texts: list[str]) -> Pairs:
    params = choose_params(THRESHOLD, 256)
    sketch = sets_of(texts, k=3, num_perm=params.num_perm)
    found, _ = lsh_join(sketch.sets, THRESHOLD, signatures=sketch.signatures)
    return found


def _streamed(texts: list[str], scratch: Path, memory_mb: float) -> tuple[Pairs, StreamStats, int]:
    """The streamed join's pairs, its stats and its peak traced allocation (bytes)."""
    step = 250
    tracemalloc.start()
    try:
        found, _, stats = streamed_lsh_join(
            (texts[i : i + step] for i in range(0, len(texts), step)),
            THRESHOLD,
            scratch=scratch,
            memory_mb=memory_mb,
        )
        return found, stats, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_heavy_buckets_are_verified_within_the_setting(tmp_path: Path) -> None:
    small, large = _templated(400, seed=1), _templated(1_200, seed=2)
    _streamed(small[:100], tmp_path, 0.5)  # warm-up: imports and caches are not the join's
    found_small, stats_small, peak_small = _streamed(small, tmp_path, 0.5)
    found_large, stats_large, peak_large = _streamed(large, tmp_path, 0.5)
    # Most pairs of rows are candidates: 9x the candidates for 3x the rows.
    assert stats_large.candidates > 300_000
    assert stats_large.candidates > 8 * stats_small.candidates
    assert stats_large.blocks > 1
    # The candidates are verified in batches and buckets the setting bounds, so the peak grows
    # with the rows' own arrays (3x) and the pairs found, far less than with the candidates (9x).
    # Nearly every pair of a template is found (9x the pairs too): the pairs returned, held twice
    # while they are joined and sorted (64 bytes a pair), are the output, not the join's memory.
    output_small, output_large = 64 * len(found_small), 64 * len(found_large)
    assert len(found_large) > 8 * len(found_small)
    assert peak_large - output_large < 2 * (peak_small - output_small)
    assert peak_large < 8 * stats_large.candidates  # less than the candidates' keys alone
    assert found_large.as_set() == _in_memory(large).as_set()
    assert found_small.as_set() == _in_memory(small).as_set()


def test_the_prefilter_keeps_every_pair_the_full_signatures_keep() -> None:
    texts = planted(3_000, seed=11, share=0.2) + _templated(300, seed=3)
    params = choose_params(THRESHOLD, 256)
    sketch = sets_of(texts, k=3, num_perm=params.num_perm)
    assert sketch.signatures is not None
    left, right = band_candidates(sketch.signatures, params)
    cutoff = prefilter_cutoff(params.num_perm, THRESHOLD)
    full = estimate_jaccard(sketch.signatures, left, right) >= cutoff
    low_bytes = prefilter(fingerprints(sketch.signatures), left, right, THRESHOLD)
    # Equal values have equal low bytes: the fingerprint filter keeps a superset.
    assert np.all(low_bytes[full])
    assert low_bytes.sum() < 1.1 * full.sum()


def test_the_prefilter_drops_no_pair_exact_verification_keeps() -> None:
    # Every candidate verified exactly, against the candidates the pre-filter lets through.
    texts = planted(4_000, seed=12, share=0.3) + _templated(400, seed=4)
    params = choose_params(THRESHOLD, 256)
    sketch = sets_of(texts, k=3, num_perm=params.num_perm)
    assert sketch.signatures is not None
    left, right = band_candidates(sketch.signatures, params)
    everything = verify_pairs(sketch.sets, left, right, THRESHOLD)
    kept = prefilter(fingerprints(sketch.signatures), left, right, THRESHOLD)
    filtered = verify_pairs(sketch.sets, left[kept], right[kept], THRESHOLD)
    assert len(everything) > 300
    assert filtered.as_set() == everything.as_set()
    assert kept.sum() < len(left)
    found, _ = lsh_join(sketch.sets, THRESHOLD, signatures=sketch.signatures)
    assert found.as_set() == everything.as_set()
