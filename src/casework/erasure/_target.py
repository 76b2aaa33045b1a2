"""What a deletion request or an expiry reaches: the rows that leave, and the marks of their copies."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from casework.dataset.copies import CopyRecord
from casework.project import Project
from casework.runner.redact import LogRedaction

#: Prefix of a mined row's id; the rest is the hex of its session pseudonym (`session_<hex>`).
MINED_PREFIX = "mined-"
SESSION_PREFIX = "session_"


def mined_id(session: str) -> str | None:
    """The id `casework mine` gives the conversation of a session pseudonym (``None``: not one)."""
    if not session.startswith(SESSION_PREFIX):
        return None
    return MINED_PREFIX + session.removeprefix(SESSION_PREFIX)


@dataclass
class Target:
    """The rows that leave and what marks their copies.

    Attributes:
        by_dataset: Ids of the rows each dataset lost (ids are unique within a dataset only).
        anywhere: Ids of mined conversations the request names, in any dataset or shape set
            (a mined id is made from its session's keyed pseudonym, so it names one customer's
            conversation wherever it appears).
        needles: Strings only those rows' copies hold: ids and pseudonyms (never printed).
    """

    by_dataset: dict[str, set[str]] = field(default_factory=dict)
    anywhere: set[str] = field(default_factory=set)
    needles: set[str] = field(default_factory=set)

    def ids(self, dataset: str | None) -> set[str]:
        """Ids that leave ``dataset`` (``None``: a store that does not say which dataset)."""
        if dataset is None:
            return self.all_ids()
        return self.by_dataset.get(dataset, set()) | self.anywhere

    def all_ids(self) -> set[str]:
        """Every id that leaves, whatever its dataset."""
        return self.anywhere.union(*self.by_dataset.values())

    def marks(self, text: str) -> bool:
        """Whether ``text`` holds one of the needles."""
        return any(n in text for n in self.needles if n)

    def add(self, ids: Iterable[str], needles: Iterable[str]) -> None:
        """Name more mined conversations (found in a store other than a dataset)."""
        self.anywhere.update(ids)
        self.needles.update(ids)
        self.needles.update(needles)

    def __bool__(self) -> bool:
        return bool(self.all_ids())


@dataclass
class Context:
    """One erasure in progress: the target, and what the stores found besides counts.

    Attributes:
        project: The project.
        target: What leaves.
        dry_run: Count only; change nothing.
        now: The time of the request (new shape versions carry it).
        run_logs: Run logs rewritten.
        reports: Reports regenerated from redacted runs.
        reports_deleted: Reports deleted (held removed rows, no run to regenerate them from).
        handled: Files casework rewrote or deleted (not searched again for leftovers).
        unreadable: Files of a registered kind that could not be read, so were not rewritten.
        copies: Recorded copies out of reach (exported sheets, eval sets) that held removed rows.
        judge_sheets: Reviewers whose judge verdict sheets held removed rows.
        runs_changed: Ids of the workbench runs whose header and counts were rewritten.
    """

    project: Project
    target: Target
    dry_run: bool
    now: datetime
    run_logs: list[LogRedaction] = field(default_factory=list)
    reports: list[Path] = field(default_factory=list)
    reports_deleted: list[Path] = field(default_factory=list)
    handled: set[Path] = field(default_factory=set)
    unreadable: list[Path] = field(default_factory=list)
    copies: list[CopyRecord] = field(default_factory=list)
    judge_sheets: set[str] = field(default_factory=set)
    runs_changed: set[str] = field(default_factory=set)


def datasets_of(project: Project, target: Target) -> list[str]:
    """Datasets to look through: those that lost rows, or every one when mined ids leave."""
    names = set(target.by_dataset)
    if target.anywhere:
        names.update(project.dataset_names())
    return sorted(names)


def ids_map(target: Target, datasets: Iterable[str]) -> Mapping[str, set[str]]:
    """Ids that leave, per dataset."""
    return {d: target.ids(d) for d in datasets}
