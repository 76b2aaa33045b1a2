"""`casework dataset apply` (labels): decided labels land on cases as a new version.

A case's label is written when its newest round is final; its raw labels (every round) go to
`labels.jsonl` at the same time, never earlier, so a second labeller with access to the repository
cannot read the first label before answering. Entry point: :func:`release_labels`;
:func:`plan_labels` computes the same content without releasing it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime

from pydantic import ValidationError

from casework.dataset import read_versions, release
from casework.dataset.lock import dataset_lock
from casework.errors import UsageError
from casework.labelling.dataset_state import DatasetState, dataset_name, load_state
from casework.labelling.model import label_key
from casework.project import Project
from casework.schema import Case, LabelRecord, VersionRecord
from casework.workbench import open_workbench

__all__ = ["Held", "LabelPlan", "LabelRelease", "plan_labels", "release_labels"]


@dataclass(frozen=True)
class Held:
    """A decided case whose label could not be written, and why.

    Attributes:
        case_id: The case.
        reason: One sentence (e.g. the label says `resolve` but the case is marked unsatisfiable).
    """

    case_id: str
    reason: str


@dataclass(frozen=True)
class LabelRelease:
    """What a label release did.

    Attributes:
        dataset: Dataset name.
        record: The new release, or ``None`` when nothing was decided since the last one.
        labelled: Cases that got their first label.
        relabelled: Cases whose label was replaced (e.g. under a newer guideline).
        adjudicated: Of those, cases an adjudicator decided.
        raw_labels: Raw labels added to `labels.jsonl`.
        held: Decided cases left out, with reasons.
    """

    dataset: str
    record: VersionRecord | None
    labelled: int
    relabelled: int
    adjudicated: int
    raw_labels: int
    held: tuple[Held, ...]


@dataclass(frozen=True)
class LabelPlan:
    """The new content a label release writes, before it is released.

    Attributes:
        cases: Every case of the working tree, decided ones carrying their final label.
        labels: Released raw labels plus every raw label of the decided cases.
        labelled: Cases that get their first label.
        relabelled: Cases whose label is replaced.
        adjudicated: Of those, cases an adjudicator decided.
        raw_labels: Raw labels added to `labels.jsonl`.
        held: Decided cases left out, with reasons.
        changes: Changelog lines (none: nothing decided since the last release).
    """

    cases: tuple[Case, ...]
    labels: tuple[LabelRecord, ...]
    labelled: int
    relabelled: int
    adjudicated: int
    raw_labels: int
    held: tuple[Held, ...]
    changes: tuple[str, ...]


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def plan_labels(state: DatasetState) -> LabelPlan:
    """What a label release of ``state``'s working tree would write (nothing is written).

    The one place decided labels become case content: :func:`release_labels` releases it, and
    the review queue's apply folds it into one version with the other decided work.
    """
    data = state.dataset
    released_keys = {label_key(r) for r in data.labels}
    unreleased: dict[str, list[LabelRecord]] = defaultdict(list)
    for raw in state.snapshot.labels:
        if label_key(raw) not in released_keys:
            unreleased[raw.case_id].append(raw)
    cases: list[Case] = []
    labels: list[LabelRecord] = list(data.labels)
    held: list[Held] = []
    labelled = relabelled = adjudicated = 0
    for progress in state.snapshot.cases:
        case = progress.case
        found = progress.round
        if progress.status != "ready" or found is None or progress.final is None:
            cases.append(case)
            continue
        try:
            new_case = Case.model_validate(
                {
                    **case.model_dump(by_alias=True),
                    "label": progress.final.model_dump(by_alias=True),
                }
            )
        except ValidationError as exc:
            reason = exc.errors(include_url=False)[0]["msg"].removeprefix("Value error, ")
            held.append(Held(case.id, reason))
            cases.append(case)
            continue
        cases.append(new_case)
        if new_case.label != case.label:
            if case.label is None:
                labelled += 1
            else:
                relabelled += 1
            adjudicated += found.adjudicated
        labels.extend(unreleased.get(case.id, []))
    added = len(labels) - len(data.labels)
    changes = []
    if labelled:
        changes.append(f"labelled {_plural(labelled, 'case')}")
    if relabelled:
        changes.append(f"relabelled {_plural(relabelled, 'case')}")
    if adjudicated:
        changes.append(f"{_plural(adjudicated, 'case')} decided by adjudication")
    if added:
        changes.append(f"added {_plural(added, 'raw label')} to labels.jsonl")
    return LabelPlan(
        tuple(cases),
        tuple(labels),
        labelled,
        relabelled,
        adjudicated,
        added,
        tuple(held),
        tuple(changes),
    )


def release_labels(
    project: Project, dataset: str, message: str, *, now: datetime | None = None
) -> LabelRelease:
    """Write every decided label onto its case and every raw label of those cases, as a new version.

    Raises:
        UsageError: Empty message, unknown dataset, or the working tree holds unreleased edits
            (release them first with `casework dataset release`, so this version holds labelling only).
        InputErrors: Bad dataset files or guidelines, or hand-edited raw labels.
    """
    name = dataset_name(dataset, "dataset apply")
    if not message.strip():
        raise UsageError("a message is required: say why this version exists.", param="message")
    with dataset_lock(project, name):
        with open_workbench(project) as wb, wb.session() as session:
            state = load_state(project, name, session)
        data = state.dataset
        if data.version is None and read_versions(data.path, state.labels_path):
            raise UsageError(
                f"{project.relative(data.path)}: the working tree differs from the latest release; "
                f"release those edits first (release {name} with a message), then release labels."
            )
        plan = plan_labels(state)
        record = None
        if plan.changes:
            record = release(
                project,
                name,
                plan.cases,
                message,
                changes=list(plan.changes),
                labels=plan.labels,
                now=now,
            )
    return LabelRelease(
        name,
        record,
        plan.labelled,
        plan.relabelled,
        plan.adjudicated,
        plan.raw_labels,
        plan.held,
    )
