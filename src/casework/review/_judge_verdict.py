"""Review kind ``judge-verdict``: one sampled judge verdict, given to one reviewer, graded blind.

`casework judge sample` draws the verdicts and queues one item per (verdict, reviewer)
(:func:`verdict_items`); items sampled before the queue knew this kind are rebuilt from their runs
by :func:`judge_verdict_items`. The payload is the blind sheet line (question, rubric, fact,
conversation, the agent's calls and reply; never the judge's verdict, the label or the case id).
A decision is the person's answer (``resolve|clarify|refuse|escalate`` for an outcome item,
``yes|no`` for a fact) and is stored by :func:`casework.review._verdicts.store_answer`, the
function sheet imports use. :func:`export_verdict_sheets` re-issues the signed sheets of the open
items, one per reviewer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from casework.atomic import atomic_write_bytes
from casework.dataset import load_dataset
from casework.dataset.copies import record_copies
from casework.errors import InputError, UsageError
from casework.labelling import sheet_key
from casework.project import Project
from casework.review._items import ReviewItem, run_items
from casework.review._names import JUDGE_VERDICT, verdict_subject
from casework.review._sheets import SheetFormat, render_sheet, sheet_line, verdict_signature
from casework.review._task import NewItem, ReviewTask, WorkbenchKind
from casework.review._verdicts import store_answer
from casework.runner import load_run
from casework.schema import OUTCOMES
from casework.workbench import open_workbench
from casework.workbench.models_judge import ReviewItemRow, ReviewVerdictRow

DECISIONS = (*OUTCOMES, "yes", "no")
"""An outcome item takes an outcome; an answer-fact item takes yes or no."""


def verdict_items(
    items: Sequence[ReviewItem], who: Sequence[Sequence[str]], datasets: Mapping[str, str]
) -> list[NewItem]:
    """One item per drawn verdict and reviewer it was given to.

    Args:
        items: The drawn verdicts.
        who: Reviewers of each (one or two).
        datasets: Dataset name of each run id.
    """
    out = []
    for item, names in zip(items, who, strict=True):
        for name in names:
            payload = {k: v for k, v in sheet_line(item, name).items() if k != "signature"}
            payload.pop("answer")
            out.append(
                NewItem(
                    JUDGE_VERDICT,
                    datasets[item.run_id],
                    verdict_subject(item.sheet_id, name),
                    item.slice,
                    payload,
                )
            )
    return out


def judge_verdict_items(project: Project, dataset: str | None = None) -> list[NewItem]:
    """Items of every sampled verdict a reviewer has not answered yet, rebuilt from the runs.

    Args:
        project: The project.
        dataset: Only verdicts of runs on this dataset.

    Raises:
        UsageError: A sampled run is gone.
    """
    with open_workbench(project) as wb, wb.session() as s:
        rows = list(s.scalars(select(ReviewItemRow).order_by(ReviewItemRow.key)))
        answered = set(s.execute(select(ReviewVerdictRow.item_key, ReviewVerdictRow.reviewer)))
    wanted: dict[str, list[ReviewItemRow]] = {}
    for row in rows:
        if any((row.key, name) not in answered for name in row.reviewers):
            wanted.setdefault(row.run_id, []).append(row)
    private = project.config.models.judge.keeps_data_local
    out: list[NewItem] = []
    for run_id, sampled in sorted(wanted.items()):
        run = load_run(project, run_id)
        name, _, version = run.header.dataset_ref.partition("@")
        if dataset is not None and name != dataset:
            continue
        cases = load_dataset(project, name if version == "working" else run.header.dataset_ref)
        by_key = {i.key: i for i in run_items(run, cases.cases, private=private)}
        for row in sampled:
            item = by_key.get(row.key)
            if item is None:
                continue  # the finding is no longer in the run's log (a frozen case, a re-grade)
            names = [n for n in row.reviewers if (row.key, n) not in answered]
            out += verdict_items([item], [names], {run_id: name})
    return out


def export_verdict_sheets(
    project: Project,
    tasks: Sequence[ReviewTask],
    out: Path,
    *,
    sheet_format: SheetFormat = "jsonl",
) -> dict[str, Path]:
    """Write the signed sheet of each reviewer holding open ``tasks``; the paths by reviewer.

    Each line is signed for its reviewer with the workbench's secret (created if no sheet was
    ever signed), so a sheet written before signing existed can be re-issued and imported.

    Raises:
        InputError: ``out`` is a file.
    """
    if out.exists() and not out.is_dir():
        raise InputError(str(out), None, None, "is a file; --out names a folder")
    by_reviewer: dict[str, list[ReviewTask]] = {}
    for task in tasks:
        if task.kind == JUDGE_VERDICT and task.status == "open":
            by_reviewer.setdefault(task.payload["reviewer"], []).append(task)
    if not by_reviewer:
        return {}
    out.mkdir(parents=True, exist_ok=True)
    sheets: dict[str, Path] = {}
    with open_workbench(project) as wb, wb.session() as s:
        key = sheet_key(s)
        assert key is not None  # created on first use
        ids = {t.payload["item"] for ts in by_reviewer.values() for t in ts}
        cases = {
            r.sheet_id: r.case_id
            for r in s.scalars(select(ReviewItemRow).where(ReviewItemRow.sheet_id.in_(ids)))
        }
    for name, held in sorted(by_reviewer.items()):
        lines = [
            {
                **t.payload,
                "answer": None,
                "signature": verdict_signature(key, name, t.payload["item"]),
            }
            for t in held
        ]
        path = out / f"verdicts-{name}.{sheet_format}"
        atomic_write_bytes(path, render_sheet(lines, sheet_format))
        sheets[name] = path
        per_dataset: dict[str, set[str]] = {}
        for t in held:
            per_dataset.setdefault(t.dataset, set()).add(cases[t.payload["item"]])
        for dataset, case_ids in sorted(per_dataset.items()):
            record_copies(project, "judge verdict sheet", dataset, [path], case_ids)
    return sheets


@dataclass(frozen=True)
class JudgeVerdictKind(WorkbenchKind):
    """The ``judge-verdict`` kind (see the module docstring)."""

    name: str = JUDGE_VERDICT
    decisions: tuple[str, ...] = DECISIONS

    def check(
        self,
        project: Project,
        task: ReviewTask,
        decision: str,
        reason: str | None,
        data: Mapping[str, Any] | None,
    ) -> dict[str, Any] | None:
        """The answer must fit the item: an outcome for an outcome item, yes or no for a fact."""
        if data:
            raise UsageError(f"a {JUDGE_VERDICT} decision carries no data.", param="data")
        fits = OUTCOMES if task.payload["kind"] == "outcome" else ("yes", "no")
        if decision not in fits:
            raise UsageError(
                f"this {task.payload['kind']} item takes {', '.join(fits)}. Got '{decision}'.",
                param="decision",
            )
        return None

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
        """Store the answer as a sheet import does; only the reviewer it was given to answers."""
        given_to = task.payload["reviewer"]
        if reviewer != given_to:
            raise UsageError(
                f"review item {task.id} was given to {given_to}; each reviewer answers their own.",
                param="reviewer",
            )
        item = session.scalars(
            select(ReviewItemRow).where(ReviewItemRow.sheet_id == task.payload["item"])
        ).one_or_none()
        if item is None:
            raise UsageError(f"review item {task.id}: its sampled verdict is gone.")
        store_answer(session, item, reviewer, decision, source="review decide", at=now)
