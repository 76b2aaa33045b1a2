"""Loading a dataset's labelling state: its files, guidelines and workbench rows, in one value.

Entry point: :func:`load_state` (inside a workbench session owned by the caller).
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.orm import Session

from casework.dataset import Dataset, load_dataset, parse_ref
from casework.errors import UsageError
from casework.labelling.guidelines import current_versions
from casework.labelling.snapshot import SliceCalibration, Snapshot, slice_calibration, snapshot
from casework.labelling.store import Work, load_work
from casework.project import Project

__all__ = ["DatasetState", "dataset_name", "load_state"]


@dataclass(frozen=True)
class DatasetState:
    """A dataset's working tree with its labelling state.

    Attributes:
        dataset: The dataset (working tree).
        work: Workbench rows of the dataset.
        snapshot: Every case's round and status.
        labels_path: `labels.jsonl` as shown in messages.
    """

    dataset: Dataset
    work: Work
    snapshot: Snapshot
    labels_path: str

    def calibration(self, project: Project) -> dict[str, SliceCalibration]:
        """Each slice's kappa under its current guideline and whether it is calibrated."""
        config = project.config
        return slice_calibration(
            self.dataset.cases,
            self.snapshot.labels,
            self.snapshot.versions,
            gate=config.thresholds.kappa_gate,
            min_rows=config.labelling.calibration_min_rows,
        )


def dataset_name(ref: str, command: str) -> str:
    """The dataset name of a reference that must name the working tree (no ``@VERSION``).

    Raises:
        UsageError: The reference names a released version.
    """
    name, version = parse_ref(ref)
    if version not in (None, "working"):
        raise UsageError(
            f"{command} {ref}: labelling works on the working tree; name the dataset without @VERSION."
        )
    return name


def load_state(
    project: Project, name: str, session: Session | None, work: Work | None = None
) -> DatasetState:
    """Load ``name``'s working tree, guideline versions and workbench rows.

    Args:
        project: The project.
        name: Dataset name.
        session: Open workbench session (``None`` only when ``work`` is given).
        work: Workbench rows already loaded (e.g. minus assignments about to be cancelled).

    Raises:
        UsageError: Unknown dataset.
        InputErrors: Bad dataset files, a slice without a valid guideline, or hand-edited raw labels.
    """
    data = load_dataset(project, name)
    versions = current_versions(project, {c.slice for c in data.cases})
    if work is None:
        if session is None:
            raise ValueError("load_state: give a workbench session or the work already loaded")
        work = load_work(session, name)
    labels_path = project.relative(data.path / "labels.jsonl")
    snap = snapshot(
        data.cases,
        data.labels,
        work.labels,
        [s.assignment for s in work.assignments],
        versions,
        labels_path=labels_path,
    )
    return DatasetState(data, work, snap, labels_path)
