"""`casework shapes author`: generate cases for one shape along one axis, reject by rule, queue the rest.

The generator (`[models.generator]`; the scripted client offline) is shown the shape, its most
central scrubbed conversation, the agent's declared tools and the axis, and returns one JSON
:class:`~casework.authoring._candidate.Candidate` per request. Every reply is screened
(:func:`~casework.authoring._candidate.screen`), then compared with the dataset's cases, the
open generated-case items and the run's earlier candidates (cosine distance of their embedded
text). Survivors become `generated-case` review items; every run appends one
:class:`AuthoringRun` line to `shapes/<set>.authored.jsonl`, which `casework shapes report` reads.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from casework.atomic import atomic_write_text
from casework.authoring._candidate import (
    AXES,
    REASONS,
    Brief,
    Rejection,
    screen,
)
from casework.dataset import declared_tools, load_dataset
from casework.dataset.jsonl import read_records
from casework.errors import UsageError
from casework.labelling.timings import GENERATED_CASE_KIND
from casework.llm import Embedder, Message, client_for, embedder_for
from casework.llm.client import Client
from casework.names import name_problem
from casework.project import Project
from casework.review import add_items, generated_case_item, list_tasks
from casework.schema import Case
from casework.shapes import Shape, load_shapes
from casework.shapes._store import shapes_file
from casework.shapes._text import case_text

#: Version of the generation prompt, recorded on every authored case.
PROMPT_VERSION = "author-1"
#: Cosine distance at or under which a candidate is a near duplicate.
MIN_DISTANCE = 0.1
#: File next to the shape set that logs every authoring run.
RUNS_SUFFIX = ".authored.jsonl"

AXIS_BRIEFS = {
    "missing-or-malformed-input": "the user leaves out or garbles something the task needs",
    "two-defensible-readings": "the request can reasonably be read two ways",
    "mid-task-goal-change": "the user changes what they want part way through",
    "stale-tool-state": "a tool returns stale or inconsistent state",
    "adversarial-retrieved-content": "retrieved data holds instructions aimed at the agent",
    "permission-absent": "the user lacks the permission the task needs (unsatisfiable)",
    "referent-absent": "what the user refers to does not exist (unsatisfiable)",
    "contradictory": "the request contradicts itself (unsatisfiable)",
    "outside-policy": "the request is outside policy (unsatisfiable)",
    "underdetermined": "the right action is one clarifying question (unsatisfiable)",
}

SYSTEM_PROMPT = """Task: author one evaluation case for a tool-using support agent.
Reply with one JSON object only:
{"situation": {"goal": ..., "turns": [...], "fixtures": [...], "state": {...}},
 "outcome": "<the correct outcome, one sentence>",
 "expected": "resolve" | "clarify" | "refuse" | "escalate",
 "outcome_is_state": <true when the correct outcome is a change of the data state>,
 "required_tools": [...], "forbidden_tools": [...],
 "oracle": {"state_assertions": [...]} | {"rubric": "..."} | {"human_only": true}}
