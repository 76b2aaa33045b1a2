"""The JSON outputs of `casework shapes build|list|show|drift`, as documented models."""

from __future__ import annotations

from typing import Literal

from pydantic import RootModel

from casework.schema.output import CommandOutput, OutputPart
from casework.shapes._model import Shape, ShapeVersion

__all__ = [
    "AppearedShapeOutput",
    "SaturationOutput",
    "ShapeBuildOutput",
    "ShapeDrift",
    "ShapeRecord",
    "ShapeRow",
    "ShapeSetList",
    "ShapeSetOutput",
    "ShapeSetRow",
    "ShareChangeOutput",
]


class ShapeRow(OutputPart):
    """One shape of a set, in a listing."""

    id: str
    """The shape's id (`shape-03`)."""
    name: str
    """Its name."""
    named_by: str
    """Who named it (`offline` or `llm`)."""
    size: int
    """Failing conversations in it."""
    share: float
    """Its share of the failing conversations."""
    terms: list[str]
    """Distinctive terms."""
    signals: dict[str, int]
    """Failure signals among its conversations."""
    representative: str
    """Draft case id of its most central conversation."""


class SaturationOutput(OutputPart):
    """Good–Turing's unseen share of a clustering."""

    singletons: int
    """Conversations alike to no other (clusters of one), `N1`."""
    n: int
    """Failing conversations clustered."""
    unseen_share: float
    """`N1 / n`: the estimated chance that the next failing conversation belongs to a shape not
    seen yet."""
    explanation: str
    """One line saying what the figure means for collecting more traces."""


class SamplingOutput(OutputPart):
    """How a build above the fit sample (`[shapes] sample_size`) went."""

    sample_size: int
    """The fit sample's size setting."""
    batch_size: int
    """Conversations embedded and assigned at once."""
    fitted: int
    """Failing conversations the embedder and the clustering were fitted on (a seeded sample)."""
    assigned: int
    """Other failing conversations that joined the nearest shape within its radius."""
    unassigned: int
    """Other failing conversations outside every shape's radius (in no shape)."""


class ShapeBuildOutput(CommandOutput):
    """`casework shapes build`: what a build read, the shapes it found and the version saved."""

    output: Literal["shape-build"] = "shape-build"
    """Which output this is."""
    name: str
    """Shape set name (saved as `shapes/NAME.jsonl`)."""
    changed: bool
    """Whether the build added a version (false: the same shapes as the latest version)."""
    version: ShapeVersion
    """The version the set is at: the new one, or the latest when nothing changed."""
    conversations: int
    """Conversations read."""
    failing: int
    """Failing conversations clustered."""
    after_as_of: int
    """Conversations left out for starting after the as-of date."""
    unshaped: int
    """Failing conversations in no shape: in clusters smaller than the minimum shape size, or
    (above the fit sample) outside every shape's radius."""
    llm_fallbacks: int
    """Shapes the LLM did not name in one sentence (named offline instead)."""
    saturation: SaturationOutput
    """Good–Turing unseen share of the clustering (above the fit sample: of the sample's)."""
    key_fingerprint: str
    """Fingerprint of the pseudonym key the conversations were scrubbed with."""
    sampling: SamplingOutput | None = None
    """Above the fit sample: what was fitted and assigned (null: every conversation clustered)."""
    shapes: list[ShapeRow]
    """The shapes, largest first."""


class ShapeSetOutput(CommandOutput):
    """`casework shapes show NAME`: a shape set at its latest version, every shape in a row."""

    output: Literal["shape-set"] = "shape-set"
    """Which output this is."""
    name: str
    """Shape set name."""
    version: ShapeVersion
    """Its latest version."""
    shapes: list[ShapeRow]
    """The shapes, largest first."""


class ShapeRecord(RootModel[Shape]):
    """`casework shapes show NAME SHAPE`: one shape as `shapes/NAME.jsonl` holds it (a file record)."""


class ShapeSetRow(OutputPart):
    """One shape set, at its latest version."""

    name: str
    """Shape set name."""
    version: int
    """Its latest version."""
    hash: str
    """That version's content hash."""
    created_at: str
    """When the version was built (ISO 8601, UTC)."""
    as_of: str
    """The date its traces run up to."""
    shapes: int
    """Shapes in it."""
    failing: int
    """Failing conversations clustered."""
    unseen_share: float
    """Good–Turing unseen share."""


class ShapeSetList(RootModel[list[ShapeSetRow]]):
    """`casework shapes list`: every shape set (a JSON list)."""


class ShareChangeOutput(OutputPart):
    """One saved shape's share of failing traffic, before and now."""

    shape_id: str
    """The shape."""
    name: str
    """Its name."""
    old_count: int
    """Members when the set was built."""
    old_share: float
    """`old_count` over the build's failing conversations."""
    new_count: int
    """New failing conversations assigned to it."""
    new_share: float
    """`new_count` over the new failing conversations."""
    z: float
    """Two-proportion z statistic (new against old)."""
    p: float
    """Two-sided p-value."""
    p_holm: float
    """Holm-adjusted p-value over every shape of the set."""
    significant: bool
    """`p_holm` below alpha."""
    vanished: bool
    """No new conversation falls in it, significantly."""


class AppearedShapeOutput(OutputPart):
    """A cluster of new failing traffic that no saved shape holds."""

    size: int
    """Conversations in it."""
    share: float
    """`size` over the new failing conversations."""
    terms: list[str]
    """Distinctive terms."""
    name: str
    """Offline name (terms and most central conversation)."""
    example: str
    """Scrubbed text of its most central conversation."""
    case_ids: list[str]
    """Draft case ids of its conversations."""


class ShapeDrift(CommandOutput):
    """`casework shapes drift`: new traffic against a shape set (exits 1 when it drifted)."""

    output: Literal["shape-drift"] = "shape-drift"
    """Which output this is."""
    against: str
    """Shape set name."""
    version: int
    """Its version number."""
    drifted: bool
    """Whether a shape appeared, vanished or changed share significantly."""
    conversations: int
    """New conversations read."""
    failing: int
    """New failing conversations."""
    assigned: int
    """Of them, those that fall in a saved shape."""
    alpha: float
    """Significance level used."""
    appeared: list[AppearedShapeOutput]
    """Clusters of unassigned traffic of at least the minimum size, largest first."""
    vanished: list[str]
    """Ids of shapes no new conversation falls in, significantly."""
    changed: list[str]
    """Ids of shapes whose share changed significantly."""
    shares: list[ShareChangeOutput]
    """Every saved shape's share, before and now."""
    key_fingerprint: str
    """Fingerprint of the pseudonym key used."""
