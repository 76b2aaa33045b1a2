"""The JSON output of `casework mine`, as a documented model."""

from __future__ import annotations

from typing import Literal

from casework.schema import VersionRecord
from casework.schema.output import CommandOutput

__all__ = ["MineOutput"]


class MineOutput(CommandOutput):
    """`casework mine`: what a mining run read, drafted and released (counts, no identifiers)."""

    output: Literal["mine"] = "mine"
    """Which output this is."""
    dataset: str
    """Dataset name."""
    files: list[str]
    """Trace files read."""
    formats: dict[str, int]
    """How many files were read in each format."""
    conversations: int
    """Conversations read."""
    drafted: list[str]
    """Ids of the new draft cases."""
    already_present: int
    """Conversations whose draft the dataset already holds."""
    not_failing: int
    """Conversations left out by `--failing-only`."""
    no_user_turn: int
    """Conversations without a user message (nothing to draft)."""
    signals: dict[str, int]
    """How many conversations read show each failure signal."""
    expired: int
    """Rows past `retain_until` removed in the same release."""
    version: VersionRecord | None
    """The new release's line of `versions.jsonl` (null when nothing changed)."""
    key_fingerprint: str
    """Fingerprint of the pseudonym key used."""
