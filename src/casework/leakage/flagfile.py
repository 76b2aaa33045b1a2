"""The leakage review file: `datasets/<name>/leakage.jsonl` (in git), the flags' source of truth.

Scans, decisions and resolves read and rewrite it under the dataset's release lock, atomically, in
canonical form (sorted by flag id); the gate reads it, so a fresh clone with an empty workbench sees
the same open flags. Entry points: :func:`read_flags`, :func:`write_flags`, :func:`flag_file`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from casework.atomic import atomic_write_bytes
from casework.dataset._journal import tmp_dir
from casework.dataset.jsonl import canonical_bytes, read_records
from casework.errors import InputErrors, Problem
from casework.project import Project
from casework.schema import LeakageFlagRecord

__all__ = ["LEAKAGE_FILE", "flag_file", "read_flags", "write_flags"]

#: File name of the review state inside a dataset folder.
LEAKAGE_FILE = "leakage.jsonl"


def flag_file(project: Project, name: str) -> Path:
    """`datasets/<name>/leakage.jsonl` (it may not exist: no scan has flagged anything yet)."""
    return project.dataset_dir(name) / LEAKAGE_FILE


def read_flags(project: Project, name: str) -> list[LeakageFlagRecord]:
    """Every flag of dataset ``name``, in file order (by id); none when the file does not exist.

    Raises:
        InputErrors: A bad line, a repeated flag id, or a pair flagged on two lines.
    """
    path = flag_file(project, name)
    shown = project.relative(path)
    lines = read_records(
        path, LeakageFlagRecord, shown=shown, key=lambda r: str(r.id), missing_ok=True
    )
    seen: dict[tuple[str, str], int] = {}
    problems = []
    for index, record in enumerate(lines.records):
        pair = (record.left_id, record.right_id)
        if pair in seen:
            problems.append(
                Problem(
                    shown,
                    lines.line(index),
                    "right_id",
                    f"the pair is already flagged on line {seen[pair]}",
                    f"{record.left_id} ~ {record.right_id}",
                    has_got=True,
                )
            )
        else:
            seen[pair] = lines.line(index)
    InputErrors.raise_if_any(problems)
    return lines.records


def write_flags(project: Project, name: str, flags: Iterable[LeakageFlagRecord]) -> None:
    """Rewrite the review file of ``name`` canonically and atomically (hold the dataset lock).

    The temp file sits under `.casework/` (git-ignored, cleaned when the lock is next taken), so
    a crash mid-write leaves nothing in the dataset folder.
    """
    data = canonical_bytes(flags, sort_key=lambda r: f"{r.id:012d}")
    atomic_write_bytes(flag_file(project, name), data, tmp_dir=tmp_dir(project, name))
