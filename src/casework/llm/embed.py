"""Embedders: TF-IDF + SVD (default, offline), sentence-transformers, OpenAI-compatible.

The TF-IDF embedder is deterministic; sentence-transformers is an optional extra.

Entry points: :class:`TfidfEmbedder`, :class:`SentenceTransformerEmbedder`, :class:`OpenAIEmbedder`.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from casework.errors import ConfigError, Hint
from casework.llm.accounting import Ledger, Pricing
from casework.llm.base import LLMError, TokenUsage
from casework.llm.cache import CacheEntry, ResponseCache, cache_key, params_json
from casework.llm.openai_compat import map_openai_error, openai_sdk_client
from casework.llm.retry import RetryPolicy, call_with_retries
from casework.project import CONFIG_NAME

__all__ = ["OpenAIEmbedder", "SentenceTransformerEmbedder", "TfidfEmbedder", "normalise_rows"]

Matrix = NDArray[np.float64]


def normalise_rows(matrix: Matrix) -> Matrix:
    """Scale every row to unit L2 norm (zero rows stay zero)."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)


class TfidfEmbedder:
    """TF-IDF (words and bigrams, sublinear tf) reduced by truncated SVD (latent semantic analysis).

    The vocabulary and the SVD are fitted on the texts of each :meth:`embed` call (or once on a
    reference corpus with :meth:`fit`), so vectors from separate unfitted calls are not comparable.
    Deterministic: the randomized SVD uses ``seed``. The size is ``min(dimensions, rank)``; with
    too few texts or terms for an SVD the TF-IDF vectors themselves are returned.

    Args:
        dimensions: SVD components wanted.
        seed: Random state of the randomized SVD.
    """

    def __init__(self, dimensions: int = 256, seed: int = 0) -> None:
        self.dimensions = dimensions
        self.seed = seed
        self._fitted: tuple[Any, Any | None] | None = None

    @property
    def name(self) -> str:
        """`tfidf`."""
        return "tfidf"

    def _fit(self, texts: Sequence[str]) -> tuple[Any, Any | None]:
        from sklearn.decomposition import TruncatedSVD
        from sklearn.feature_extraction.text import TfidfVectorizer

        vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, lowercase=True)
        try:
            tfidf = vectorizer.fit_transform(list(texts))
        except ValueError:  # no text holds a single token
            return vectorizer, None
        k = min(self.dimensions, tfidf.shape[1] - 1, tfidf.shape[0])
        if k < 2:
            return vectorizer, None
        svd = TruncatedSVD(n_components=k, algorithm="randomized", random_state=self.seed)
        svd.fit(tfidf)
        return vectorizer, svd

    def fit(self, corpus: Sequence[str]) -> TfidfEmbedder:
        """Fit vocabulary and SVD once on ``corpus``; later :meth:`embed` calls reuse them."""
        self._fitted = self._fit(corpus)
        return self

    def embed(self, texts: Sequence[str]) -> Matrix:
        """One L2-normalised row per text."""
        if not texts:
            return np.zeros((0, 0))
        vectorizer, svd = self._fitted if self._fitted is not None else self._fit(texts)
        if not hasattr(vectorizer, "vocabulary_"):
            return np.zeros((len(texts), 1))
        tfidf = vectorizer.transform(list(texts))
        dense = svd.transform(tfidf) if svd is not None else tfidf.toarray()
        return normalise_rows(np.asarray(dense, dtype=np.float64))


class SentenceTransformerEmbedder:
    """A sentence-transformers model (optional extra ``casework[sentence-transformers]``).

    Args:
        model: Model name or path (`all-MiniLM-L6-v2`).
        module: The `sentence_transformers` module (imported lazily when omitted).
    """

    def __init__(self, model: str, *, module: Any = None) -> None:
        if module is None:
            try:
                module = importlib.import_module("sentence_transformers")
            except ImportError as exc:
                raise ConfigError(
                    CONFIG_NAME,
                    None,
                    "models.embedder.provider",
                    "'sentence-transformers' needs the sentence-transformers package, which is "
                    "not installed. Install it with "
                    "`pip install 'casework[sentence-transformers]'`, or use provider = \"tfidf\"",
                ) from exc
        self._model_name = model
        self._model = module.SentenceTransformer(model)

    @property
    def name(self) -> str:
        """`sentence-transformers:<model>`."""
        return f"sentence-transformers:{self._model_name}"

    def embed(self, texts: Sequence[str]) -> Matrix:
        """One L2-normalised row per text."""
        if not texts:
            return np.zeros((0, 0))
        vectors = self._model.encode(list(texts), convert_to_numpy=True, show_progress_bar=False)
        return normalise_rows(np.asarray(vectors, dtype=np.float64))


