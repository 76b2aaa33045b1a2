"""Embedders: TF-IDF + SVD determinism and sense; optional sentence-transformers explains itself."""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np
import pytest

from casework.errors import ConfigError
from casework.llm import TfidfEmbedder
from casework.llm.embed import SentenceTransformerEmbedder

TEXTS = [
    "my mug arrived broken and I want a refund",
    "the mug I ordered came broken, refund please",
    "where is my parcel, tracking says delivered",
    "parcel tracking shows delivered but nothing arrived",
    "please change the delivery address of my order",
    "can I update the shipping address on my order",
]


def test_tfidf_is_deterministic_and_normalised() -> None:
    a = TfidfEmbedder(dimensions=4, seed=3).embed(TEXTS)
    b = TfidfEmbedder(dimensions=4, seed=3).embed(TEXTS)
    assert a.shape == (6, 4)
    assert np.array_equal(a, b)
    assert np.allclose(np.linalg.norm(a, axis=1), 1.0)


def test_tfidf_puts_paraphrases_closer_than_other_topics() -> None:
    vectors = TfidfEmbedder(dimensions=4).embed(TEXTS)
    sims = vectors @ vectors.T
    for i in range(0, 6, 2):
        partner = sims[i, i + 1]
        others = [sims[i, j] for j in range(6) if j not in (i, i + 1)]
        assert partner > max(others)


def test_tfidf_fit_once_then_embed_new_texts_in_the_same_space() -> None:
    embedder = TfidfEmbedder(dimensions=4).fit(TEXTS)
    vectors = embedder.embed(["refund for a broken mug", "delivered parcel missing"])
    reference = embedder.embed(TEXTS)
    assert vectors.shape == (2, 4)
    assert int(np.argmax(reference @ vectors[0])) in (0, 1)
    assert int(np.argmax(reference @ vectors[1])) in (2, 3)


def test_tfidf_small_inputs() -> None:
    one = TfidfEmbedder().embed(["just one text"])
    assert one.shape[0] == 1 and np.isclose(np.linalg.norm(one[0]), 1.0)
    assert TfidfEmbedder().embed([]).shape == (0, 0)
    assert TfidfEmbedder().embed(["", "!!"]).tolist() == [[0.0], [0.0]]


def test_sentence_transformers_missing_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ConfigError) as info:
        SentenceTransformerEmbedder("all-MiniLM-L6-v2")
    assert str(info.value) == (
        "casework.toml: models.embedder.provider: 'sentence-transformers' needs the "
        "sentence-transformers package, which is not installed. Install it with "
        "`pip install 'casework[sentence-transformers]'`, or use provider = \"tfidf\"."
    )


def test_sentence_transformers_rows_are_normalised() -> None:
    class Model:
        def __init__(self, name: str) -> None:
            self.name = name

        def encode(self, texts: list[str], **kwargs: Any) -> Any:
            return np.array([[float(len(t)), 0.0, 0.0] for t in texts])

    module = types.SimpleNamespace(SentenceTransformer=Model)
    embedder = SentenceTransformerEmbedder("m", module=module)
    assert embedder.name == "sentence-transformers:m"
    assert embedder.embed(["ab", ""]).tolist() == [[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]
