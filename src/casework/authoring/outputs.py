"""The JSON outputs of `casework shapes author|report`, as documented models."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from casework.schema.output import CommandOutput, OutputPart

__all__ = [
    "AuthorOutput",
    "AuthorRejection",
    "AuthorReportOutput",
    "DiscriminationOutput",
    "UnsatisfiableOutput",
]


class AuthorRejection(OutputPart):
    """A candidate the rules refused."""

    candidate: int
    """Its number in the run (1-based)."""
    reason: str
    """Which rule refused it (`malformed_json`, `schema_invalid`, `no_oracle`, …)."""
    detail: str
    """What was wrong, for people."""


class AuthorOutput(CommandOutput):
    """`casework shapes author`: what one generation run did (its line of the authored log)."""

    output: Literal["shape-author"] = "shape-author"
    """Which output this is."""
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
    queued: list[str]
    """Case ids of the candidates that passed the rules and were queued for review."""
    rejected: dict[str, int]
    """Rejected candidates per reason."""
    items: list[int]
    """Review item ids of the queued candidates (`casework review show ID`)."""
    rejections: list[AuthorRejection]
    """Every rejected candidate with its reason."""


class UnsatisfiableOutput(OutputPart):
    """One slice's unsatisfiable share, against the configured band when the slice is mature."""

    slice: str
    """The slice."""
    unsatisfiable: int
    """Unsatisfiable cases in it."""
    total: int
    """All cases in it."""
    share: float
    """`unsatisfiable / total`."""
    mature: bool
    """Whether the slice is marked mature (the band applies)."""
    in_band: bool
    """Whether the share lies inside the configured band (it fails only a mature slice)."""


class DiscriminationOutput(OutputPart):
    """How the accepted cases separate a known-better from a deliberately degraded agent."""

    better: str
    """Label of the known-better run."""
    worse: str
    """Label of the degraded run."""
    runs: list[str]
    """Run ids (better, worse)."""
    cases: int
    """Accepted cases graded in both runs."""
    discriminating: list[str]
    """Those the better agent passes more often."""
    inverted: list[str]
    """Those the degraded agent passes more often."""
    rate: float
    """Share of the accepted cases that separate the two agents."""
    trials: int
    """Trials per case."""
    stability_better: float | None
    """Share of cases whose verdict is the same in every trial (better agent); null: no case."""
    stability_worse: float | None
    """The same for the degraded agent."""


class AuthorReportOutput(CommandOutput):
    """`casework shapes report`: the generator's gate for one shape set."""

    output: Literal["shape-author-report"] = "shape-author-report"
    """Which output this is."""
    shape_set: str
    """Shape set name."""
    generated: int
    """Candidates generated over every run."""
    queued: int
    """Candidates that passed the rules and were queued for review."""
    accepted: int
    """Candidates accepted by reviewers."""
    accepted_cases: list[str]
    """Their case ids."""
    pending_review: int
    """Queued candidates not decided yet."""
    acceptance_rate: float
    """`accepted / generated`."""
    warning: str | None
    """The low-acceptance warning (below one in five), or null."""
    rejected_by_rule: dict[str, int]
    """Candidates the rules refused, per reason."""
    rejected_by_review: dict[str, int]
    """Candidates reviewers rejected, per reason given."""
    human_minutes_per_accepted: float | None
    """Review minutes (every decided item) per accepted case; null: none accepted."""
    coverage: dict[str, dict[str, int]]
    """Accepted cases per shape, then per axis."""
    empty_cells: list[str]
    """Shape × axis cells with no accepted case (`shape-01 × stale-state`)."""
    unsatisfiable: list[UnsatisfiableOutput]
    """Each slice's unsatisfiable share."""
    discrimination: DiscriminationOutput | None
    """Given --better and --worse: how the accepted cases separate them; else null."""