Use only the tools listed. Propose state assertions whenever the outcome is a state, else a
rubric; never write the answer key."""


class AuthoringRun(BaseModel):
    """One line of `shapes/<set>.authored.jsonl`: what one `casework shapes author` run did."""

    model_config = ConfigDict(extra="forbid")

    created_at: datetime
    """When the run ended (UTC)."""
    shape_set: str
    """Shape set name."""
    shape: str
    """Shape id."""
    axis: str
    """Axis generated along."""
    dataset: str
    """Dataset the accepted candidates would join."""
    model: str
    """Generator model."""
    prompt_version: str
    """Generation prompt version."""
    generated: int
    """Candidates asked for."""
    queued: list[str] = Field(default_factory=list)
    """Case ids of the candidates that passed the rules and were queued for review."""
    rejected: dict[str, int] = Field(default_factory=dict)
    """Rejected candidates per reason."""


@dataclass(frozen=True)
class AuthorOptions:
    """What `casework shapes author` asks for.

    Attributes:
        shapes: Shape set name.
        shape: Shape id in the set.
        axis: One of :data:`AXES`.
        n: Candidates to generate.
        dataset: Dataset the cases would join (default: the shape set's name).
        slice: Slice of the cases (default: the shape set's name).
        seed: Seed sent with each request (candidate ``i`` gets ``seed + i``).
        frozen: Mark the cases frozen (never exported to prompts or training data).
        min_distance: Cosine distance at or under which a candidate is a near duplicate.
    """

    shapes: str
    shape: str
    axis: str
    n: int = 5
    dataset: str | None = None
    slice: str | None = None
    seed: int = 0
    frozen: bool = False
    min_distance: float = MIN_DISTANCE


@dataclass(frozen=True)
class AuthorResult:
    """What one run generated, queued and rejected.

    Attributes:
        run: The logged run.
        queued: Review item ids of the queued candidates, in candidate order.
        cases: The queued cases.
        rejections: Every rejected candidate with its reason.
    """

    run: AuthoringRun
    queued: tuple[int, ...]
    cases: tuple[Case, ...]
    rejections: tuple[Rejection, ...] = field(default=())

    def as_json(self) -> dict[str, object]:
        """JSON-ready data."""
        return {
            **self.run.model_dump(mode="json"),
            "items": list(self.queued),
            "rejections": [
                {"candidate": r.index, "reason": r.reason, "detail": r.detail}
                for r in self.rejections
            ],
        }


def _check_options(options: AuthorOptions) -> None:
    if options.axis not in AXES:
        raise UsageError(
            f"must be one of {', '.join(AXES)}. Got '{options.axis}'; nothing was written.",
            param="axis",
        )
    if options.n < 1:
        raise UsageError(f"must be at least 1. Got {options.n}.", param="n")
    if not 0 <= options.min_distance < 1:
        raise UsageError(
            f"must be at least 0 and under 1. Got {options.min_distance}.", param="min_distance"
        )


def prompt_messages(shape: Shape, axis: str, tools: Sequence[str], i: int, n: int) -> list[Message]:
    """The messages of candidate ``i`` of ``n`` (what a scripted reply file matches on)."""
    trace = shape.representatives[0]
    user = "\n".join(
        [
            "Task: author",
            f"Shape: {shape.id} ({shape.name})",
            f"Axis: {axis} ({AXIS_BRIEFS[axis]})",
            "The fixed axes: " + "; ".join(f"{a} ({AXIS_BRIEFS[a]})" for a in AXES),
            f"Tools: {', '.join(tools)}",
            f"Candidate: {i} of {n}",
            f"Representative trace ({trace.case_id}):",
            trace.text[:2000],
            "Its situation:",
            json.dumps(shape.situation, sort_keys=True)[:4000],
        ]
    )
    return [Message("system", SYSTEM_PROMPT), Message("user", user)]


def _open_candidates(project: Project, dataset: str) -> list[Case]:
    tasks = list_tasks(project, kind=GENERATED_CASE_KIND, status="open", dataset=dataset)
    return [Case.model_validate(t.payload["case"]) for t in tasks]


def _near_duplicates(
    embedder: Embedder, known: Sequence[Case], fresh: Sequence[Case], min_distance: float
) -> list[float | None]:
    """For each fresh case in order: the distance to its nearest earlier text when too close."""
    if not fresh:
        return []
    texts = [case_text(c) for c in (*known, *fresh)]
    matrix = np.asarray(embedder.embed(texts), dtype=np.float64)
    out: list[float | None] = []
    kept = list(range(len(known)))
    for j in range(len(known), len(texts)):
        nearest = max(0.0, 1.0 - float(np.max(matrix[kept] @ matrix[j]))) if kept else 1.0
        out.append(nearest if nearest <= min_distance else None)
        kept.append(j)  # an earlier candidate counts, accepted or not
    return out


def _append_run(project: Project, run: AuthoringRun) -> None:
    path = shapes_file(project, run.shape_set).with_name(run.shape_set + RUNS_SUFFIX)
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    line = json.dumps(run.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    atomic_write_text(path, old + line + "\n")


def read_runs(project: Project, shape_set: str) -> list[AuthoringRun]:
    """Every logged authoring run of a shape set, oldest first (none when never authored).

    Raises:
        InputErrors: A malformed line.
    """
    path = shapes_file(project, shape_set).with_name(shape_set + RUNS_SUFFIX)
    if not path.exists():
        return []
    return read_records(path, AuthoringRun, shown=project.relative(path)).records


def author(
    project: Project,
    options: AuthorOptions,
    *,
    client: Client | None = None,
    embedder: Embedder | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> AuthorResult:
    """Generate ``options.n`` candidates, reject by rule, queue the rest as review items.

    Nothing is written until every candidate is generated and screened: a failed request, an
    unknown shape or axis leaves the queue and the run log as they were.

    Raises:
        UsageError: Unknown shape set, shape, axis or dataset; bad counts.
        LLMError: The generator could not be reached.
    """
    _check_options(options)
    shape_set = load_shapes(project, options.shapes, param="shapes")
    shape = shape_set.shape(options.shape)
    dataset = options.dataset or shape_set.name
    slice_name = options.slice or shape_set.name
    if name_problem(slice_name) is not None:
        raise UsageError(
            f"a slice name {name_problem(slice_name)}. Got '{slice_name}'.", param="slice"
        )
    existing = load_dataset(project, dataset).cases  # an unknown dataset fails before a request
    own = client is None
    client = client or client_for(project, "generator")
    try:
        brief = Brief(
            options.shapes,
            shape.id,
            shape.representatives[0].case_id,
            options.axis,
            dataset,
            slice_name,
            client.model,
            PROMPT_VERSION,
            client.family,
            options.frozen,
        )
        return _generate(project, options, client, brief, shape, existing, embedder, now)
    finally:
        if own:
            client.close()


def _generate(
    project: Project,
    options: AuthorOptions,
    client: Client,
    brief: Brief,
    shape: Shape,
    existing: Sequence[Case],
    embedder: Embedder | None,
    now: Callable[[], datetime],
) -> AuthorResult:
    tools = sorted(declared_tools(project))
    screened = []
    for i in range(1, options.n + 1):
        reply = client.complete(
            prompt_messages(shape, options.axis, tools, i, options.n), seed=options.seed + i
        )
        screened.append(screen(i, reply.text, brief, tools))
    return _queue(project, brief, options, screened, existing, embedder, now())


def _queue(
    project: Project,
    brief: Brief,
    options: AuthorOptions,
    screened: Sequence[tuple[Case, str] | Rejection],
    existing: Sequence[Case],
    embedder: Embedder | None,
    when: datetime,
) -> AuthorResult:
    rejections = [s for s in screened if isinstance(s, Rejection)]
    passed = [(i + 1, s) for i, s in enumerate(screened) if not isinstance(s, Rejection)]
    known = [*existing, *_open_candidates(project, brief.dataset)]
    fresh = [case for _, (case, _) in passed]
    distances = _near_duplicates(
        embedder or embedder_for(project), known, fresh, options.min_distance
    )
    keep: list[tuple[Case, str]] = []
    seen: set[str] = {c.id for c in known}
    for (index, (case, sentence)), distance in zip(passed, distances, strict=True):
        if distance is not None or case.id in seen:
            gap = 0.0 if distance is None else distance
            rejections.append(
                Rejection(index, "near_duplicate", f"within cosine distance {gap:.3f} of a case")
            )
            continue
        seen.add(case.id)
        keep.append((case, sentence))
    rejections.sort(key=lambda r: r.index)
    items = [
        generated_case_item(
            brief.dataset,
            case,
            source=f"casework author ({brief.model}, prompt {brief.prompt_version})",
            note=f"{brief.shape_set}/{brief.shape}, axis {brief.axis}: {sentence}",
            record_review=True,
        )
        for case, sentence in keep
    ]
    added = add_items(project, items, now=when) if items else None
    counts = Counter(r.reason for r in rejections)
    run = AuthoringRun(
        created_at=when,
        shape_set=brief.shape_set,
        shape=brief.shape,
        axis=brief.axis,
        dataset=brief.dataset,
        model=brief.model,
        prompt_version=brief.prompt_version,
        generated=options.n,
        queued=[case.id for case, _ in keep],
        rejected={r: counts[r] for r in REASONS if counts[r]},
    )
    _append_run(project, run)
    return AuthorResult(
        run,
        added.created + added.existing if added else (),
        tuple(c for c, _ in keep),
        tuple(rejections),
    )