class OpenAIEmbedder:
    """`/v1/embeddings` of an OpenAI-compatible server, with per-text cache and retries.

    Args:
        model: Embedding model id.
        api_key: The key (a placeholder for servers that need none).
        base_url: Server URL; ``None`` for api.openai.com.
        dimensions: Requested vector size (models that support it), or ``None``.
        timeout_s: Request timeout in seconds.
        batch_size: Texts per request.
        cache: Response cache (one entry per text), or ``None``.
        ledger: Where requests and tokens are counted.
        retry: Retry policy for transient failures.
        pricing: Price per million input tokens, for the cost line.
        sleep: Waits between retries (injected by tests).
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        dimensions: int | None = None,
        timeout_s: float = 60.0,
        batch_size: int = 128,
        cache: ResponseCache | None = None,
        ledger: Ledger | None = None,
        retry: RetryPolicy | None = None,
        pricing: Pricing | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._model = model
        self._dimensions = dimensions
        self._timeout_s = timeout_s
        self._batch_size = batch_size
        self._cache = cache
        self.ledger = ledger if ledger is not None else Ledger()
        self._retry = retry or RetryPolicy()
        self._pricing = pricing or Pricing()
        self._sleep = sleep
        self._sdk = openai_sdk_client(base_url, api_key, timeout_s)

    @property
    def name(self) -> str:
        """`openai:<model>`."""
        return f"openai:{self._model}"

    def _params(self) -> dict[str, Any]:
        return {"dimensions": self._dimensions} if self._dimensions is not None else {}

    def _key(self, text: str) -> tuple[str, str]:
        phash = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return cache_key("embedding", self.name, phash, self._params()), phash

    def _request(self, batch: list[str]) -> list[list[float]]:
        describe = f"models.embedder ({self._model} at {str(self._sdk.base_url).rstrip('/')})"

        import openai

        def attempt() -> Any:
            try:
                return self._sdk.embeddings.create(
                    input=batch, model=self._model, encoding_format="float", **self._params()
                )
            except openai.OpenAIError as exc:
                raise map_openai_error(
                    exc, timeout_s=self._timeout_s, hint_key="models.embedder"
                ) from exc

        response = call_with_retries(
            attempt,
            self._retry,
            describe=describe,
            sleep=self._sleep,
            on_retry=lambda _e: self.ledger.record_retry("embedder", self._model, self._pricing),
        )
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(batch):
            raise LLMError(
                f"{describe}: asked for {len(batch)} embeddings, the server returned {len(data)}."
            )
        usage = getattr(response, "usage", None)
        tokens = getattr(usage, "prompt_tokens", None)
        self.ledger.record(
            "embedder",
            self._model,
            TokenUsage(tokens, 0) if isinstance(tokens, int) else None,
            cached=False,
            pricing=self._pricing,
        )
        return [list(map(float, d.embedding)) for d in data]

    def embed(self, texts: Sequence[str]) -> Matrix:
        """One L2-normalised row per text; cached texts are not sent again.

        Raises:
            LLMError: The server failed for good, or returned a wrong number of vectors.
        """
        if not texts:
            return np.zeros((0, 0))
        vectors: list[list[float] | None] = [None] * len(texts)
        todo: list[int] = []
        for i, text in enumerate(texts):
            hit = self._cache.get(self._key(text)[0]) if self._cache is not None else None
            if hit is not None:
                vectors[i] = json.loads(hit.text)
            else:
                todo.append(i)
        for start in range(0, len(todo), self._batch_size):
            chunk = todo[start : start + self._batch_size]
            got = self._request([texts[i] for i in chunk])
            for i, vector in zip(chunk, got, strict=True):
                vectors[i] = vector
                if self._cache is not None:
                    key, phash = self._key(texts[i])
                    self._cache.put(
                        key,
                        CacheEntry(
                            kind="embedding",
                            model=self.name,
                            prompt_hash=phash,
                            params=params_json(self._params()),
                            text=json.dumps(vector),
                        ),
                    )
        sizes = {len(v) for v in vectors if v is not None}
        if len(sizes) != 1:
            raise LLMError(
                f"models.embedder ({self._model}): vectors of different sizes {sorted(sizes)}."
            ).suggest(Hint("llm cache clear", why="after changing model or dimensions"))
        return normalise_rows(np.asarray(vectors, dtype=np.float64))
