"""How each workbench table that can hold a customer's data loses the rows that leave.

Each eraser takes the open workbench and the erasure's context and returns how many rows it
deleted (or, for the few tables whose rows only mention a case among others, rewrote).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sqlalchemy import ColumnElement, delete, false, or_, select
from sqlalchemy.orm import InstrumentedAttribute

from casework.erasure._target import Context, datasets_of
from casework.runner.redact import redact_run_rows
from casework.workbench import WebLabelViewRow, WebSkipRow, Workbench
from casework.workbench.models_judge import ReviewItemRow, ReviewVerdictRow
from casework.workbench.models_labelling import AssignmentRow, RawLabelRow
from casework.workbench.models_leakage import LeakageFlag
from casework.workbench.models_llm import LLMResponse
from casework.workbench.models_review import GuidelineGapRow, ReviewTaskRow
from casework.workbench.models_runs import JudgeCalibrationRow, RunRow

TableEraser = Callable[[Workbench, Context], int]


def _naming(
    ctx: Context, dataset: InstrumentedAttribute[Any], *columns: InstrumentedAttribute[Any]
) -> ColumnElement[bool]:
    """Rows whose ``columns`` hold an id that leaves the row's dataset."""
    target = ctx.target
    terms: list[ColumnElement[bool]] = []
    for name, ids in sorted(target.by_dataset.items()):
        if ids:
            terms += [(dataset == name) & col.in_(sorted(ids)) for col in columns]
    if target.anywhere:
        terms += [col.in_(sorted(target.anywhere)) for col in columns]
    return or_(false(), *terms)


def _delete_naming(model: Any, *columns: str) -> TableEraser:
    """Delete the rows of ``model`` whose (dataset, ``columns``) name a row that leaves."""

    def erase(wb: Workbench, ctx: Context) -> int:
        cols = [getattr(model, c) for c in columns]
        with wb.session() as s:
            found = s.scalars(select(model.id).where(_naming(ctx, model.dataset, *cols))).all()
            if found and not ctx.dry_run:
                s.execute(delete(model).where(model.id.in_(found)))
        return len(found)

    return erase


erase_labels = _delete_naming(RawLabelRow, "case_id")
erase_assignments = _delete_naming(AssignmentRow, "case_id")
erase_label_views = _delete_naming(WebLabelViewRow, "case_id")
erase_skips = _delete_naming(WebSkipRow, "case_id")
erase_leakage_flags = _delete_naming(LeakageFlag, "left_id", "right_id")


def erase_guideline_gaps(wb: Workbench, ctx: Context) -> int:
    """Delete gap notes about a row that leaves (their note may describe the customer's case)."""
    with wb.session() as s:
        rows = s.execute(
            select(GuidelineGapRow.id, GuidelineGapRow.dataset, GuidelineGapRow.case_id).where(
                GuidelineGapRow.case_id.is_not(None)
            )
        ).all()
        found = [i for i, ds, case in rows if case in ctx.target.ids(ds)]
        if found and not ctx.dry_run:
            s.execute(delete(GuidelineGapRow).where(GuidelineGapRow.id.in_(found)))
    return len(found)


def _subject_ids(subject: str) -> set[str]:
    """Case ids a review item's subject names (`left~right` for a pair, else one id)."""
    return set(subject.split("~"))


def erase_review_items(wb: Workbench, ctx: Context) -> int:
    """Delete review items about a row that leaves, or whose texts hold its marks.

    A decided item goes too: its payload keeps the texts it showed.
    """
    with wb.session() as s:
        found = []
        for row in s.scalars(select(ReviewTaskRow)).all():
            texts = json.dumps([row.payload, row.data, row.reason], ensure_ascii=False)
            if _subject_ids(row.subject) & ctx.target.ids(row.dataset) or ctx.target.marks(texts):
                found.append(row.id)
        if found and not ctx.dry_run:
            s.execute(delete(ReviewTaskRow).where(ReviewTaskRow.id.in_(found)))
    return len(found)


def erase_judge_items(wb: Workbench, ctx: Context) -> int:
    """Delete sampled judge verdicts on a row that leaves; note whose sheets showed them."""
    with wb.session() as s:
        datasets = dict(s.execute(select(RunRow.id, RunRow.dataset)).all())
        found = []
        for row in s.scalars(select(ReviewItemRow)).all():
            if row.case_id in ctx.target.ids(datasets.get(row.run_id)):
                found.append(row.key)
                ctx.judge_sheets.update(row.reviewers)
        if found and not ctx.dry_run:
            s.execute(delete(ReviewItemRow).where(ReviewItemRow.key.in_(found)))
    return len(found)


def erase_judge_verdicts(wb: Workbench, ctx: Context) -> int:
    """Delete people's verdicts on a sampled item of a row that leaves (the key names the case)."""
    with wb.session() as s:
        datasets = dict(s.execute(select(RunRow.id, RunRow.dataset)).all())
        found = []
        for vid, key in s.execute(select(ReviewVerdictRow.id, ReviewVerdictRow.item_key)).all():
            run_id, _, rest = key.partition("/")
            if rest.partition("/")[0] in ctx.target.ids(datasets.get(run_id)):
                found.append(vid)
        if found and not ctx.dry_run:
            s.execute(delete(ReviewVerdictRow).where(ReviewVerdictRow.id.in_(found)))
    return len(found)


def erase_trials(wb: Workbench, ctx: Context) -> int:
    """Delete the trials of rows that leave; their runs' headers and counts are rewritten."""
    total = 0
    for name in datasets_of(ctx.project, ctx.target):
        ids = ctx.target.ids(name)
        trials, runs = redact_run_rows(wb, name, ids, dry_run=ctx.dry_run)
        total += trials
        ctx.runs_changed.update(runs)
    return total


def erase_runs(wb: Workbench, ctx: Context) -> int:
    """Runs rewritten by :func:`erase_trials` (which runs first)."""
    return len(ctx.runs_changed)


def _calibration_without(report: dict[str, Any], ids: set[str]) -> dict[str, Any]:
    """A stored calibration report without the removed cases' disagreements (statistics stay)."""
    disagreements = [d for d in report.get("disagreements", []) if d.get("case_id") not in ids]
    failed = [c for c in report.get("failed", []) if c not in ids]
    if disagreements == report.get("disagreements", []) and failed == report.get("failed", []):
        return report
    return {**report, "disagreements": disagreements, "failed": failed}


def erase_calibrations(wb: Workbench, ctx: Context) -> int:
    """Redact judge calibrations: their disagreements naming a row that leaves go."""
    changed = 0
    with wb.session() as s:
        for cal in s.scalars(select(JudgeCalibrationRow)).all():
            report = _calibration_without(cal.report, ctx.target.ids(cal.dataset))
            if report != cal.report:
                changed += 1
                if not ctx.dry_run:
                    cal.report = report
    return changed


def erase_llm_responses(wb: Workbench, ctx: Context) -> int:
    """Delete cached model replies holding a mark of a row that leaves."""
    with wb.session() as s:
        found = [
            key
            for key, text, params in s.execute(
                select(LLMResponse.key, LLMResponse.text, LLMResponse.params)
            ).all()
            if ctx.target.marks(text) or ctx.target.marks(params)
        ]
        if found and not ctx.dry_run:
            s.execute(delete(LLMResponse).where(LLMResponse.key.in_(found)))
    return len(found)
