"""The JSON output of `casework dataset forget|expire`: what left which store, and what did not."""

from __future__ import annotations

from typing import Literal

from casework.schema import VersionRecord
from casework.schema.output import CommandOutput, OutputPart

__all__ = [
    "DatasetRemoval",
    "ErasureOutput",
    "NotReached",
    "RunLogRewrite",
    "StoreCount",
    "UnreachedCopy",
]


class DatasetRemoval(OutputPart):
    """Rows removed from one dataset, released as a new version."""

    dataset: str
    """The dataset."""
    removed: int
    """Rows removed (or that would be, on a dry run)."""
    expired: int
    """Of them, rows past their `retain_until` date."""
    kept: int
    """Rows kept."""
    version: VersionRecord | None
    """The new release, or null (dry run, nothing removed)."""
    purge_file: str | None
    """File listing what to purge from git history, if written."""
    cache_purged: int
    """Cached versions purged because they held removed rows."""


class StoreCount(OutputPart):
    """Rows removed from one store of the workbench or the project."""

    store: str
    """The store."""
    kind: str
    """What it holds."""
    count: int
    """Rows removed."""


class RunLogRewrite(OutputPart):
    """A run log rewritten without the removed cases' trials."""

    path: str
    """The log."""
    run_id: str
    """Its run."""
    trials: int
    """Trials removed."""


class UnreachedCopy(OutputPart):
    """A copy of rows outside casework's stores (an export, a sheet) that still holds them."""

    path: str
    """The copy."""
    kind: str
    """What kind of copy."""
    dataset: str
    """The dataset it came from."""
    rows: int
    """Removed rows it holds."""


class NotReached(OutputPart):
    """What still holds the removed rows: people must remove them by hand."""

    copies: list[UnreachedCopy]
    """Recorded copies."""
    judge_sheets_of: list[str]
    """Judge sheets written for these datasets."""
    files: list[str]
    """Other files that hold removed rows."""
    elsewhere: list[str]
    """Places casework cannot see (named for the person who removes them)."""


class ErasureOutput(CommandOutput):
    """`casework dataset forget|expire`: rows removed from every store, and what was not reached."""

    output: Literal["erasure"] = "erasure"
    """Which output this is."""
    dry_run: bool
    """Whether nothing was written."""
    datasets: list[DatasetRemoval]
    """Per dataset."""
    stores: list[StoreCount]
    """Per store."""
    run_logs: list[RunLogRewrite]
    """Run logs rewritten."""
    reports_regenerated: list[str]
    """HTML reports written again without the rows."""
    reports_deleted: list[str]
    """HTML reports deleted (they could not be regenerated)."""
    not_reached: NotReached
    """What still holds the rows."""
    history_recipe: str
    """How to purge the removed rows from git history (empty when nothing was removed)."""
