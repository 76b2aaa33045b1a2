"""Copies written out of the project's reach: where exported sheets and eval sets went.

A labelling sheet, a judge verdict sheet or an ADK eval set leaves casework's control once it is
written (it is mailed, uploaded, copied). Each exporter calls :func:`record_copies` with the
files it wrote and the case ids they hold, appending to `.casework/copies.jsonl`, so that
`casework dataset forget` and `casework dataset expire` can list such a copy by path when it held a removed row.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock
from pydantic import BaseModel, ConfigDict

from casework.atomic import atomic_write_text
from casework.dataset.jsonl import read_records
from casework.project import Project

__all__ = ["COPIES_FILE", "CopyRecord", "read_copies", "record_copies", "write_copies"]

#: Where the record of written copies lives, under the project's state folder.
COPIES_FILE = "copies.jsonl"


class CopyRecord(BaseModel):
    """One file casework wrote for people or tools outside it (one line of `copies.jsonl`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = 1
    """Format version of this record."""
    path: str
    """The file written, absolute."""
    kind: str
    """What it is: `labelling sheet`, `judge verdict sheet`, `ADK eval set`."""
    dataset: str
    """Dataset whose rows it holds."""
    written_at: datetime
    """When it was written (UTC)."""
    case_ids: list[str]
    """Ids of the rows it holds, sorted (ids a later `forget` removed are taken out)."""


def _file(project: Project) -> Path:
    return project.state_dir / COPIES_FILE


def _lock(project: Project) -> FileLock:
    path = project.state_dir / "locks" / "copies.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path))


def read_copies(project: Project) -> list[CopyRecord]:
    """Every recorded copy, oldest first (none when nothing was exported).

    Raises:
        InputErrors: A malformed line.
    """
    path = _file(project)
    return read_records(path, CopyRecord, shown=project.relative(path), missing_ok=True).records


def _text(records: Iterable[CopyRecord]) -> str:
    return "".join(r.model_dump_json() + "\n" for r in records)


def record_copies(
    project: Project,
    kind: str,
    dataset: str,
    paths: Sequence[Path],
    case_ids: Iterable[str],
    *,
    now: datetime | None = None,
) -> None:
    """Note that ``paths`` (holding the rows ``case_ids`` of ``dataset``) were written out."""
    ids = sorted(set(case_ids))
    when = now or datetime.now(UTC)
    new = [
        CopyRecord(path=str(p.resolve()), kind=kind, dataset=dataset, written_at=when, case_ids=ids)
        for p in paths
    ]
    if not new:
        return
    with _lock(project):
        atomic_write_text(_file(project), _text([*read_copies(project), *new]))


def write_copies(project: Project, records: Sequence[CopyRecord]) -> None:
    """Replace the record (used by `forget` to take removed ids out of it)."""
    with _lock(project):
        atomic_write_text(_file(project), _text(records))
