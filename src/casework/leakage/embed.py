"""Embedding near-duplicates: cosine similarity over any embedder, exact blocked search.

For generated candidates (authoring) whose wording differs but whose meaning repeats, where
shingles see nothing. Exact: every pair is compared, in blocks of a matrix product, which stays
practical up to ~100k items on a laptop. Entry points (with any :class:`casework.llm.Embedder`): :func:`cosine_pairs`,
:func:`embedding_duplicates`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from casework.llm import Embedder

__all__ = ["CosinePair", "cosine_pairs", "embedding_duplicates"]

F64 = npt.NDArray[np.float64]

#: Rows of the left matrix per block: block x n float64 similarities stay near 64 MB at n = 2000.
_BLOCK = 2048


@dataclass(frozen=True)
class CosinePair:
    """Two items whose embeddings are at least as similar as the threshold."""

    left: int
    """Index of the first item (in ``texts``)."""
    right: int
    """Index of the second item (in ``texts`` for a self-search, else in ``against``)."""
    cosine: float
    """Cosine similarity of their embeddings."""


def _normalise(vectors: npt.NDArray[np.floating[Any]]) -> F64:
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(
            f"embeddings must be a 2-D array (one row per text). Got shape {matrix.shape}."
        )
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


def cosine_pairs(
    vectors: npt.NDArray[np.floating[Any]],
    threshold: float,
    *,
    against: npt.NDArray[np.floating[Any]] | None = None,
    block: int = _BLOCK,
) -> list[CosinePair]:
    """Every pair with cosine >= ``threshold``.

    Pairs within ``vectors`` (``left < right``), or between ``vectors`` and ``against``. Zero
    vectors match nothing.

    >>> cosine_pairs(np.array([[1.0, 0.0], [0.99, 0.1], [0.0, 1.0]]), 0.9)
    [CosinePair(left=0, right=1, cosine=0.994937)]
    """
    if not -1.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be in [-1, 1]. Got {threshold}.")
    left = _normalise(vectors)
    right = left if against is None else _normalise(against)
    if against is not None and right.shape[1] != left.shape[1]:
        raise ValueError(
            f"both sides need the same dimension. Got {left.shape[1]} and {right.shape[1]}."
        )
    live_right = np.linalg.norm(right, axis=1) > 0
    out: list[CosinePair] = []
    for start in range(0, len(left), block):
        sims = left[start : start + block] @ right.T
        sims[:, ~live_right] = -np.inf
        if against is None:
            # Keep each unordered pair once: only columns after the row's own index.
            rows = np.arange(start, start + len(sims))[:, None]
            sims[np.arange(len(right))[None, :] <= rows] = -np.inf
        i, j = np.nonzero(sims >= threshold - 1e-12)
        out.extend(
            CosinePair(int(a) + start, int(b), round(float(sims[a, b]), 6))
            for a, b in zip(i.tolist(), j.tolist(), strict=True)
        )
    return out


def embedding_duplicates(
    texts: Sequence[str],
    embedder: Embedder,
    threshold: float = 0.9,
    *,
    against: Sequence[str] | None = None,
) -> list[CosinePair]:
    """Near-duplicates by meaning among ``texts`` (or between ``texts`` and ``against``).

    Any object with ``embed(texts) -> array`` will do; vectors are L2-normalised here, so the
    embedder need not normalise. Pairs come highest cosine first.
    """
    vectors = embedder.embed(list(texts))
    other = embedder.embed(list(against)) if against is not None else None
    pairs = cosine_pairs(vectors, threshold, against=other)
    return sorted(pairs, key=lambda p: (-p.cosine, p.left, p.right))
