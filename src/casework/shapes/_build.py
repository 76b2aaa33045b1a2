"""`casework shapes build`: failing conversations, scrubbed, embedded, clustered, named, saved.

Up to the fit sample (`[shapes] sample_size`) every failing conversation is clustered at once;
above it the embedder and the clustering are fitted on a seeded sample and the rest are assigned
in streaming batches (:mod:`casework.shapes._stream`), on Ray Data with ``engine="ray"``.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from casework.atomic import PROJECT_TMP
from casework.errors import InputErrors, Problem, UsageError
from casework.llm import client_for, embedder_for
from casework.llm.base import Embedder
from casework.llm.client import Client
from casework.llm.embed import TfidfEmbedder
from casework.mining.mine import TraceFormat
from casework.names import check_name
from casework.project import Project
from casework.shapes._cluster import RADIUS_SLACK, ClusterParams, centroids, cluster
from casework.shapes._model import Shape, ShapeExample, ShapeVersion
from casework.shapes._names import distinctive_terms, llm_name, offline_name
from casework.shapes._sample import Row, Sampler, rows_of
from casework.shapes._saturation import Saturation, saturation
from casework.shapes._store import read_versions, save_shapes, shapes_content
from casework.shapes._stream import Fit, Tally, assign, fit
from casework.shapes._traffic import Traffic, no_failing, open_traffic

Namer = Literal["offline", "llm"]
Engine = Literal["local", "ray"]
#: Member texts per shape the c-TF-IDF terms are computed from (a seeded sample above it).
TERM_SAMPLE = 2000


@dataclass(frozen=True)
class BuildOptions:
    """How `casework shapes build` finds and names shapes.

    Attributes:
        as_of: Leave out conversations that started after this UTC date (default: today).
        names: `offline` (distinctive terms and the most central conversation) or `llm` (one
            sentence from the configured generator model; offline when its answer is not one).
        cluster: Clustering parameters (threshold, minimum shape size, sample, seed).
        exemplar_cap: Members sampled per shape for drift.
        trace_format: Format of every file, or ``None`` to detect it per file.
        message: Version message (default: names the files).
        now: Build time (injected by tests; default: now, UTC).
        environ: Environment the pseudonym key is read from (default: the process's).
        sample_size: Failing conversations the embedder and the clustering are fitted on; above
            it the rest are assigned in batches (default: `[shapes] sample_size`).
        batch_size: Conversations embedded and assigned at once above the sample (default:
            `[shapes] batch_size`); memory follows it, not the number of traces.
        engine: Where reading, scrubbing, embedding and assignment run: `local` (forked
            workers) or `ray` (Ray Data, extra `casework[ray]`); the shapes are the same.
    """

    as_of: date | None = None
    names: Namer = "offline"
    cluster: ClusterParams = field(default_factory=ClusterParams)
    exemplar_cap: int = 40
    trace_format: TraceFormat | None = None
    message: str | None = None
    now: datetime | None = None
    environ: Mapping[str, str] | None = None
    sample_size: int | None = None
    batch_size: int | None = None
    engine: Engine = "local"


@dataclass(frozen=True)
class Sampling:
    """How a build above the fit sample went.

    Attributes:
        sample_size: The fit sample's size setting.
        batch_size: Conversations embedded and assigned at once.
        fitted: Failing conversations the embedder and the clustering were fitted on.
        assigned: Other failing conversations that joined a shape.
        unassigned: Other failing conversations outside every shape's assignment radius.
    """

    sample_size: int
    batch_size: int
    fitted: int
    assigned: int
    unassigned: int


@dataclass(frozen=True)
class ShapeBuild:
    """What a build found.

    Attributes:
        name: Shape set name.
        shapes: The shapes, largest first.
        version: The version the set is at (new, or the latest when nothing changed).
        changed: Whether the build added a version.
        saturation: Good–Turing unseen share.
        conversations: Conversations read.
        failing: Failing conversations clustered.
        after_as_of: Conversations left out for starting after the as-of date.
        unshaped: Failing conversations in no shape: in clusters smaller than the minimum shape
            size, or (above the fit sample) outside every shape's radius.
        llm_fallbacks: Shapes the LLM did not name in one sentence (named offline instead).
        key_fingerprint: Fingerprint of the pseudonym key used.
        sampling: Above the fit sample: what was fitted and assigned (``None``: all clustered).
    """

    name: str
    shapes: list[Shape]
    version: ShapeVersion
    changed: bool
    saturation: Saturation
    conversations: int
    failing: int
    after_as_of: int
    unshaped: int
    llm_fallbacks: int
    key_fingerprint: str
    sampling: Sampling | None = None


def _check(options: BuildOptions, sample_size: int, batch_size: int) -> None:
    p = options.cluster
    if not 0 < p.threshold < 2:
        raise UsageError(
            f"must be between 0 and 2 (cosine distance). Got {p.threshold}.", param="threshold"
        )
    if p.min_size < 2:
        raise UsageError(f"must be at least 2. Got {p.min_size}.", param="min_size")
    if p.sample < 100:
        raise UsageError(f"must be at least 100. Got {p.sample}.", param="sample")
    if sample_size < 100:
        raise UsageError(f"must be at least 100. Got {sample_size}.", param="sample_size")
    if batch_size < 1:
        raise UsageError(f"must be at least 1. Got {batch_size}.", param="batch_size")
    if options.engine not in ("local", "ray"):
        raise UsageError(f"must be 'local' or 'ray'. Got {options.engine!r}.", param="engine")


def _examples(rows: Sequence[Row], idx: Sequence[int], dist: NDArray[Any]) -> list[ShapeExample]:
    return [
        ShapeExample(
            case_id=rows[i].case_id,
            session=rows[i].session,
            text=rows[i].text,
            distance=round(float(d), 6),
        )
        for i, d in zip(idx, dist, strict=True)
    ]


def _shape(
    rows: Sequence[Row], members: NDArray[Any], x: NDArray[Any], cap: int, seed: int
) -> Shape:
    """One shape (named later) from its member rows."""
    cent = centroids(x[members], np.zeros(len(members), dtype=np.int64), [0])[0]
    dist = np.clip(1.0 - x[members] @ cent, 0.0, 2.0)
    central = np.argsort(dist, kind="stable")
    reps = central[:3]
    rng = np.random.default_rng([seed, len(members), int(members[0])])
    sample = np.sort(rng.choice(len(members), min(cap, len(members)), replace=False))
    signals = Counter(s for i in members for s in rows[i].signals)
    return Shape(
        id="shape-00",
        name="",
        named_by="offline",
        terms=[],
        size=len(members),
        share=len(members) / len(rows),
        signals=dict(sorted(signals.items())),
        radius=round(float(dist.max()), 6),
        members=sorted(rows[i].case_id for i in members),
        representatives=_examples(rows, [int(members[j]) for j in reps], dist[reps]),
        exemplars=_examples(rows, [int(members[j]) for j in sample], dist[sample]),
        situation=json.loads(rows[int(members[central[0]])].situation),
    )


def _name_all(
    project: Project, shapes: list[Shape], texts: list[list[str]], namer: Namer
) -> tuple[list[Shape], int]:
    """Number and name the shapes (largest first) from each one's member texts."""
    terms = distinctive_terms(texts)
    client: Client | None = client_for(project, "generator") if namer == "llm" else None
    out, fallbacks = [], 0
    for number, (shape, words) in enumerate(zip(shapes, terms, strict=True), start=1):
        central = shape.representatives[0]
        turns = shape.situation.get("turns")
        first = (
            next(
                (
                    t.get("content", "")
                    for t in turns
                    if isinstance(t, dict) and t.get("role") == "user"
                ),
                central.text,
            )
            if isinstance(turns, list)
            else central.text
        )
        name = offline_name(words, str(first))
        by: Namer = "offline"
        if client is not None:
            got = llm_name(client, words, [r.text for r in shape.representatives])
            if got is None:
                fallbacks += 1
            else:
                name, by = got, "llm"
        out.append(
            replace_shape(shape, id=f"shape-{number:02d}", name=name, named_by=by, terms=words)
        )
    return out, fallbacks


def replace_shape(shape: Shape, **changes: Any) -> Shape:
    """A copy of ``shape`` with fields changed (validated)."""
    return Shape.model_validate({**shape.model_dump(), **changes})


@dataclass(frozen=True)
class _Found:
    """Shapes found (largest first, unnamed), their term texts and the clusters' sizes."""

    shapes: list[Shape]
    texts: list[list[str]]
    sizes: list[int]
    sampling: Sampling | None = None


def _all_at_once(rows: list[Row], embedder: Embedder, opts: BuildOptions) -> _Found:
    """Every failing conversation embedded and clustered at once."""
    x = np.asarray(embedder.embed([r.text for r in rows]), dtype=np.float64)
    labels = cluster(x, opts.cluster)
    sizes = np.bincount(labels)
    kept = [int(i) for i in np.flatnonzero(sizes >= opts.cluster.min_size)]
    members = [np.flatnonzero(labels == i) for i in kept]
    shapes = [_shape(rows, m, x, opts.exemplar_cap, opts.cluster.seed) for m in members]
    rng = np.random.default_rng(opts.cluster.seed)
    texts = []
    for m in members:
        pick = m if len(m) <= TERM_SAMPLE else rng.choice(m, TERM_SAMPLE, replace=False)
        texts.append([rows[i].text for i in pick])
    return _Found(shapes, texts, [int(v) for v in sizes])


def _sampled(sampler: Sampler, embedder: Embedder, opts: BuildOptions, batch_size: int) -> _Found:
    """Fit on the sample, then assign the spilled conversations batch by batch."""
    rows = sampler.sample()
    fitted: Fit = fit(embedder, [r.text for r in rows], opts.cluster)
    seed = opts.cluster.seed
    tallies = [Tally(seed, opts.exemplar_cap, TERM_SAMPLE) for _ in range(fitted.shapes)]
    for row, label, distance in zip(rows, fitted.labels, fitted.distances, strict=True):
        if label < fitted.shapes:
            tallies[label].add(row, float(distance))
    batches = sampler.spilled()
    if opts.engine == "ray" and isinstance(embedder, TfidfEmbedder):
        from casework.shapes._ray import ray_assign  # here: Ray is imported only for it

        results = ray_assign(fitted.model, batches, batch_size)
    else:  # a model-server embedder is called from here: the server is what runs in parallel
        results = ((b, *assign(fitted.model, [r.text for r in b])) for b in batches)
    assigned = unassigned = 0
    for batch, labels, dist in results:
        for row, label, distance in zip(batch, labels, dist, strict=True):
            if label >= 0:
                tallies[label].add(row, float(distance))
                assigned += 1
            else:
                unassigned += 1
    order = sorted(range(len(tallies)), key=lambda i: -tallies[i].size)
    return _Found(
        [tallies[i].shape(sampler.seen) for i in order],
        [tallies[i].term_texts() for i in order],
        [int(v) for v in np.bincount(fitted.labels)],
        Sampling(sampler.k, batch_size, len(rows), assigned, unassigned),
    )


@dataclass
class _Read:
    """Counts of a streamed reading."""

    conversations: int = 0
    after_as_of: int = 0


def _read_into(
    traffic: Traffic,
    sampler: Sampler,
    engine: Engine,
    on_progress: Callable[[int, int], None] | None,
) -> _Read:
    """Stream every file's failing conversations into ``sampler``; raise every bad record."""
    if engine == "ray":
        from casework.shapes._ray import ray_parts  # here: Ray is imported only for it

        parts = ray_parts(traffic)
    else:
        parts = traffic.parts()
    read = _Read()
    problems: list[Problem] = []
    for index, (part, found) in enumerate(parts):
        read.conversations += part.conversations
        read.after_as_of += part.after_as_of
        problems.extend(found)
        for row in rows_of(part, index):
            sampler.add(row)
        if on_progress is not None:
            on_progress(index + 1, len(traffic.files))
    InputErrors.raise_if_any(problems)
    if not sampler.seen:
        raise no_failing(read.conversations, "traces")
    return read


def build_shapes(
    project: Project,
    paths: Sequence[Path],
    name: str,
    options: BuildOptions | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> ShapeBuild:
    """Find the failure shapes of the traces at ``paths`` and save them as shape set ``name``.

    Failing conversations (mining's failure signals) are scrubbed as `casework mine` scrubs
    them, embedded with the configured embedder, clustered (:func:`cluster`: agglomerative,
    average linkage, cosine distance threshold; the number of clusters is found), named, and
    saved to `shapes/<name>.jsonl` with a new version when the shapes changed.

    Above ``sample_size`` failing conversations, the embedder (TF-IDF vocabulary and SVD) and
    the clustering are fitted on a seeded sample (the ``sample_size`` conversations with the
    smallest seeded hash of their case id) and every other one is embedded with the fitted
    model in batches of ``batch_size`` and joins the nearest shape centroid whose radius holds
    it, :data:`RADIUS_SLACK` times the shape's largest sample-member distance (outside every
    radius it stays unassigned, in no shape). Only the sample and one batch are in memory; the
    others wait, scrubbed, in an anonymous temporary file. Saturation is then the sample's.

    Raises:
        ConfigError: No usable pseudonym key, or a misconfigured embedder or model.
        UsageError: Bad parameters or paths, or no failing conversation.
        InputErrors: Bad trace records (nothing is written).
        LLMError: With ``names="llm"``, the model could not be reached (nothing is written).
    """
    opts = options or BuildOptions()
    check_name(name, "shape set name")
    settings = project.config.shapes
    sample_size = opts.sample_size if opts.sample_size is not None else settings.sample_size
    batch_size = opts.batch_size if opts.batch_size is not None else settings.batch_size
    _check(opts, sample_size, batch_size)
    now = opts.now or datetime.now(UTC)
    as_of = opts.as_of or now.date()
    versions = read_versions(project, name)
    traffic = open_traffic(
        project,
        paths,
        trace_format=opts.trace_format,
        as_of=as_of,
        environ=opts.environ,
        scrubbed_as=(f"shape set '{name}'", versions[-1].key_fingerprint) if versions else None,
    )
    embedder = embedder_for(project)
    spill = project.root / PROJECT_TMP
    with Sampler(sample_size, opts.cluster.seed, batch_size, spill) as sampler:
        read = _read_into(traffic, sampler, opts.engine, on_progress)
        if sampler.seen > sampler.k:
            found = _sampled(sampler, embedder, opts, batch_size)
        else:
            found = _all_at_once(sampler.sample(), embedder, opts)
    failing = sampler.seen
    shapes, fallbacks = _name_all(project, found.shapes, found.texts, opts.names)
    sat = saturation(found.sizes)
    content = shapes_content(shapes).encode("utf-8")
    digest = hashlib.sha256(content).hexdigest()
    shaped = int(sum(s.size for s in shapes))
    changed = not versions or versions[-1].hash != digest
    p = opts.cluster
    method: dict[str, float | int | str] = {
        "algorithm": "agglomerative",
        "linkage": "average",
        "metric": "cosine",
        "threshold": p.threshold,
        "min_size": p.min_size,
        "sample": p.sample,
        "seed": p.seed,
    }
    if found.sampling is not None:
        method |= {
            "fit_sample": found.sampling.fitted,
            "assignment": f"nearest centroid within {RADIUS_SLACK} x its sample radius",
        }
    version = (
        versions[-1]
        if not changed
        else ShapeVersion(
            number=len(versions) + 1,
            hash=digest,
            created_at=now,
            as_of=as_of,
            message=opts.message or f"shapes build: {', '.join(traffic.shown)}",
            files=traffic.shown,
            key_fingerprint=traffic.key_fingerprint,
            embedder=embedder.name,
            method=method,
            conversations=read.conversations,
            failing=failing,
            shaped=shaped,
            singletons=sat.singletons,
            unseen_share=round(sat.unseen_share, 6),
            shapes=len(shapes),
        )
    )
    if changed:
        save_shapes(project, name, shapes, version)
    return ShapeBuild(
        name=name,
        shapes=shapes,
        version=version,
        changed=changed,
        saturation=sat,
        conversations=read.conversations,
        failing=failing,
        after_as_of=read.after_as_of,
        unshaped=failing - shaped,
        llm_fallbacks=fallbacks,
        key_fingerprint=traffic.key_fingerprint,
        sampling=found.sampling,
    )
