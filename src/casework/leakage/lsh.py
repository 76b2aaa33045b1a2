"""LSH banding over MinHash signatures, with bands x rows chosen from the threshold.

Candidates are verified by exact Jaccard, so every reported pair is true (precision 1.0); recall
at the threshold is at least ``min_recall`` by construction of the parameters.
Entry points: :func:`choose_params`, :func:`collision_probability`, :func:`band_candidates`,
:func:`lsh_join`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.stats import binom

from casework.leakage import _kernels
from casework.leakage.minhash import EMPTY, MinHasher, agreements, fingerprints
from casework.leakage.pairs import (
    Pairs,
    cross_group,
    dedupe_pairs,
    pairs_within_groups,
    verify_pairs,
)
from casework.shingling._sets import I64, ShingleSets

__all__ = [
    "CURVE_POINTS",
    "LshParams",
    "band_candidates",
    "band_keys",
    "choose_params",
    "collision_probability",
    "lsh_join",
    "prefilter",
]

CURVE_POINTS = (0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95, 1.0)
"""Similarities at which the theoretical recall curve is reported."""

#: Allowed chance that the signature pre-filter drops a pair at the threshold.
_PREFILTER_MISS = 1e-6


def collision_probability(s: float, bands: int, rows: int) -> float:
    """Chance that a pair of Jaccard ``s`` shares at least one band: ``1 - (1 - s**r)**b``.

    Source: Leskovec, Rajaraman & Ullman, *Mining of Massive Datasets*, 3rd ed., §3.4.2; their
    worked example (b = 20, r = 5) gives 0.9996 at s = 0.8 (Figure 3.11 reports 0.9996).

    >>> round(collision_probability(0.8, 20, 5), 4)
    0.9996
    """
    return float(1.0 - (1.0 - s**rows) ** bands)


@dataclass(frozen=True)
class LshParams:
    """Banding parameters: ``bands`` bands of ``rows`` signature positions each."""

    threshold: float
    """Jaccard similarity the parameters were chosen for."""
    bands: int
    """Number of bands."""
    rows: int
    """Signature positions per band."""

    @property
    def num_perm(self) -> int:
        """Signature width used: ``bands * rows``."""
        return self.bands * self.rows

    def recall(self, s: float) -> float:
        """Theoretical chance that a pair of Jaccard ``s`` becomes a candidate."""
        return collision_probability(s, self.bands, self.rows)

    def curve(self, points: tuple[float, ...] = CURVE_POINTS) -> list[tuple[float, float]]:
        """``(s, recall(s))`` at each point: the S-curve reported with every scan."""
        return [(s, self.recall(s)) for s in points]


def _false_positive_area(threshold: float, bands: int, rows: int) -> float:
    grid = np.linspace(0.0, threshold, 201)
    values = 1.0 - (1.0 - grid**rows) ** bands
    return float(np.sum((values[1:] + values[:-1]) * np.diff(grid)) / 2)


def choose_params(threshold: float, num_perm: int = 256, min_recall: float = 0.99) -> LshParams:
    """Bands x rows with ``recall(threshold) >= min_recall`` and the smallest false-positive area.

    Among all ``(b, r)`` with ``b * r <= num_perm`` that reach ``min_recall`` at the threshold, the
    one with the least area under the S-curve below the threshold wins (fewest wasted candidates);
    ties go to fewer permutations. datasketch's default for 0.8 at 128 permutations is 9 x 13,
    whose recall at 0.8 is only 0.40; here 0.8 at 256 gives 26 x 8 (recall 0.990).

    >>> choose_params(0.8, 256)
    LshParams(threshold=0.8, bands=26, rows=8)

    Raises:
        ValueError: No ``(b, r)`` within ``num_perm`` reaches ``min_recall``.
    """
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"threshold must be in (0, 1]. Got {threshold}.")
    if not 0.0 < min_recall < 1.0:
        raise ValueError(f"min_recall must be in (0, 1). Got {min_recall}.")
    best: tuple[float, int, LshParams] | None = None
    for rows in range(1, num_perm + 1):
        p = threshold**rows
        if p <= 0.0:
            break
        # Smallest b with 1 - (1 - p)^b >= min_recall.
        bands = 1 if p >= 1.0 else int(np.ceil(np.log(1.0 - min_recall) / np.log1p(-p)))
        if (bands - 1) * rows > num_perm:
            continue
        while bands > 1 and collision_probability(threshold, bands - 1, rows) >= min_recall:
            bands -= 1
        while collision_probability(threshold, bands, rows) < min_recall:
            bands += 1
        if bands * rows > num_perm:
            continue
        key = (_false_positive_area(threshold, bands, rows), bands * rows)
        if best is None or key < best[:2]:
            best = (*key, LshParams(threshold, bands, rows))
    if best is None:
        raise ValueError(
            f"num_perm {num_perm} is too small to reach recall {min_recall} at Jaccard {threshold}."
        )
    return best[2]


def band_keys(signatures: npt.NDArray[np.uint32], band: int, rows: int) -> npt.NDArray[np.uint64]:
    """One 64-bit key per row for band ``band`` (equal bands give equal keys)."""
    seed = np.uint64(((band + 1) * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF)
    key = np.empty(len(signatures), dtype=np.uint64)
    _kernels.band_key(signatures, band * rows, rows, seed, key)
    return key


def band_candidates(
    signatures: npt.NDArray[np.uint32],
    params: LshParams,
    groups: I64 | None = None,
    *,
    threads: int = 2,
) -> tuple[I64, I64]:
    """Distinct row pairs sharing at least one band (and lying in different groups, if given).

    Rows whose signature is empty (no shingles) never become candidates.
    """
    n = len(signatures)
    live = np.flatnonzero(signatures[:, 0] != EMPTY) if n else np.zeros(0, dtype=np.int64)
    live_signatures = signatures if len(live) == n else signatures[live]

    def one_band(band: int) -> tuple[I64, I64]:
        keys = band_keys(live_signatures, band, params.rows)
        left, right = pairs_within_groups(live, keys)
        keep = cross_group(left, right, groups)
        return dedupe_pairs(left[keep], right[keep], n)

    # numpy releases the GIL in sorting, so bands run two at a time.
    with ThreadPoolExecutor(threads) as pool:
        found = list(pool.map(one_band, range(params.bands)))
    lefts = [left for left, _ in found if len(left)]
    rights = [right for _, right in found if len(right)]
    if not lefts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return dedupe_pairs(np.concatenate(lefts), np.concatenate(rights), n)


def prefilter_cutoff(num_perm: int, threshold: float) -> float:
    """Estimated Jaccard below which a candidate is dropped before exact verification.

    A pair at the threshold falls below it with probability at most 1e-6 (binomial tail of the
    ``num_perm`` independent collisions), so recall is unchanged for practical purposes while
    the many weak candidates of templated text skip the exact merge.
    """
    return float(binom.ppf(_PREFILTER_MISS, num_perm, threshold) - 1) / num_perm


def prefilter(
    prints: npt.NDArray[np.uint8],
    left: I64,
    right: I64,
    threshold: float,
    right_prints: npt.NDArray[np.uint8] | None = None,
) -> npt.NDArray[np.bool_]:
    """Mask of the candidates worth verifying exactly: those whose estimate reaches the cut-off.

    The estimate counts agreeing :func:`~casework.leakage.minhash.fingerprints` (low bytes of
    the signature values), which agree wherever the full values do: the mask keeps every pair
    the full-width estimate keeps, plus a few more that exact verification then drops. Every
    engine filters with this one function, so they verify the same candidates. ``right``
    indexes ``right_prints`` when given (the streamed join's second block of rows).
    """
    num_perm = prints.shape[1]
    need = prefilter_cutoff(num_perm, threshold) * num_perm - 1e-9
    return agreements(prints, left, right, right_prints) >= need


def lsh_join(
    sets: ShingleSets,
    threshold: float,
    *,
    num_perm: int = 256,
    seed: int = 1,
    min_recall: float = 0.99,
    groups: I64 | None = None,
    signatures: npt.NDArray[np.uint32] | None = None,
) -> tuple[Pairs, LshParams]:
    """Pairs of rows with Jaccard >= ``threshold``, found by MinHash-LSH and verified exactly.

    Args:
        sets: Shingle sets of the rows.
        threshold: Jaccard similarity to report at or above.
        num_perm: Largest signature width the parameters may use.
        seed: Seed of the MinHash permutations.
        min_recall: Theoretical recall required at the threshold.
        groups: Optional group (split) code per row; only pairs across groups are returned.
        signatures: Precomputed signatures (width ``params.num_perm``), e.g. from Ray workers.

    Returns:
        The verified pairs and the banding parameters used.
    """
    params = choose_params(threshold, num_perm, min_recall)
    if signatures is None:
        signatures = MinHasher(params.num_perm, seed).signatures(sets)
    left, right = band_candidates(signatures, params, groups)
    sizes = sets.sizes()
    small = np.minimum(sizes[left], sizes[right])
    large = np.maximum(sizes[left], sizes[right])
    keep = small >= threshold * large - 1e-9
    left, right = left[keep], right[keep]
    keep = prefilter(fingerprints(signatures), left, right, threshold)
    return verify_pairs(sets, left[keep], right[keep], threshold), params
