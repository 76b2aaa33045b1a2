"""The release log's records: one line of `versions.jsonl` and its counts."""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field

from casework._docs import document_fields
from casework.schema._base import SCHEMA_VERSION, _Record

__all__ = ["VersionCounts", "VersionRecord"]


class VersionCounts(_Record):
    """Counts of a dataset version, for the release log and quick comparisons."""

    cases: int
    """Number of cases."""
    by_slice: dict[str, int] = Field(default_factory=dict)
    """Cases per slice."""
    by_split: dict[str, int] = Field(default_factory=dict)
    """Cases per split."""
    by_source: dict[str, int] = Field(default_factory=dict)
    """Cases per source."""
    by_outcome: dict[str, int] = Field(default_factory=dict)
    """Cases per labelled outcome (`unlabelled` for drafts)."""
    by_oracle: dict[str, int] = Field(default_factory=dict)
    """Cases per oracle class (`state_assertion`, `rubric_judge`, `human`)."""
    unsatisfiable: int = 0
    """Cases whose task cannot be completed."""
    frozen: int = 0
    """Frozen (private) cases."""
    labels: int = 0
    """Raw label records in labels.jsonl."""


class VersionRecord(_Record):
    """One line of `versions.jsonl`: an append-only release log entry."""

    schema_version: Literal[1] = SCHEMA_VERSION
    """Version of this record format."""
    number: int = Field(ge=1)
    """Release number, 1 for the first release."""
    hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    """sha256 of the canonical content (cases.jsonl, then labels.jsonl)."""
    parent: str | None = None
    """Hash of the previous release, or null for the first."""
    created_at: AwareDatetime
    """When the release was made (UTC)."""
    message: str
    """Why this version exists."""
    changes: list[str] = Field(default_factory=list)
    """Changelog lines (counts of what changed; never identifiers of people)."""
    counts: VersionCounts
    """Counts per slice, split, source and outcome."""
    guideline_versions: list[str] = Field(default_factory=list)
    """Guideline versions present on labelled cases."""


document_fields(globals())
