"""The file formats of a shape set: `shapes/<name>.jsonl` (one shape a line) and its version log."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class _Record(BaseModel):
    # The docstring under each field becomes its description, so the JSON Schema of a shape
    # record (`casework shapes show NAME SHAPE --format json` prints one) documents every field.
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class ShapeExample(_Record):
    """One member conversation of a shape, scrubbed, as the clusterer read it."""

    case_id: str
    """Id its draft case would have (`mined-<pseudonym>`), as `casework mine` names it."""
    session: str
    """Keyed pseudonym of the production session (`session_…`)."""
    text: str
    """The scrubbed text that was embedded (customer and agent turns, tool calls, tool errors)."""
    distance: float
    """Cosine distance to the shape's centroid when the set was built."""


class Shape(_Record):
    """One failure shape: a cluster of failing conversations, named.

    The first of ``representatives`` is the most central member; ``situation`` is its scrubbed
    draft situation (what generation starts from). ``exemplars`` are a seeded random sample of
    members: drift re-embeds them next to new traffic, so any embedder (even one fitted per call)
    compares like with like.
    """

    id: str
    """`shape-01`, `shape-02`… by size, largest first (stable only within one version)."""
    name: str
    """One sentence saying what goes wrong."""
    named_by: Literal["llm", "offline"]
    """Who wrote ``name``: the configured LLM, or the offline namer (distinctive terms)."""
    terms: list[str]
    """Most distinctive terms of the shape (c-TF-IDF), most distinctive first."""
    size: int = Field(ge=1)
    """Failing conversations in the shape."""
    share: float = Field(ge=0, le=1)
    """``size`` over all failing conversations of the build."""
    signals: dict[str, int]
    """How many members show each failure signal."""
    radius: float = Field(ge=0)
    """Largest cosine distance of a member to the centroid at build time."""
    members: list[str]
    """Case ids of every member, sorted."""
    representatives: list[ShapeExample]
    """The most central members, most central first (up to three)."""
    exemplars: list[ShapeExample]
    """A seeded random sample of members (up to ``exemplar_cap`` of the build)."""
    situation: dict[str, Any]
    """Scrubbed draft situation of the most central member (the `Situation` format)."""


class ShapeVersion(_Record):
    """One line of `shapes/<name>.versions.jsonl`: a build that changed the shape set."""

    number: int = Field(ge=1)
    """1, 2, … in build order."""
    hash: str
    """sha256 of the shape file's bytes."""
    created_at: datetime
    """When the build ran (UTC)."""
    as_of: date
    """Conversations that started after this UTC date were left out."""
    message: str
    """What the build was (default: the trace files it read)."""
    files: list[str]
    """Trace files read."""
    key_fingerprint: str
    """Fingerprint of the pseudonym key the conversations were scrubbed with."""
    embedder: str
    """Embedder that placed the conversations (`tfidf`, `openai:<model>`…)."""
    method: dict[str, float | int | str]
    """Clustering: algorithm, linkage, distance threshold, minimum shape size, sample size."""
    conversations: int
    """Conversations read."""
    failing: int
    """Conversations with at least one failure signal (the ones clustered)."""
    shaped: int
    """Failing conversations inside a shape."""
    singletons: int
    """Failing conversations alike to no other (clusters of one)."""
    unseen_share: float
    """Good–Turing estimate of the share of failing traffic in shapes not seen yet: singletons / failing."""
    shapes: int
    """Shapes in the set."""
