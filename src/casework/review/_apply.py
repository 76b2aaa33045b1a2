"""Apply a dataset's decided work as one new version: labels, adjudications, leakage, new cases.

:func:`apply_decisions` folds every decision waiting for a release into one tree and releases it
once through :func:`casework.dataset.release`: decided labels and adjudications
(:func:`casework.labelling.release.plan_labels`, what `dataset apply` writes for labels), decided leakage
flags (:func:`casework.leakage.review.plan_moves`, the rows it moves; the flags are
settled and their queue items withdrawn), and generated cases accepted in review (they joined the
working tree when accepted; this releases them). Nothing decided: nothing is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from casework.dataset import Dataset, load_dataset, read_versions, release
from casework.dataset.lock import dataset_lock
from casework.errors import UsageError
from casework.labelling.dataset_state import load_state
from casework.labelling.release import Held, plan_labels
from casework.labelling.timings import GENERATED_CASE_KIND
from casework.leakage.flagfile import read_flags
from casework.leakage.review import plan_moves, settle_flags
from casework.project import Project
from casework.review._leakage_pair import LEAKAGE_PAIR, pair_subject
from casework.review._queue import FLAG_SETTLED, dataset_name, withdraw_stale
from casework.schema import VersionRecord
from casework.workbench import open_workbench
from casework.workbench.db import workbench_exists
from casework.workbench.models_review import ReviewTaskRow


@dataclass(frozen=True)
class ApplyReport:
    """What :func:`apply_decisions` applied, per kind of decision.

    Attributes:
        dataset: Dataset name.
        record: The new version, or ``None`` when no case or label changed.
        generated: Ids of generated cases accepted in review and released now.
        labelled: Cases that got their first label.
        relabelled: Cases whose label was replaced.
        adjudicated: Of those, cases an adjudicator decided.
        raw_labels: Raw labels added to `labels.jsonl`.
        held: Decided labels left out, with reasons.
        moved: Rows moved to dev by decided leakage flags.
        kept: Leakage pairs kept as they are.
        templates: Leakage pairs marked template-like.
        superseded: Other open flags whose pair no longer crosses splits.
    """

    dataset: str
    record: VersionRecord | None
    generated: tuple[str, ...] = ()
    labelled: int = 0
    relabelled: int = 0
    adjudicated: int = 0
    raw_labels: int = 0
    held: tuple[Held, ...] = ()
    moved: tuple[str, ...] = ()
    kept: int = 0
    templates: int = 0
    superseded: int = 0

    @property
    def applied(self) -> bool:
        """True when anything was applied (a version, or leakage flags settled)."""
        return self.record is not None or bool(self.kept or self.templates)

    def as_json(self) -> dict[str, Any]:
        """JSON-ready data, one section per kind of decision."""
        record = self.record
        return {
            "dataset": self.dataset,
            "version": None if record is None else record.number,
            "hash": None if record is None else record.hash,
            "changes": [] if record is None else list(record.changes),
            "generated_case": {"released": list(self.generated)},
            "labels": {
                "labelled": self.labelled,
                "relabelled": self.relabelled,
                "adjudicated": self.adjudicated,
                "raw_labels": self.raw_labels,
                "held": [{"case_id": h.case_id, "reason": h.reason} for h in self.held],
            },
            "leakage_pair": {
                "moved": list(self.moved),
                "kept": self.kept,
                "templates": self.templates,
                "superseded": self.superseded,
            },
        }


def _accepted_ids(project: Project, name: str) -> set[str]:
    """Case ids of generated cases accepted (as they were, or edited) in ``name``'s review."""
    if not workbench_exists(project):
        return set()
    with open_workbench(project) as wb, wb.session() as session:
        return set(
            session.scalars(
                select(ReviewTaskRow.subject).where(
                    ReviewTaskRow.kind == GENERATED_CASE_KIND,
                    ReviewTaskRow.dataset == name,
                    ReviewTaskRow.status == "decided",
                    ReviewTaskRow.decision.in_(("accept", "edit")),
                )
            )
        )


def _generated(project: Project, data: Dataset, versions: list[VersionRecord]) -> list[str]:
    """Accepted generated cases the working tree holds beyond the latest release.

    Raises:
        UsageError: The working tree differs from the latest release in any other way.
    """
    accepted = _accepted_ids(project, data.name)
    if not versions:  # the first release takes the whole tree
        return sorted(c.id for c in data.cases if c.id in accepted)
    if data.version is not None:
        return []
    latest = load_dataset(project, f"{data.name}@{versions[-1].number}")
    released = {c.id: c for c in latest.cases}
    tree = {c.id: c for c in data.cases}
    added = sorted(set(tree) - set(released))
    same = all(tree.get(i) == c for i, c in released.items()) and data.labels == latest.labels
    if not same or not set(added) <= accepted:
        raise UsageError(
            f"{project.relative(data.path)}: the working tree differs from the latest release by "
            f"more than the generated cases accepted in review; release those edits first "
            f"(release {data.name} with a message), then apply the decisions."
        )
    return added


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def apply_decisions(
    project: Project, dataset: str, *, message: str, now: datetime | None = None
) -> ApplyReport:
    """Release every decision waiting for ``dataset`` as one new version (no-op when none).

    Args:
        project: The project.
        dataset: Dataset name.
        message: Why this version exists.
        now: Release time (tests).

    Raises:
        UsageError: Empty message, unknown dataset, or a working tree holding edits other than
            accepted generated cases (release those first).
        InputErrors: Bad dataset, review or guideline files, or hand-edited raw labels.
    """
    name = dataset_name(dataset)
    if not message.strip():
        raise UsageError("a message is required: say why this version exists.", param="message")
    when = now or datetime.now(UTC)
    with dataset_lock(project, name):
        with open_workbench(project) as wb, wb.session() as session:
            state = load_state(project, name, session)
        data = state.dataset
        versions = read_versions(data.path, project.relative(data.path / "versions.jsonl"))
        generated = _generated(project, data, versions)
        labels = plan_labels(state)
        flags = read_flags(project, name)
        moves = plan_moves(flags, labels.cases)
        changes: list[str] = []
        if generated:
            changes.append(
                f"added {_plural(len(generated), 'generated case')} accepted in review: "
                + ", ".join(generated)
            )
        changes += [*labels.changes, *moves.changes]
        record = None
        if changes:
            if not versions:
                changes.insert(0, f"first release: {len(moves.cases)} cases")
            record = release(
                project,
                name,
                list(moves.cases.values()),
                message,
                changes=changes,
                labels=labels.labels if labels.raw_labels else None,
                now=when,
            )
        superseded = 0
        if any(f.status == "decided" for f in flags):
            version = record.number if record else (data.version.number if data.version else None)
            superseded = settle_flags(project, name, flags, moves.cases, version)
            open_now = {
                pair_subject(f.left_id, f.right_id)
                for f in read_flags(project, name)
                if f.status == "open"
            }
            withdraw_stale(project, LEAKAGE_PAIR, name, open_now, FLAG_SETTLED, when)
    return ApplyReport(
        name,
        record,
        tuple(generated),
        labels.labelled,
        labels.relabelled,
        labels.adjudicated,
        labels.raw_labels,
        labels.held,
        moves.moved,
        moves.kept,
        moves.templates,
        superseded,
    )
