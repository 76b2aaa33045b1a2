"""A build above the fit sample: fit on a seeded sample, assign the rest in streaming batches.

The embedder (TF-IDF vocabulary and SVD) and the clustering are fitted on the sample
(:class:`casework.shapes._sample.Sampler`); every other failing conversation is embedded with the
fitted model one batch at a time and joins the nearest shape centroid whose assignment radius
holds it (:data:`casework.shapes._cluster.RADIUS_SLACK` times the largest distance of a sample
member to that centroid), or stays unassigned. Per shape only counts, member ids and bounded
samples of examples are kept (:class:`Tally`), so memory follows the batch and the sample, not the
number of traces. Entry points: :func:`fit`, :func:`assign`, :class:`Tally`.
"""

from __future__ import annotations

import heapq
import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from casework.llm.base import Embedder
from casework.llm.embed import TfidfEmbedder
from casework.shapes._cluster import RADIUS_SLACK, ClusterParams, centroids, cluster, nearest, unit
from casework.shapes._model import Shape, ShapeExample
from casework.shapes._sample import Row, seeded_hash

Matrix = NDArray[np.float64]
#: Most central members kept per shape (its representatives).
CENTRAL = 3


@dataclass(frozen=True)
class FittedModel:
    """What streamed batches are assigned with: the fitted embedder and the shapes' centroids.

    Attributes:
        embedder: The embedder, fitted on the sample when it is TF-IDF.
        centroids: Unit centroid of each shape (largest first), from its sample members.
        radii: Assignment radius of each shape: :data:`RADIUS_SLACK` times its sample radius.
    """

    embedder: Embedder
    centroids: Matrix
    radii: NDArray[np.float64]


@dataclass(frozen=True)
class Fit:
    """The sample's clustering.

    Attributes:
        model: What the other conversations are assigned with.
        labels: Cluster of each sample row (0 = largest; singletons included).
        distances: Each sample row's cosine distance to its shape's centroid (0 outside shapes).
        shapes: Number of clusters of at least the minimum shape size (clusters 0 … shapes - 1).
    """

    model: FittedModel
    labels: NDArray[np.int64]
    distances: Matrix
    shapes: int


def _embed(embedder: Embedder, texts: Sequence[str]) -> Matrix:
    return unit(np.asarray(embedder.embed(list(texts)), dtype=np.float64))


def fit(embedder: Embedder, texts: Sequence[str], params: ClusterParams) -> Fit:
    """Fit ``embedder`` (when it is TF-IDF) and the clustering on the sample's texts."""
    if isinstance(embedder, TfidfEmbedder):
        embedder.fit(texts)
    x = _embed(embedder, texts)
    labels = cluster(x, params)
    sizes = np.bincount(labels)
    shapes = int((sizes >= params.min_size).sum())  # labels are ranked by size: 0 … shapes - 1
    dims = x.shape[1] if x.ndim == 2 else 0
    cents = centroids(x, labels, list(range(shapes))) if shapes else np.zeros((0, dims))
    distances = np.zeros(len(x))
    radii = np.zeros(shapes)
    for i in range(shapes):
        rows = np.flatnonzero(labels == i)
        distances[rows] = np.clip(1.0 - x[rows] @ cents[i], 0.0, 2.0)
        radii[i] = RADIUS_SLACK * float(distances[rows].max())
    return Fit(FittedModel(embedder, cents, radii), labels, distances, shapes)


def assign(model: FittedModel, texts: Sequence[str]) -> tuple[NDArray[np.int64], Matrix]:
    """Shape of each text (-1: unassigned) and its cosine distance to that shape's centroid.

    A text joins the nearest centroid whose assignment radius holds it; one outside every
    radius is unassigned (its distance is 0).
    """
    if not len(model.centroids):
        return np.full(len(texts), -1, dtype=np.int64), np.zeros(len(texts))
    x = _embed(model.embedder, texts)
    labels, dist = nearest(x, model.centroids, model.radii)
    picked = dist[np.arange(len(x)), np.maximum(labels, 0)]
    return labels, np.where(labels >= 0, np.clip(picked, 0.0, 2.0), 0.0)


@dataclass
class Tally:
    """One shape's members as they stream by: counts, ids and bounded samples of examples.

    Attributes:
        seed: Seed of the exemplar and term samples.
        exemplar_cap: Exemplars kept (a seeded bottom-k of members by hash).
        term_cap: Member texts kept for the shape's distinctive terms (likewise).
    """

    seed: int
    exemplar_cap: int
    term_cap: int
    size: int = 0
    radius: float = 0.0
    signals: Counter[str] = field(default_factory=Counter)
    members: list[str] = field(default_factory=list)
    # Max-heaps (negated keys) of the smallest (distance, seq), (hash, seq) and (hash, seq).
    _central: list[tuple[float, int, Row]] = field(default_factory=list)
    _exemplars: list[tuple[int, int, Row, float]] = field(default_factory=list)
    _terms: list[tuple[int, int, str]] = field(default_factory=list)

    def add(self, row: Row, distance: float) -> None:
        """Count ``row`` as a member at ``distance`` from the centroid."""
        self.size += 1
        self.radius = max(self.radius, distance)
        self.signals.update(row.signals)
        self.members.append(row.case_id)
        _keep(self._central, (-distance, -row.seq, row), CENTRAL)
        h = seeded_hash(self.seed, row.case_id)
        _keep(self._exemplars, (-h, -row.seq, row, distance), self.exemplar_cap)
        _keep(self._terms, (-h, -row.seq, row.text), self.term_cap)

    def term_texts(self) -> list[str]:
        """The member texts kept for the distinctive terms, in reading order."""
        return [t for _, _, t in sorted(self._terms, key=lambda e: -e[1])]

    def shape(self, failing: int) -> Shape:
        """The shape (id and name set later), ``failing`` being the build's failing count."""
        central = sorted(self._central, key=lambda e: (-e[0], -e[1]))
        exemplars = sorted(self._exemplars, key=lambda e: -e[1])
        return Shape(
            id="shape-00",
            name="",
            named_by="offline",
            terms=[],
            size=self.size,
            share=self.size / failing,
            signals=dict(sorted(self.signals.items())),
            radius=round(self.radius, 6),
            members=sorted(self.members),
            representatives=[_example(r, -d) for d, _, r in central],
            exemplars=[_example(r, d) for _, _, r, d in exemplars],
            situation=json.loads(central[0][2].situation),
        )


def _keep(heap: list[Any], item: tuple[Any, ...], cap: int) -> None:
    """Keep the ``cap`` items with the largest negated key (the smallest key) in ``heap``."""
    if cap <= 0:
        return
    if len(heap) < cap:
        heapq.heappush(heap, item)
    elif item[:2] > heap[0][:2]:
        heapq.heapreplace(heap, item)


def _example(row: Row, distance: float) -> ShapeExample:
    return ShapeExample(
        case_id=row.case_id, session=row.session, text=row.text, distance=round(distance, 6)
    )
