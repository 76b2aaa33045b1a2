from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from casework.leakage.embed import cosine_pairs, embedding_duplicates
from casework.llm import Embedder


class BagOfWords:
    """A tiny embedder: counts of a fixed vocabulary (not normalised, on purpose)."""

    vocab = ("refund", "order", "broken", "cancel", "late", "card")
    name = "bag-of-words"

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float64]:
        return np.array(
            [[t.lower().split().count(w) for w in self.vocab] for t in texts], dtype=np.float64
        )


def brute(vectors: npt.NDArray[np.float64], threshold: float) -> set[tuple[int, int]]:
    out = set()
    norms = np.linalg.norm(vectors, axis=1)
    for i, j in itertools.combinations(range(len(vectors)), 2):
        if (
            norms[i]
            and norms[j]
            and vectors[i] @ vectors[j] / (norms[i] * norms[j]) >= threshold - 1e-12
        ):
            out.add((i, j))
    return out


@settings(max_examples=60, deadline=None)
@given(
    arrays(
        np.float64,
        st.tuples(st.integers(1, 30), st.integers(1, 4)),
        elements=st.integers(-3, 3).map(float),
    ),
    st.sampled_from([0.5, 0.9, 0.99]),
    st.integers(1, 7),
)
def test_blocked_search_equals_brute_force(
    vectors: npt.NDArray[np.float64], threshold: float, block: int
) -> None:
    got = {(p.left, p.right) for p in cosine_pairs(vectors, threshold, block=block)}
    assert got == brute(vectors, threshold)


def test_embedding_duplicates_with_any_embedder() -> None:
    embedder = BagOfWords()
    assert isinstance(embedder, Embedder)
    texts = ["refund my order", "order refund please", "cancel my card", "it is late"]
    pairs = embedding_duplicates(texts, embedder, 0.9)
    assert [(p.left, p.right, p.cosine) for p in pairs] == [(0, 1, 1.0)]
    against = embedding_duplicates(["card cancel"], embedder, 0.9, against=texts)
    assert [(p.left, p.right) for p in against] == [(0, 2)]


def test_bad_inputs() -> None:
    with pytest.raises(ValueError, match=r"threshold must be in \[-1, 1\]. Got 2."):
        cosine_pairs(np.eye(2), 2)
    with pytest.raises(ValueError, match=r"both sides need the same dimension\. Got 2 and 3\."):
        cosine_pairs(np.eye(2), 0.5, against=np.eye(3))
    with pytest.raises(
        ValueError, match=r"embeddings must be a 2-D array \(one row per text\). Got shape \(3,\)."
    ):
        cosine_pairs(np.ones(3), 0.5)
