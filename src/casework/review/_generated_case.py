"""Review kind ``generated-case``: a case drafted by a generator (authoring) waiting for a person.

Items are built with :func:`generated_case_item`; the payload holds the case as JSON. Decisions:
``accept`` (the case joins the dataset's working tree as it is), ``edit`` (the edited case JSON,
validated by the case schema, joins instead) and ``reject`` (a reason is required; nothing joins).
Accepted cases are written to `cases.jsonl` under the dataset's lock; `casework dataset release` then
releases them like any other change of the working tree.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from casework.dataset import dump_record, load_dataset, write_cases
from casework.dataset.jsonl import problems_from_validation
from casework.dataset.lock import dataset_lock
from casework.dataset.versions import CASES_FILE
from casework.errors import InputErrors, UsageError
from casework.labelling.timings import GENERATED_CASE_KIND
from casework.project import Project
from casework.review._task import NewItem, ReviewTask
from casework.schema import Case

DECISIONS = ("accept", "edit", "reject")
"""Accept as it is, accept an edited version, or reject with a reason."""


def _case_json(case: Case) -> dict[str, Any]:
    return dump_record(case)


def generated_case_item(
    dataset: str,
    case: Case,
    *,
    source: str,
    note: str | None = None,
    record_review: bool = False,
) -> NewItem:
    """The review item of one generated case.

    Args:
        dataset: The dataset the case would join.
        case: The generated case.
        source: What generated it (a generator, a prompt version), shown to the reviewer.
        note: Anything else the reviewer should know.
        record_review: Write the reviewer and the time of the decision into the accepted
            case's `provenance.reviewer` / `reviewed_at` (`casework author` items do).
    """
    payload: dict[str, Any] = {"case": _case_json(case), "source": source, "note": note}
    if record_review:
        payload["record_review"] = True
    return NewItem(GENERATED_CASE_KIND, dataset, case.id, case.slice, payload)


def _edited(task: ReviewTask, data: Mapping[str, Any] | None) -> dict[str, Any]:
    if not data or "case" not in data:
        raise UsageError("an edit carries the edited case as JSON.", param="data")
    try:
        case = Case.model_validate(data["case"])
    except ValidationError as exc:
        raise InputErrors(problems_from_validation(exc, "edited case", None)) from None
    if case.id != task.subject:
        raise UsageError(
            f"the edited case keeps the id '{task.subject}'. Got '{case.id}'.", param="data"
        )
    return {"case": _case_json(case)}


@dataclass(frozen=True)
class GeneratedCaseKind:
    """The ``generated-case`` kind (see the module docstring)."""

    name: str = GENERATED_CASE_KIND
    decisions: tuple[str, ...] = DECISIONS

    def check(
        self,
        project: Project,
        task: ReviewTask,
        decision: str,
        reason: str | None,
        data: Mapping[str, Any] | None,
    ) -> dict[str, Any] | None:
        """An edit needs a valid case; a reject needs a reason; an accept carries nothing."""
        if decision == "edit":
            return _edited(task, data)
        if data:
            raise UsageError(f"only an edit carries a case. Got one with {decision}.", param="data")
        if decision == "reject" and not (reason or "").strip():
            raise UsageError("a rejected case needs a reason.", param="reason")
        return None

    def apply(
        self,
        project: Project,
        task: ReviewTask,
        decision: str,
        *,
        reason: str | None,
        reviewer: str,
        data: dict[str, Any] | None,
        now: datetime,
    ) -> None:
        """Write an accepted (or edited) case into the dataset's working tree."""
        if decision == "reject":
            return
        case = Case.model_validate((data or task.payload)["case"])
        if task.payload.get("record_review"):
            stamped = case.provenance.model_copy(update={"reviewer": reviewer, "reviewed_at": now})
            case = case.model_copy(update={"provenance": stamped})
        add_to_working_tree(project, task.dataset, case)


def add_to_working_tree(project: Project, dataset: str, case: Case) -> None:
    """Add one case to ``dataset``'s `cases.jsonl` (atomically, under the dataset's lock).

    Raises:
        UsageError: Unknown dataset, or a case with this id is already in it.
    """
    with dataset_lock(project, dataset):
        data = load_dataset(project, dataset)
        if data.case(case.id) is not None:
            raise UsageError(
                f"case '{case.id}' is already in dataset '{dataset}'; nothing was added."
            )
        write_cases(data.path / CASES_FILE, [*data.cases, case])
