"""`casework shapes build`: failing conversations, scrubbed, embedded, clustered, named, saved."""

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

from casework.errors import UsageError
from casework.llm import client_for, embedder_for
from casework.llm.client import Client
from casework.mining.mine import TraceFormat
from casework.names import check_name
from casework.project import Project
from casework.shapes._cluster import ClusterParams, centroids, cluster
from casework.shapes._model import Shape, ShapeExample, ShapeVersion
from casework.shapes._names import distinctive_terms, llm_name, offline_name
from casework.shapes._saturation import Saturation, saturation
from casework.shapes._store import read_versions, save_shapes, shapes_content
from casework.shapes._traffic import Failing, read_failing

Namer = Literal["offline", "llm"]
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
    """

    as_of: date | None = None
    names: Namer = "offline"
    cluster: ClusterParams = field(default_factory=ClusterParams)
    exemplar_cap: int = 40
    trace_format: TraceFormat | None = None
    message: str | None = None
    now: datetime | None = None
    environ: Mapping[str, str] | None = None


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
        unshaped: Failing conversations in clusters smaller than the minimum shape size.
        llm_fallbacks: Shapes the LLM did not name in one sentence (named offline instead).
        key_fingerprint: Fingerprint of the pseudonym key used.
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


def _check(options: BuildOptions) -> None:
    p = options.cluster
    if not 0 < p.threshold < 2:
        raise UsageError(
            f"must be between 0 and 2 (cosine distance). Got {p.threshold}.", param="threshold"
        )
    if p.min_size < 2:
        raise UsageError(f"must be at least 2. Got {p.min_size}.", param="min_size")
    if p.sample < 100:
        raise UsageError(f"must be at least 100. Got {p.sample}.", param="sample")


def _examples(failing: Failing, idx: Sequence[int], dist: NDArray[Any]) -> list[ShapeExample]:
    return [
        ShapeExample(
            case_id=failing.case_ids[i],
            session=failing.sessions[i],
            text=failing.texts[i],
            distance=round(float(d), 6),
        )
        for i, d in zip(idx, dist, strict=True)
    ]


def _shape(
    failing: Failing, members: NDArray[Any], x: NDArray[Any], cap: int, seed: int
) -> tuple[Shape, NDArray[Any]]:
    """One shape (named later) and its members' texts order, from its member rows."""
    cent = centroids(x[members], np.zeros(len(members), dtype=np.int64), [0])[0]
    dist = np.clip(1.0 - x[members] @ cent, 0.0, 2.0)
    central = np.argsort(dist, kind="stable")
    reps = central[:3]
    rng = np.random.default_rng([seed, len(members), int(members[0])])
    sample = np.sort(rng.choice(len(members), min(cap, len(members)), replace=False))
    signals = Counter(s for i in members for s in failing.signals[i])
    shape = Shape(
        id="shape-00",
        name="",
        named_by="offline",
        terms=[],
        size=len(members),
        share=len(members) / len(failing.texts),
        signals=dict(sorted(signals.items())),
        radius=round(float(dist.max()), 6),
        members=sorted(failing.case_ids[i] for i in members),
        representatives=_examples(failing, [int(members[j]) for j in reps], dist[reps]),
        exemplars=_examples(failing, [int(members[j]) for j in sample], dist[sample]),
        situation=json.loads(failing.situations[int(members[central[0]])]),
    )
    return shape, central


def _name_all(
    project: Project,
    failing: Failing,
    shapes: list[Shape],
    member_rows: list[NDArray[Any]],
    namer: Namer,
    seed: int,
) -> tuple[list[Shape], int]:
    rng = np.random.default_rng(seed)
    texts = []
    for rows in member_rows:
        pick = rows if len(rows) <= TERM_SAMPLE else rng.choice(rows, TERM_SAMPLE, replace=False)
        texts.append([failing.texts[i] for i in pick])
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

    Raises:
        ConfigError: No usable pseudonym key, or a misconfigured embedder or model.
        UsageError: Bad parameters or paths, or no failing conversation.
        InputErrors: Bad trace records (nothing is written).
        LLMError: With ``names="llm"``, the model could not be reached (nothing is written).
    """
    opts = options or BuildOptions()
    check_name(name, "shape set name")
    _check(opts)
    now = opts.now or datetime.now(UTC)
    as_of = opts.as_of or now.date()
    versions = read_versions(project, name)
    failing = read_failing(
        project,
        paths,
        trace_format=opts.trace_format,
        as_of=as_of,
        environ=opts.environ,
        on_progress=on_progress,
        scrubbed_as=(f"shape set '{name}'", versions[-1].key_fingerprint) if versions else None,
    )
    embedder = embedder_for(project)
    x = np.asarray(embedder.embed(failing.texts), dtype=np.float64)
    labels = cluster(x, opts.cluster)
    sizes = np.bincount(labels)
    kept = [int(i) for i in np.flatnonzero(sizes >= opts.cluster.min_size)]
    rows = [np.flatnonzero(labels == i) for i in kept]
    drafts = [_shape(failing, r, x, opts.exemplar_cap, opts.cluster.seed)[0] for r in rows]
    shapes, fallbacks = _name_all(project, failing, drafts, rows, opts.names, opts.cluster.seed)
    sat = saturation([int(s) for s in sizes])
    content = shapes_content(shapes).encode("utf-8")
    digest = hashlib.sha256(content).hexdigest()
    shaped = int(sum(s.size for s in shapes))
    changed = not versions or versions[-1].hash != digest
    p = opts.cluster
    version = (
        versions[-1]
        if not changed
        else ShapeVersion(
            number=len(versions) + 1,
            hash=digest,
            created_at=now,
            as_of=as_of,
            message=opts.message or f"shapes build: {', '.join(failing.files)}",
            files=failing.files,
            key_fingerprint=failing.key_fingerprint,
            embedder=embedder.name,
            method={
                "algorithm": "agglomerative",
                "linkage": "average",
                "metric": "cosine",
                "threshold": p.threshold,
                "min_size": p.min_size,
                "sample": p.sample,
                "seed": p.seed,
            },
            conversations=failing.conversations,
            failing=len(failing.texts),
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
        conversations=failing.conversations,
        failing=len(failing.texts),
        after_as_of=failing.after_as_of,
        unshaped=len(failing.texts) - shaped,
        llm_fallbacks=fallbacks,
        key_fingerprint=failing.key_fingerprint,
    )
