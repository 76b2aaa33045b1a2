"""Tool renames reach labelling too: raw labels still in the workbench are renamed with the dataset.

Without it a `dataset apply` after `casework dataset migrate` would bring back the old tool names from
labels given before the rename. Entry point: :func:`migrate_labelling`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from casework.dataset import declared_tools
from casework.dataset.lock import dataset_lock
from casework.dataset.migrate import MigrationResult, RenameMap, load_renames, migrate_dataset
from casework.labelling.store import writing
from casework.project import Project
from casework.schema import VersionRecord
from casework.workbench import open_workbench
from casework.workbench.db import workbench_exists
from casework.workbench.models_labelling import RawLabelRow

__all__ = ["LabellingMigration", "migrate_labelling", "rename_workbench_labels"]


@dataclass(frozen=True)
class LabellingMigration:
    """What a migration did to the dataset and to the workbench.

    Attributes:
        result: The dataset migration (cases and released raw labels).
        record: The new release, or ``None`` when nothing changed in the files or ``dry_run``.
        workbench_labels: Raw labels in the workbench whose tool answers were renamed.
    """

    result: MigrationResult
    record: VersionRecord | None
    workbench_labels: int


def _renamed(answers: dict[str, bool], renames: RenameMap) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for tool, yes in answers.items():
        new = renames.tool(tool)
        out[new] = out.get(new, False) or bool(yes)  # two tools renamed to one: "yes" wins
    return out


def rename_workbench_labels(session: Session, dataset: str, renames: RenameMap) -> int:
    """Rename the tools in every raw label of ``dataset`` held in the workbench; returns how many."""
    changed = 0
    for row in session.scalars(select(RawLabelRow).where(RawLabelRow.dataset == dataset)):
        required = _renamed(dict(row.required), renames)
        forbidden = _renamed(dict(row.forbidden), renames)
        if required != row.required or forbidden != row.forbidden:
            row.required, row.forbidden = required, forbidden
            changed += 1
    return changed


def migrate_labelling(
    project: Project, dataset: str, renames_path: Path, message: str, *, dry_run: bool = False
) -> LabellingMigration:
    """Apply a rename map to ``dataset`` and to its raw labels in the workbench, under one lock.

    The workbench rows are committed after the release; should a crash come between, running
    the migration again renames what is left (renames apply to old names only).

    Raises:
        InputErrors: Bad rename map, or the renames make a case contradict itself; nothing is
            written.
    """
    renames = load_renames(renames_path, project.relative(renames_path), declared_tools(project))
    with dataset_lock(project, dataset):
        if dry_run or not workbench_exists(project):
            result, record = migrate_dataset(
                project, dataset, renames_path, message, dry_run=dry_run
            )
            return LabellingMigration(result, record, 0)
        with open_workbench(project) as wb, writing(wb, "migrate") as session:
            result, record = migrate_dataset(project, dataset, renames_path, message)
            renamed = rename_workbench_labels(session, dataset, renames)
    return LabellingMigration(result, record, renamed)
