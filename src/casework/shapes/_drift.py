"""`casework shapes drift`: new failing traffic against a saved shape set."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from casework.errors import UsageError
from casework.llm import embedder_for
from casework.mining.mine import TraceFormat
from casework.project import Project
from casework.shapes._cluster import (
    RADIUS_SLACK,
    ClusterParams,
    centroids,
    cluster,
    nearest,
    unit,
)
from casework.shapes._model import Shape
from casework.shapes._names import distinctive_terms, offline_name
from casework.shapes._stats import holm, two_proportion_z
from casework.shapes._store import load_shapes
from casework.shapes._traffic import Failing, read_failing


@dataclass(frozen=True)
class DriftOptions:
    """How drift is judged.

    Attributes:
        alpha: Family-wise significance level of the share tests (Holm).
        min_size: Smallest cluster of unassigned traffic reported as an appeared shape
            (default: the shape set's own minimum).
        min_share: Smallest share of the new failing traffic an appeared shape must hold (the
            fringe of a saved shape, a few conversations just outside its radius, is not a new
            shape; measured on the planted weeks in docs/authoring.md).
        trace_format: Format of every file, or ``None`` to detect it per file.
        environ: Environment the pseudonym key is read from (default: the process's).
    """

    alpha: float = 0.05
    min_size: int | None = None
    min_share: float = 0.01
    trace_format: TraceFormat | None = None
    environ: Mapping[str, str] | None = None


@dataclass(frozen=True)
class ShareChange:
    """One saved shape's share of failing traffic, before and now.

    Attributes:
        shape_id: The shape.
        name: Its name.
        old_count: Members when the set was built.
        old_share: ``old_count`` over the build's failing conversations.
        new_count: New failing conversations assigned to it.
        new_share: ``new_count`` over the new failing conversations.
        z: Two-proportion z statistic (new against old).
        p: Two-sided p-value.
        p_holm: Holm-adjusted p-value over every shape of the set.
        significant: ``p_holm`` below alpha.
        vanished: No new conversation falls in it, significantly.
    """

    shape_id: str
    name: str
    old_count: int
    old_share: float
    new_count: int
    new_share: float
    z: float
    p: float
    p_holm: float
    significant: bool
    vanished: bool


@dataclass(frozen=True)
class AppearedShape:
    """A cluster of new failing traffic that no saved shape holds.

    Attributes:
        size: Conversations in it.
        share: ``size`` over the new failing conversations.
        terms: Distinctive terms.
        name: Offline name (terms and most central conversation).
        example: Scrubbed text of its most central conversation.
        case_ids: Draft case ids of its conversations.
    """

    size: int
    share: float
    terms: list[str]
    name: str
    example: str
    case_ids: list[str]


@dataclass(frozen=True)
class DriftReport:
    """New traffic against a shape set.

    Attributes:
        against: Shape set name.
        version: Its version number.
        conversations: New conversations read.
        failing: New failing conversations.
        assigned: Of them, those that fall in a saved shape.
        shares: Every saved shape's share, before and now.
        appeared: Clusters of unassigned traffic of at least the minimum size, largest first.
        alpha: Significance level used.
        key_fingerprint: Fingerprint of the pseudonym key used.
    """

    against: str
    version: int
    conversations: int
    failing: int
    assigned: int
    shares: list[ShareChange]
    appeared: list[AppearedShape]
    alpha: float
    key_fingerprint: str

    @property
    def vanished(self) -> list[ShareChange]:
        """Shapes that stopped occurring."""
        return [s for s in self.shares if s.vanished]

    @property
    def changed(self) -> list[ShareChange]:
        """Shapes still seen whose share changed significantly."""
        return [s for s in self.shares if s.significant and not s.vanished]

    @property
    def drifted(self) -> bool:
        """Whether a shape appeared, vanished or changed share significantly."""
        return bool(self.appeared or self.vanished or self.changed)


def drift(
    project: Project,
    paths: Sequence[Path],
    against: str,
    options: DriftOptions | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> DriftReport:
    """Compare new failing traffic with the saved shape set ``against``.

    The saved exemplars of every shape and the new failing conversations are embedded in one
    call (so an embedder fitted per call, like the offline TF-IDF, puts both in one space). A new
    conversation belongs to the shape with the nearest centroid whose radius holds it (the radius
    is :data:`RADIUS_SLACK` times the farthest exemplar); the rest are clustered as the build
    clustered, and clusters of at least ``min_size`` conversations and ``min_share`` of
    the new failing traffic are appeared shapes. Each shape's share is
    tested (two-proportion z, Holm-corrected); a shape with no new member and a significant
    drop has vanished. Nothing is written.

    Raises:
        UsageError: Unknown shape set, bad ``alpha``, bad paths or no failing conversation.
        InputErrors: Bad trace records or a damaged shape set.
    """
    opts = options or DriftOptions()
    if not 0 < opts.alpha < 1:
        raise UsageError(f"must be between 0 and 1. Got {opts.alpha}.", param="alpha")
    saved = load_shapes(project, against, param="against")
    method = saved.version.method
    min_size = opts.min_size if opts.min_size is not None else int(method.get("min_size", 5))
    if min_size < 2:
        raise UsageError(f"must be at least 2. Got {min_size}.", param="min_size")
    if not 0 <= opts.min_share < 1:
        raise UsageError(f"must be between 0 and 1. Got {opts.min_share}.", param="min_share")
    new = read_failing(
        project,
        paths,
        trace_format=opts.trace_format,
        environ=opts.environ,
        on_progress=on_progress,
        scrubbed_as=(f"shape set '{against}'", saved.version.key_fingerprint),
    )
    exemplars = [e.text for s in saved.shapes for e in s.exemplars]
    owner = np.array([k for k, s in enumerate(saved.shapes) for _ in s.exemplars], dtype=np.int64)
    vectors = unit(
        np.asarray(embedder_for(project).embed([*exemplars, *new.texts]), dtype=np.float64)
    )
    ex, x = vectors[: len(exemplars)], vectors[len(exemplars) :]
    ids = list(range(len(saved.shapes)))
    counts = np.zeros(len(ids), dtype=np.int64)
    assigned = np.full(len(x), -1, dtype=np.int64)
    if ids:
        cents = centroids(ex, owner, ids)
        radii = np.array(
            [RADIUS_SLACK * float((1.0 - ex[owner == k] @ cents[k]).max()) for k in ids]
        )
        assigned, _ = nearest(x, cents, radii)
        counts = np.bincount(assigned[assigned >= 0], minlength=len(ids))
    shares = _shares(saved.shapes, saved.version.failing, counts, len(x), opts.alpha)
    rest = np.flatnonzero(assigned < 0)
    floor = max(min_size, math.ceil(opts.min_share * len(x)))
    appeared = _appeared(new, x, rest, method, floor)
    return DriftReport(
        against=against,
        version=saved.version.number,
        conversations=new.conversations,
        failing=len(x),
        assigned=int((assigned >= 0).sum()),
        shares=shares,
        appeared=appeared,
        alpha=opts.alpha,
        key_fingerprint=new.key_fingerprint,
    )


def _shares(
    shapes: Sequence[Shape], n_old: int, counts: NDArray[Any], n_new: int, alpha: float
) -> list[ShareChange]:
    tests = []
    for shape, count in zip(shapes, counts, strict=True):
        z, p = two_proportion_z(int(count), n_new, shape.size, n_old)
        tests.append((shape, int(count), z, p))
    adjusted = holm([t[3] for t in tests])
    return [
        ShareChange(
            shape_id=shape.id,
            name=shape.name,
            old_count=shape.size,
            old_share=shape.size / n_old,
            new_count=count,
            new_share=count / n_new,
            z=z,
            p=p,
            p_holm=q,
            significant=q < alpha,
            vanished=count == 0 and q < alpha,
        )
        for (shape, count, z, p), q in zip(tests, adjusted, strict=True)
    ]


def _appeared(
    new: Failing, x: NDArray[Any], rest: NDArray[Any], method: Mapping[str, object], min_size: int
) -> list[AppearedShape]:
    if len(rest) < min_size:
        return []
    params = ClusterParams(
        threshold=float(str(method.get("threshold", 0.9))),
        min_size=min_size,
        sample=int(str(method.get("sample", 4000))),
        seed=int(str(method.get("seed", 0))),
    )
    labels = cluster(x[rest], params)
    sizes = np.bincount(labels)
    kept = [int(i) for i in np.flatnonzero(sizes >= min_size)]
    if not kept:
        return []
    groups = [rest[labels == i] for i in kept]
    terms = distinctive_terms([[new.texts[i] for i in g] for g in groups])
    out = []
    for group, words in zip(groups, terms, strict=True):
        cent = centroids(x[group], np.zeros(len(group), dtype=np.int64), [0])[0]
        central = int(group[int(np.argmin(1.0 - x[group] @ cent))])
        out.append(
            AppearedShape(
                size=len(group),
                share=len(group) / len(x),
                terms=words,
                name=offline_name(words, new.openings[central]),
                example=new.texts[central],
                case_ids=sorted(new.case_ids[i] for i in group),
            )
        )
    return out
