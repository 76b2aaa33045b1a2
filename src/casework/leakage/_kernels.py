"""Compiled loops of the LSH join's hot spots: MinHash, band keys, fingerprint agreements, merges.

Why compiled: numpy cannot fuse a loop. MinHash as numpy made a ``num_perm x shingles`` uint32
temporary per block and passed over it three times (multiply, add, ``minimum.reduceat``);
counting agreeing fingerprints gathered both rows of every pair into new arrays first; exact
intersections compared ``width x width`` boolean grids. Each of these is one pass here, with no
temporaries, on the caller's threads (``nogil``). On the leakage benchmark's first 20,000 rows
(one thread, load 2): MinHash at 208 permutations 250 -> 59 ms, the 26 band keys 46 -> 25 ms,
agreements of 2 million pairs 670 -> 190 ms; the same pairs and Jaccard values.

numba is imported, and a kernel compiled, on its first call (see
:class:`~casework.shingling._kernels.Kernel`), not when :mod:`casework.leakage` is imported
(the gate and the review queue import it and never run these); the machine code is cached on
disk (``__pycache__`` beside this file, or numba's cache folder when that is not writable), so
only the first call on a machine pays the compile. Each kernel's Python body stays callable as
``kernel.py_func`` (the tests run it without numba).
Entry points: :data:`minhash`, :data:`band_key`, :data:`agreements`, :data:`intersections`,
:data:`group_ends` and :data:`group_pairs` (the pairs of rows sharing a band key).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from casework.shingling._kernels import Kernel

__all__ = ["agreements", "band_key", "group_ends", "group_pairs", "intersections", "minhash"]

U8 = npt.NDArray[np.uint8]
U32 = npt.NDArray[np.uint32]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


_LOW32 = np.uint64(0xFFFFFFFF)
_SHIFT32 = np.uint64(32)


def _minhash(hashes: U64, offsets: I64, a: U32, b: U32, out: U32) -> None:
    """``out[r, j] = min((a[j] * x + b[j]) mod 2**32)`` over row ``r``'s folded hashes ``x``.

    Row ``r`` is ``hashes[offsets[r]:offsets[r + 1]]``; a hash ``h`` folds to 32 bits as
    ``(h ^ (h >> 32)) mod 2**32``. A row without hashes keeps ``0xFFFFFFFF`` everywhere. The
    products stay below 2**64 (both factors are below 2**32), so the mask is the uint32 wrap.
    """
    perms = a.shape[0]
    for r in range(offsets.shape[0] - 1):
        sig = out[r]
        sig[:] = 0xFFFFFFFF
        for i in range(offsets[r], offsets[r + 1]):
            h = hashes[i]
            x = (h ^ (h >> _SHIFT32)) & _LOW32
            for j in range(perms):
                value = (np.uint64(a[j]) * x + np.uint64(b[j])) & _LOW32
                if value < sig[j]:
                    sig[j] = value


def _band_key(signatures: U32, first: int, rows: int, seed: np.uint64, out: U64) -> None:
    """One key per signature row over positions ``first .. first + rows - 1``.

    Positions are read in pairs as 64-bit words (the first value low, a missing second 0); the
    key starts at ``seed`` and takes each word as ``k = k ^ w; k = k * M mod 2**64;
    k = k ^ (k >> 32)`` with ``M`` MurmurHash3's first 64-bit multiplier.
    """
    mult = np.uint64(0xFF51AFD7ED558CCD)
    for r in range(signatures.shape[0]):
        sig = signatures[r]
        key = seed
        for c in range(0, rows, 2):
            word = np.uint64(sig[first + c])
            if c + 1 < rows:
                word |= np.uint64(sig[first + c + 1]) << _SHIFT32
            key = (key ^ word) * mult
            key ^= key >> _SHIFT32
        out[r] = key


def _agreements(prints: U8, left: I64, other: U8, right: I64, out: I64) -> None:
    """``out[i]`` = positions at which ``prints[left[i]]`` and ``other[right[i]]`` are equal."""
    width = prints.shape[1]
    for i in range(left.shape[0]):
        x = prints[left[i]]
        y = other[right[i]]
        same = 0
        for j in range(width):
            same += x[j] == y[j]
        out[i] = same


def _intersections(
    hashes: npt.NDArray[np.integer[Any]],
    offsets: I64,
    left: I64,
    other: npt.NDArray[np.integer[Any]],
    other_offsets: I64,
    right: I64,
    out: I64,
) -> None:
    """``out[i]`` = positions of row ``left[i]`` whose value occurs in row ``right[i]`` of ``other``.

    A merge of the two rows, each sorted (non-decreasing): for rows without repeats (as
    :class:`~casework.shingling._sets.ShingleSets` keeps them, or the exact join's ranks) the size
    of their intersection. Shingle hashes (uint64) and ranks (int64) each compile once.
    """
    for k in range(left.shape[0]):
        i, i_end = offsets[left[k]], offsets[left[k] + 1]
        j, j_end = other_offsets[right[k]], other_offsets[right[k] + 1]
        shared = 0
        while i < i_end and j < j_end:
            x, y = hashes[i], other[j]
            if x < y:
                i += 1
            elif y < x:
                j += 1
            else:
                shared += 1
                i += 1
        out[k] = shared


def _group_ends(keys: npt.NDArray[np.integer[Any]], ends: I64) -> None:
    """``ends[i]`` = the end (exclusive) of the run of equal ``keys`` that holds ``i``."""
    end = keys.shape[0]
    for i in range(keys.shape[0] - 1, -1, -1):
        if i + 1 < keys.shape[0] and keys[i] != keys[i + 1]:
            end = i + 1
        ends[i] = end


def _group_pairs(members: I64, ends: I64, lo: int, hi: int, low: I64, high: I64) -> None:
    """Each element ``e`` in ``[lo, hi)`` paired with ``e + 1 .. ends[e] - 1``, as (low, high).

    The pairs go into ``low`` and ``high`` in that order: element by element, then partner.
    """
    c = 0
    for e in range(lo, hi):
        a = members[e]
        for f in range(e + 1, ends[e]):
            b = members[f]
            low[c] = min(a, b)
            high[c] = max(a, b)
            c += 1


minhash = Kernel(_minhash)
band_key = Kernel(_band_key)
agreements = Kernel(_agreements)
intersections = Kernel(_intersections)
group_ends = Kernel(_group_ends)
group_pairs = Kernel(_group_pairs)
