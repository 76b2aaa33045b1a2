"""The leakage review file: `datasets/<name>/leakage.jsonl`, one flagged pair of rows per line.

The review state that gates lives beside the rows, in git, so a fresh clone (a CI job, another
workbench) sees the same open flags. Entry point: :class:`LeakageFlagRecord`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field, model_validator

from casework._docs import document_fields
from casework.schema._base import SCHEMA_VERSION, Split, _Record

LeakageStatus = Literal["open", "decided", "resolved", "gone"]
"""Where a flag stands in review."""
LeakageDecision = Literal["move", "keep", "template"]
"""Move one row to dev, keep both as they are, or mark the pair template-like."""

_SHA256 = r"^[0-9a-f]{64}$"


class LeakageFlagRecord(_Record):
    """One line of `leakage.jsonl`: two rows in different splits whose user text nearly repeats.

    `casework leakage scan` adds and updates lines, `casework review decide` records decisions
    (each open line is a `leakage-pair` review item), `casework dataset apply` applies them;
    `casework gate` fails while any line is `open` or `decided`. Lines are sorted by `id`.
    """

    schema_version: Literal[1] = SCHEMA_VERSION
    """Version of this record format."""
    id: int = Field(ge=1)
    """Flag number within the dataset; never reused."""
    left_id: str
    """Id of the first row of the pair (the smaller id)."""
    right_id: str
    """Id of the second row."""
    left_split: Split
    """Split of the first row when the pair was last found."""
    right_split: Split
    """Split of the second row when the pair was last found."""
    left_hash: str = Field(pattern=_SHA256)
    """sha256 of the first row's situation (canonical JSON) when the pair was last found: a
    changed row reopens a kept or template-like pair."""
    right_hash: str = Field(pattern=_SHA256)
    """sha256 of the second row's situation when the pair was last found."""
    jaccard: float = Field(ge=0, le=1)
    """Exact Jaccard similarity of the two rows' user-text shingles."""
    shared_count: int = Field(ge=0)
    """Number of shingles the rows share."""
    shared: list[str] = Field(default_factory=list)
    """Shared shingles (up to 50), in the order they occur in the first row."""
    status: LeakageStatus
    """`open` (waiting for review), `decided` (waits for `casework dataset apply`), `resolved`
    (applied; `keep` and `template` stay suppressed while both rows are unchanged) or `gone` (a
    scan at the configured threshold, or a change to the rows, no longer finds the pair)."""
    decision: LeakageDecision | None = None
    """The review decision, once made."""
    move_id: str | None = None
    """The row a `move` decision sends to dev."""
    reviewer: str | None = None
    """Pseudonymous id of who decided."""
    note: str | None = None
    """Why, in the reviewer's words."""
    decided_at: AwareDatetime | None = None
    """When the decision was made (UTC)."""
    resolved_version: int | None = Field(default=None, ge=1)
    """Release the decision was applied in (`resolved` flags)."""
    first_seen: AwareDatetime
    """When a scan first found the pair (UTC)."""

    @model_validator(mode="after")
    def _consistent(self) -> LeakageFlagRecord:
        if self.left_id >= self.right_id:
            raise ValueError("left_id must sort before right_id (one line per pair)")
        if self.status in ("decided", "resolved") and self.decision is None:
            raise ValueError(f"a {self.status} flag needs a decision")
        if self.status == "open" and self.decision is not None:
            raise ValueError("an open flag has no decision")
        if (self.decision == "move") != (self.move_id is not None):
            raise ValueError("move_id is given exactly when the decision is `move`")
        if self.move_id is not None and self.move_id not in (self.left_id, self.right_id):
            raise ValueError("move_id must name one row of the pair")
        return self


document_fields(globals())
