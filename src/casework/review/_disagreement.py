"""Review kind ``disagreement``: two blind labels of one case differ and an adjudicator decides.

Items are the open disagreements of a dataset (:func:`disagreement_items`, from
:func:`casework.labelling.adjudication_queue`): the payload holds the case's situation and the two
labels side by side as A and B, anonymised as the adjudication sheets are (no labeller ids, no
times, never an agent's output). Decisions are those an adjudication sheet line takes: ``A`` or
``B`` (take that label), ``merge`` (per field, from A or B) or ``write`` (the final label), each
stored through :func:`casework.labelling.adjudication_queue.adjudicate_in` in the transaction that
claims the item, so the adjudicator rules (never one who labelled the case, never a case another
adjudicator holds) are the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, cast

from sqlalchemy import select
from sqlalchemy.orm import Session

from casework.errors import UsageError
from casework.labelling.adjudication_queue import (
    MERGE_FIELDS,
    AdjudicationChoice,
    FinalLabel,
    adjudicate_in,
    adjudication_queue,
)
from casework.project import Project
from casework.review._task import NewItem, ReviewTask, WorkbenchKind
from casework.workbench import open_workbench
from casework.workbench.db import workbench_exists
from casework.workbench.models_labelling import RawLabelRow

DISAGREEMENT = "disagreement"
"""The kind's name."""
DECISIONS = ("A", "B", "merge", "write")
"""Take label A, take label B, merge them field by field, or write the final label."""
_LABEL_FIELDS = ("outcome", "required_tools", "forbidden_tools", "answer_facts")


def disagreement_items(project: Project, dataset: str) -> list[NewItem]:
    """One item per open disagreement of ``dataset``, lowest-agreement slice first.

    Raises:
        UsageError: Unknown dataset.
        InputErrors: Bad dataset files or guidelines, or hand-edited raw labels.
    """
    if not _has_labels(project, dataset):
        return []  # nothing labelled: no disagreement (and no tool declarations needed)
    queue = adjudication_queue(project, dataset)
    tools = [{"name": n, "description": d} for n, d in queue.tools]
    items = []
    for entry in queue.entries:
        payload = asdict(entry)
        payload.pop("names")  # never revealed in the queue
        payload["tools"] = tools
        items.append(NewItem(DISAGREEMENT, queue.dataset, entry.case_id, entry.slice, payload))
    return items


def disagreement_names(project: Project, tasks: Sequence[ReviewTask]) -> dict[int, dict[str, str]]:
    """Who gave labels A and B (and who holds the case) for each open ``disagreement`` item.

    The items themselves stay blind; this is read from the labels when asked, as
    :func:`casework.labelling.adjudication_queue` reveals them. Other items get no entry.
    """
    out: dict[int, dict[str, str]] = {}
    wanted = [t for t in tasks if t.kind == DISAGREEMENT and t.status == "open"]
    for dataset in sorted({t.dataset for t in wanted}):
        queue = adjudication_queue(project, dataset, reveal_names=True)
        names = {e.case_id: dict(e.names or {}) for e in queue.entries}
        out |= {
            t.id: names[t.subject] for t in wanted if t.dataset == dataset and t.subject in names
        }
    return out


def _has_labels(project: Project, dataset: str) -> bool:
    released = project.dataset_dir(dataset) / "labels.jsonl"
    if released.is_file() and released.stat().st_size:
        return True
    if not workbench_exists(project):
        return False
    with open_workbench(project) as wb, wb.session() as session:
        found = session.scalar(
            select(RawLabelRow.case_id).where(RawLabelRow.dataset == dataset).limit(1)
        )
    return found is not None


def order_key(task: ReviewTask) -> tuple[bool, float, str, str]:
    """Lowest-agreement slice first (an undefined kappa first), then slice and case."""
    kappa = task.payload.get("slice_kappa")
    return (kappa is not None, float(kappa or 0.0), task.slice or "", task.subject)


def _strings(value: Any, name: str) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{name} is a list of strings. Got {value!r}.", param="data")
    return list(value)


def _checked_data(decision: str, data: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(data) - {"fields", "label", "gap_note"})
    if unknown:
        raise UsageError(
            f"a {DISAGREEMENT} decision carries fields, label or gap_note. Got {', '.join(unknown)}.",
            param="data",
        )
    out: dict[str, Any] = {}
    gap = data.get("gap_note")
    if gap is not None:
        if not isinstance(gap, str) or not gap.strip():
            raise UsageError("a guideline gap note is some text.", param="data")
        out["gap_note"] = gap
    fields, label = data.get("fields"), data.get("label")
    if (fields is not None) != (decision == "merge"):
        raise UsageError("a merge, and only a merge, says which side each field comes from.")
    if (label is not None) != (decision == "write"):
        raise UsageError("writing the final label, and only that, carries the label.")
    if fields is not None:
        if not isinstance(fields, dict) or not all(isinstance(v, str) for v in fields.values()):
            raise UsageError(
                f"a merge maps each of {', '.join(MERGE_FIELDS)} to A or B. Got {fields!r}.",
                param="data",
            )
        out["fields"] = {str(k): v.strip().upper() for k, v in fields.items()}
    if label is not None:
        if not isinstance(label, dict) or not isinstance(label.get("outcome"), str):
            raise UsageError("the written label needs an outcome.", param="data")
        extra = sorted(set(label) - set(_LABEL_FIELDS))
        if extra:
            raise UsageError(
                f"a label has {', '.join(_LABEL_FIELDS)}. Got {', '.join(extra)}.", param="data"
            )
        out["label"] = {"outcome": label["outcome"]} | {
            f: _strings(label.get(f), f) for f in _LABEL_FIELDS[1:]
        }
    return out


@dataclass(frozen=True)
class DisagreementKind(WorkbenchKind):
    """The ``disagreement`` kind (see the module docstring)."""

    name: str = DISAGREEMENT
    decisions: tuple[str, ...] = DECISIONS

    def check(
        self,
        project: Project,
        task: ReviewTask,
        decision: str,
        reason: str | None,
        data: Mapping[str, Any] | None,
    ) -> dict[str, Any] | None:
        """A merge carries ``fields``, a write its ``label``; any may carry a ``gap_note``."""
        checked = _checked_data(decision, data or {})
        return checked or None

    def apply_in(
        self,
        session: Session,
        project: Project,
        task: ReviewTask,
        decision: str,
        *,
        reason: str | None,
        reviewer: str,
        data: dict[str, Any] | None,
        seconds: float | None,
        now: datetime,
    ) -> None:
        """Store the adjudication as an adjudication sheet line is, in the claiming transaction."""
        given = data or {}
        label = given.get("label")
        adjudicate_in(
            session,
            project,
            task.dataset,
            task.subject,
            adjudicator=reviewer,
            choice=cast(AdjudicationChoice, decision),
            fields=given.get("fields"),
            label=FinalLabel(
                label["outcome"],
                tuple(label["required_tools"]),
                tuple(label["forbidden_tools"]),
                tuple(label["answer_facts"]),
            )
            if label
            else None,
            gap_note=given.get("gap_note"),
            seconds=seconds,
            now=now,
        )
