"""MinHash signatures of a whole batch of shingle sets at once (a compiled loop, no per-row Python).

Entry point: :class:`MinHasher` (``signatures(sets)`` -> ``uint32[rows, num_perm]``).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from casework.leakage import _kernels
from casework.shingling._sets import ShingleSets

__all__ = ["EMPTY", "MinHasher", "agreements", "estimate_jaccard", "fingerprints"]

U32 = npt.NDArray[np.uint32]

EMPTY = np.uint32(0xFFFFFFFF)
"""Signature value of every permutation for a row without shingles."""

_MASK64 = (1 << 64) - 1


def _splitmix64(state: int) -> tuple[int, int]:
    """One step of SplitMix64 (Steele et al. 2014): a stable stream of 64-bit values."""
    state = (state + 0x9E3779B97F4A7C15) & _MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return state, z ^ (z >> 31)


def _coefficients(num_perm: int, seed: int) -> tuple[U32, U32]:
    state = seed & _MASK64
    a = np.empty(num_perm, dtype=np.uint32)
    b = np.empty(num_perm, dtype=np.uint32)
    for j in range(num_perm):
        state, value = _splitmix64(state)
        a[j] = (value & 0xFFFFFFFF) | 1
        b[j] = value >> 32
    return a, b


@dataclass(frozen=True)
class MinHasher:
    """MinHash over 32-bit folds of the 64-bit shingle hashes, ``num_perm`` permutations.

    Permutation ``j`` maps ``x`` to ``(a_j x + b_j) mod 2**32`` (``a_j`` odd, so a bijection);
    ``P(sig_j(A) = sig_j(B)) ≈ J(A, B)`` (Broder 1997). Coefficients come from a SplitMix64
    stream of ``seed``, so signatures are identical on every machine and numpy version.
    """

    num_perm: int
    """Number of permutations (signature width)."""
    seed: int = 1
    """Seed of the permutation coefficients."""
    threads: int = 2
    """Worker threads (the compiled loop releases the GIL)."""
    _a: U32 = field(init=False, repr=False, compare=False)
    _b: U32 = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.num_perm < 1:
            raise ValueError(f"num_perm must be at least 1. Got {self.num_perm}.")
        a, b = _coefficients(self.num_perm, self.seed)
        object.__setattr__(self, "_a", a)
        object.__setattr__(self, "_b", b)

    def signatures(self, sets: ShingleSets) -> U32:
        """``uint32[len(sets), num_perm]`` signatures; empty rows get :data:`EMPTY` everywhere."""
        n = len(sets)
        out = np.empty((n, self.num_perm), dtype=np.uint32)
        parts = max(1, min(self.threads, n // 2048))
        cuts = np.linspace(0, n, parts + 1).astype(np.int64)

        def work(i: int) -> None:
            lo, hi = int(cuts[i]), int(cuts[i + 1])
            _kernels.minhash(sets.hashes, sets.offsets[lo : hi + 1], self._a, self._b, out[lo:hi])

        if parts == 1:
            work(0)
        else:
            # The kernel releases the GIL: the threads run at once.
            with ThreadPoolExecutor(parts) as pool:
                list(pool.map(work, range(parts)))
        return out


def estimate_jaccard(
    signatures: U32, left: npt.NDArray[np.int64], right: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """Share of equal signature positions for each pair: the MinHash estimate of Jaccard."""
    out = np.empty(len(left), dtype=np.float64)
    step = max(1, 2_000_000 // max(1, signatures.shape[1]))
    for lo in range(0, len(left), step):
        hi = min(len(left), lo + step)
        same = signatures[left[lo:hi]] == signatures[right[lo:hi]]
        # A count divided once: the same float as the mean, without a float per position.
        out[lo:hi] = np.count_nonzero(same, axis=1) / signatures.shape[1]
    return out


def fingerprints(signatures: U32) -> npt.NDArray[np.uint8]:
    """The low byte of every signature value: what the candidate pre-filter compares.

    Two values that are equal have equal low bytes, so fingerprints agree at every position the
    signatures agree at (and, by chance, at about 1 in 256 of the others): a filter that keeps
    pairs with enough agreeing fingerprints keeps every pair the full values would have kept, and
    reads a quarter of the bytes.
    """
    return np.ascontiguousarray(signatures.astype(np.uint8))


def agreements(
    fingerprints: npt.NDArray[np.uint8],
    left: npt.NDArray[np.int64],
    right: npt.NDArray[np.int64],
    right_fingerprints: npt.NDArray[np.uint8] | None = None,
) -> npt.NDArray[np.int64]:
    """Number of positions at which each pair's fingerprints agree.

    ``right`` indexes ``right_fingerprints`` when given (two blocks of rows), else ``fingerprints``.
    """
    other = fingerprints if right_fingerprints is None else right_fingerprints
    out = np.empty(len(left), dtype=np.int64)
    _kernels.agreements(fingerprints, left, other, right, out)
    return out
