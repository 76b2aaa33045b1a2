"""Clustering with the number of clusters found: agglomerative under a distance threshold.

Average linkage, cosine distance; above :data:`SAMPLE` points a seeded sample is clustered, the
rest assigned to the nearest cluster within its radius and the leftovers clustered in turn.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Matrix = NDArray[np.float64]
Labels = NDArray[np.int64]

#: Points clustered directly; above this a sample of this size is (memory grows as its square).
SAMPLE = 4000
#: A sample cluster takes the rows within this many times its sample radius (measured on the
#: planted traces, docs/authoring.md: 1.0 leaves same-shape rows out, 1.25 absorbs one-off rows).
RADIUS_SLACK = 1.1


@dataclass(frozen=True)
class ClusterParams:
    """How clusters are found.

    Attributes:
        threshold: Average-linkage cosine distance at which merging stops.
        min_size: Smallest cluster that counts as a shape.
        sample: Points clustered at once (see :data:`SAMPLE`).
        seed: Seed of the sample.
    """

    threshold: float = 0.9
    min_size: int = 5
    sample: int = SAMPLE
    seed: int = 0


def _agglomerative(x: Matrix, threshold: float) -> Labels:
    if len(x) == 1:
        return np.zeros(1, dtype=np.int64)
    from sklearn.cluster import AgglomerativeClustering

    model = AgglomerativeClustering(
        n_clusters=None, metric="cosine", linkage="average", distance_threshold=threshold
    )
    return np.asarray(model.fit_predict(x), dtype=np.int64)


def unit(x: Matrix) -> Matrix:
    """Rows scaled to unit length (zero rows stay zero)."""
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


def centroids(x: Matrix, labels: Labels, ids: list[int]) -> Matrix:
    """Unit mean vector of each cluster id in ``ids``."""
    return unit(np.vstack([x[labels == i].mean(axis=0) for i in ids]))


def nearest(x: Matrix, cents: Matrix, radii: NDArray[np.float64]) -> tuple[Labels, Matrix]:
    """Index of the nearest centroid whose radius holds the row (-1: none), and all distances."""
    dist = 1.0 - x @ cents.T
    within = np.where(dist <= radii[None, :] + 1e-9, dist, np.inf)
    best = within.argmin(axis=1)
    ok = np.isfinite(within[np.arange(len(x)), best])
    return np.where(ok, best, -1).astype(np.int64), dist


def cluster(x: Matrix, params: ClusterParams) -> Labels:
    """A cluster id per row (0 = largest; every row gets one, singletons included).

    At most ``params.sample`` rows are clustered at once: above it a seeded sample is, each
    cluster of at least ``min_size`` sample rows takes every row within its radius (the largest
    distance of its sample members to its centroid), and what is left is clustered the same way.
    """
    x = unit(np.asarray(x, dtype=np.float64))
    labels = _cluster(x, params, np.random.default_rng(params.seed))
    sizes = np.bincount(labels)
    order = np.argsort(-sizes, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[labels].astype(np.int64)


def _cluster(x: Matrix, params: ClusterParams, rng: np.random.Generator) -> Labels:
    n = len(x)
    if n <= params.sample:
        return _agglomerative(x, params.threshold)
    pick = rng.choice(n, params.sample, replace=False)
    found = _agglomerative(x[pick], params.threshold)
    sizes = np.bincount(found)
    kept = [int(i) for i in np.flatnonzero(sizes >= params.min_size)]
    if not kept:  # no sample cluster is a shape: the sample alone decides, the rest stay apart
        labels = np.arange(n, dtype=np.int64) + int(found.max()) + 1
        labels[pick] = found
        return labels
    cents = centroids(x[pick], found, kept)
    radii = np.array(
        [
            RADIUS_SLACK * float((1.0 - x[pick][found == i] @ c).max())
            for i, c in zip(kept, cents, strict=True)
        ]
    )
    assigned, _ = nearest(x, cents, radii)
    rest = np.flatnonzero(assigned < 0)
    labels = assigned.copy()
    if len(rest):
        labels[rest] = _cluster(x[rest], params, rng) + len(kept)
    return labels
