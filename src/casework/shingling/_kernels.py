"""Compiled loops of the batch tokenizer and shingler, and :class:`Kernel`, how casework compiles.

Why compiled: words found with numpy took six passes over a batch's bytes, each making a new
array as long as the text (classes, a mask, its steps, their positions, row cuts, a merge).
Here one pass counts the words and their bytes, and a second copies the lowered bytes into
arrays of exactly that size: 100,000 rows of the leakage benchmark's corpus tokenise in 157 ms
of CPU instead of 393 (load 10; most of what is left is Arrow's normalisation of the non-ASCII
rows, unchanged). The shingle hashes of a row are then made, sorted and de-duplicated in one
loop, where numpy hashed every window of the batch in k passes and sorted the rows as padded
matrices by width class: ``shingle_sets`` of those rows 349 ms instead of 598 with both.
numba is imported, and a loop compiled, on its first call; the machine code is cached on disk
(``cache=True``: ``__pycache__`` beside this file, or numba's cache folder when that is not
writable). Each kernel's Python body stays callable as ``kernel.py_func``.
Entry points: :class:`Kernel`, :data:`word_counts`, :data:`words`, :data:`shingle_rows`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Generic, ParamSpec

import numpy as np
import numpy.typing as npt

__all__ = ["Kernel", "shingle_rows", "word_counts", "words"]

P = ParamSpec("P")

U8 = npt.NDArray[np.uint8]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


class Kernel(Generic[P]):
    """A loop numba compiles on its first call; it writes into the ``out`` arrays it is given.

    numba is imported then, not when the module defining the loop is: commands that never run
    the loop (the gate, the review queue) do not pay for it.
    """

    def __init__(self, py_func: Callable[P, None]) -> None:
        self.py_func = py_func
        """The loop as Python (what numba compiles)."""
        self._compiled: Callable[..., None] | None = None
        self._lock = threading.Lock()

    def _compile(self) -> Callable[..., None]:
        with self._lock:
            if self._compiled is None:
                import numba  # type: ignore[import-untyped]

                compiled: Any
                try:
                    compiled = numba.njit(cache=True, nogil=True)(self.py_func)
                except RuntimeError:  # no folder to cache in (read-only install, no home)
                    compiled = numba.njit(cache=False, nogil=True)(self.py_func)
                self._compiled = compiled
            return self._compiled

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> None:
        compiled = self._compiled or self._compile()
        compiled(*args, **kwargs)


def _word_counts(data: U8, rows: I64, classes: U8, out: I64) -> None:
    """``out = [bytes in words, words]`` of the rows ``data[rows[r]:rows[r + 1]]``.

    A word is a maximal run, within a row, of bytes whose class is not 0.
    """
    kept = 0
    found = 0
    for r in range(rows.shape[0] - 1):
        inside = False
        for i in range(rows[r], rows[r + 1]):
            if classes[data[i]] != 0:
                kept += 1
                inside = True
            elif inside:
                found += 1
                inside = False
        if inside:
            found += 1
    out[0] = kept
    out[1] = found


def _words(data: U8, rows: I64, classes: U8, chars: U8, word_offsets: I64, row_words: I64) -> None:
    """The words :func:`_word_counts` counts, written into arrays of the sizes it gave.

    Their bytes mapped through ``classes`` go to ``chars``, their bounds to ``word_offsets``
    (from 0) and each row's first word to ``row_words`` (its last entry: all the words).
    """
    kept = 0
    found = 0
    word_offsets[0] = 0
    n = rows.shape[0] - 1
    for r in range(n):
        row_words[r] = found
        inside = False
        for i in range(rows[r], rows[r + 1]):
            byte = classes[data[i]]
            if byte != 0:
                chars[kept] = byte
                kept += 1
                inside = True
            elif inside:
                found += 1
                word_offsets[found] = kept
                inside = False
        if inside:
            found += 1
            word_offsets[found] = kept
    if n >= 0:
        row_words[n] = found


_SHIFT33 = np.uint64(33)
_FMIX1 = np.uint64(0xFF51AFD7ED558CCD)
_FMIX2 = np.uint64(0xC4CEB9FE1A85EC53)


def _shingle_rows(
    word_hash: U64,
    row_words: I64,
    k: int,
    coefficients: U64,
    length_coefficient: np.uint64,
    out: U64,
    offsets: I64,
) -> None:
    """Each row's shingle hashes, sorted and without repeats, into ``out`` (bounds: ``offsets``).

    Row ``r`` has the words ``word_hash[row_words[r]:row_words[r + 1]]``; each ``k`` consecutive
    words (all of them when there are fewer, none without words) hash to
    ``fmix64(len * length_coefficient + sum(h_i * coefficients[i])) mod 2**64``. ``out`` needs
    room for every shingle before repeats are dropped.
    """
    at = 0
    offsets[0] = 0
    for r in range(row_words.shape[0] - 1):
        first, stop = row_words[r], row_words[r + 1]
        words = stop - first
        width = min(words, k)
        count = words - k + 1 if words >= k else min(words, 1)
        for s in range(count):
            acc = np.uint64(width) * length_coefficient
            for i in range(width):
                acc += word_hash[first + s + i] * coefficients[i]
            acc ^= acc >> _SHIFT33
            acc *= _FMIX1
            acc ^= acc >> _SHIFT33
            acc *= _FMIX2
            acc ^= acc >> _SHIFT33
            out[at + s] = acc
        row = out[at : at + count]
        row.sort()
        kept = 0
        for j in range(count):
            if j == 0 or row[j] != row[kept - 1]:
                row[kept] = row[j]
                kept += 1
        at += kept
        offsets[r + 1] = at


word_counts = Kernel(_word_counts)
words = Kernel(_words)
shingle_rows = Kernel(_shingle_rows)
