"""The judge as a labeller (`casework judge labeller-check`), and loading the configured judge.

The judge labels the outcome of human-labelled cases of a slice from what a labeller's blind sheet
shows (:func:`labeller_view`), never the label; Cohen's kappa against the people's outcome says
how well it labels. That is not what it does in a run (it reads replies), so it does not make its
verdicts admissible: a certification of its verdicts against people's does
(`casework judge certify`). Entry points: :func:`calibrate_judge`, :func:`load_judge`,
:func:`latest_calibrations`, :func:`stored_certifications`, :func:`labeller_view`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from casework.agreement import cohen_kappa
from casework.agreement.table import confusion_matrix
from casework.dataset import declared_tools, load_dataset
from casework.dataset.tools import ToolDecl
from casework.errors import UsageError
from casework.grading.judge import Certification, Judge, JudgeCalibration
from casework.labelling import read_guideline
from casework.labelling.guidelines import guideline_path
from casework.labelling.sheets import sheet_line
from casework.llm import LLMError, client_for
from casework.llm.accounting import Ledger
from casework.project import Project
from casework.schema import OUTCOMES, Case, Outcome
from casework.workbench import open_workbench
from casework.workbench.models_judge import JudgeCertificationRow
from casework.workbench.models_runs import JudgeCalibrationRow

__all__ = [
    "LABELLER_VIEW",
    "CalibrationReport",
    "Disagreement",
    "calibrate_judge",
    "judge_configured",
    "labeller_view",
    "latest_calibrations",
    "load_judge",
    "save_calibration",
    "stored_certifications",
]


@dataclass(frozen=True)
class Disagreement:
    """A calibration case where judge and people differ."""

    case_id: str
    human: str
    judge: str
    reason: str = ""


@dataclass(frozen=True)
class CalibrationReport:
    """Result of `casework judge labeller-check` on one slice.

    Attributes:
        calibration: Kappa, accuracy, n and threshold (``admissible`` follows from them).
        categories: Outcome categories, in the order of ``confusion`` rows and columns.
        confusion: Rows: human outcome; columns: judge outcome.
        disagreements: Cases where they differ.
        failed: Case ids the judge gave no usable answer for (left out of the statistics).
    """

    calibration: JudgeCalibration
    categories: list[str]
    confusion: list[list[int]]
    disagreements: list[Disagreement] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, object]:
        """JSON form (stored in the workbench, printed with `--format json`)."""
        cal = self.calibration
        return {
            "slice": cal.slice,
            "judge_model": cal.judge_model,
            "n": cal.n,
            "kappa": cal.kappa,
            "accuracy": cal.accuracy,
            "threshold": cal.threshold,
            "admissible": cal.admissible,
            "categories": self.categories,
            "confusion": self.confusion,
            "disagreements": [d.__dict__ for d in self.disagreements],
            "failed": self.failed,
        }


def judge_configured(project: Project) -> bool:
    """Whether `[models.judge]` names a usable model (a scripted judge needs its script)."""
    cfg = project.config.models.judge
    return cfg.provider != "scripted" or bool(cfg.script)


def load_judge(project: Project, *, ledger: Ledger | None = None) -> Judge | None:
    """The configured judge with its labeller checks and certifications, or ``None``.

    Its rubric digests are unset: :meth:`Judge.for_cases` tells it the rubrics it grades by.
    """
    if not judge_configured(project):
        return None
    client = client_for(project, "judge", ledger=ledger)
    return Judge(
        client,
        latest_calibrations(project, client.model),
        certifications=stored_certifications(project, client.model),
    )


def _human_labelled(case: Case, labelled_ids: set[str]) -> bool:
    return case.label is not None and (bool(case.label.labellers) or case.id in labelled_ids)


#: The parts of a blind labelling sheet line the judge is shown: everything a labeller reads except
#: bookkeeping (sheet kind, dataset, labeller, case id: an id may carry provenance, such as the
#: transform of a synthetic variant) and the empty answer fields.
LABELLER_VIEW = ("slice", "guideline_version", "situation", "tools")


def labeller_view(
    case: Case, tools: Mapping[str, ToolDecl], guideline_version: str | None
) -> dict[str, Any]:
    """What a labeller's blind sheet shows of ``case``: the situation, declared tools and slice.

    Built by the sheets' own :func:`casework.labelling.sheets.sheet_line`, so the judge is
    calibrated on exactly the information people labelled from, and never sees the label, oracle,
    ``satisfiable`` or provenance.
    """
    line = sheet_line("label", "-", "judge", case, guideline_version or "", tools)
    view = {key: line[key] for key in LABELLER_VIEW}
    view["guideline_version"] = guideline_version
    return view


def _guideline(project: Project, slice_name: str) -> tuple[str, str | None]:
    """The slice's guideline text and version (empty and ``None`` when it has none).

    Raises:
        InputError: The guideline file has no valid version.
    """
    if not guideline_path(project, slice_name).is_file():
        return "", None
    guideline = read_guideline(project, slice_name)
    return guideline.text, guideline.version


def calibrate_judge(
    project: Project,
    dataset_ref: str,
    slice_name: str,
    *,
    splits: Sequence[str] = (),
    judge: Judge | None = None,
    now: datetime | None = None,
    save: bool = True,
    command: str = "judge labeller-check",
) -> CalibrationReport:
    """Run the judge over the human-labelled cases of a slice and measure agreement.

    Args:
        project: The project.
        dataset_ref: ``name`` or ``name@version``.
        slice_name: Slice to calibrate on.
        splits: Restrict to these splits (default: every split).
        judge: The judge (default: the configured one).
        now: Time stamp of the stored result (injected by tests).
        save: Store the result in the workbench (informative: it makes no verdict admissible).
        command: The command named in error messages.

    Raises:
        UsageError: No judge configured, or the slice has no human-labelled cases.
        ConfigError: The declared tools (part of what labellers see) cannot be read.
        InputError: The slice's guideline file has no valid version.
    """
    judge = judge or load_judge(project)
    if judge is None:
        raise UsageError(
            f"{command}: no judge configured; set [models.judge] in casework.toml "
            "(provider, model, and base_url or script)."
        )
    dataset = load_dataset(project, dataset_ref)
    labelled_ids = {r.case_id for r in dataset.labels}
    private = project.config.models.judge.keeps_data_local
    cases = [
        c
        for c in dataset.cases
        if c.slice == slice_name
        and (not splits or c.split in splits)
        and _human_labelled(c, labelled_ids)
        and (private or not c.frozen)  # frozen content reaches only a private judge
    ]
    if not cases:
        raise UsageError(
            f"{command}: slice '{slice_name}' of {dataset.ref} has no human-labelled cases"
            + (f" in split(s) {', '.join(splits)}" if splits else "")
            + "."
        )
    guideline, version = _guideline(project, slice_name)
    tools = declared_tools(project)
    human: list[Outcome] = []
    judged: list[Outcome] = []
    disagreements: list[Disagreement] = []
    failed: list[str] = []
    for case in cases:
        assert case.label is not None
        try:
            answer = judge.label_outcome(labeller_view(case, tools, version), guideline)
        except LLMError:
            failed.append(case.id)
            continue
        human.append(case.label.outcome)
        judged.append(answer.outcome)
        if answer.outcome != case.label.outcome:
            disagreements.append(
                Disagreement(case.id, case.label.outcome, answer.outcome, answer.reason)
            )
    threshold = project.config.thresholds.judge_agreement
    categories: list[str] = list(OUTCOMES)
    if human:
        kappa = cohen_kappa(human, judged, categories=categories).kappa
        table = confusion_matrix(human, judged, categories=categories)
        matrix = [[int(x) for x in row] for row in table.counts]
        accuracy = sum(h == j for h, j in zip(human, judged, strict=True)) / len(human)
    else:
        kappa, matrix, accuracy = None, [[0] * len(categories) for _ in categories], 0.0
    report = CalibrationReport(
        calibration=JudgeCalibration(
            slice_name, judge.model, kappa, accuracy, len(human), threshold
        ),
        categories=categories,
        confusion=matrix,
        disagreements=disagreements,
        failed=failed,
    )
    if save:
        save_calibration(project, dataset.name, dataset.hash, report, now or datetime.now(UTC))
    return report


def save_calibration(
    project: Project, dataset: str, dataset_hash: str, report: CalibrationReport, now: datetime
) -> None:
    """Store one calibration result in the workbench."""
    cal = report.calibration
    with open_workbench(project) as wb, wb.session() as s:
        s.add(
            JudgeCalibrationRow(
                dataset=dataset,
                slice=cal.slice,
                judge_model=cal.judge_model,
                kappa=cal.kappa,
                accuracy=cal.accuracy,
                n=cal.n,
                threshold=cal.threshold,
                admissible=cal.admissible,
                created_at=now,
                report=report.as_json(),
                dataset_hash=dataset_hash,
            )
        )


def latest_calibrations(project: Project, judge_model: str) -> dict[str, JudgeCalibration]:
    """The newest stored calibration of ``judge_model`` per slice."""
    with open_workbench(project) as wb, wb.session() as s:
        rows = s.scalars(
            select(JudgeCalibrationRow)
            .where(JudgeCalibrationRow.judge_model == judge_model)
            .order_by(JudgeCalibrationRow.created_at, JudgeCalibrationRow.id)
        ).all()
    return {
        r.slice: JudgeCalibration(r.slice, r.judge_model, r.kappa, r.accuracy, r.n, r.threshold)
        for r in rows
    }


def _case_counts(report: dict[str, object]) -> tuple[tuple[int, int, int, int], ...]:
    """The per-case counts a certification stored (none from before they were recorded)."""
    rows = report.get("case_counts")
    if not isinstance(rows, list):
        return ()
    return tuple((int(a), int(b), int(c), int(d)) for a, b, c, d in rows)


def stored_certifications(project: Project, judge_model: str) -> list[Certification]:
    """Every stored certification of ``judge_model``, oldest first (stale ones included)."""
    with open_workbench(project) as wb, wb.session() as s:
        rows = s.scalars(
            select(JudgeCertificationRow)
            .where(JudgeCertificationRow.judge_model == judge_model)
            .order_by(JudgeCertificationRow.created_at, JudgeCertificationRow.id)
        ).all()
    return [
        Certification(
            slice=r.slice,
            kind=r.kind,
            judge_model=r.judge_model,
            prompt_version=r.prompt_version,
            rubric_digest=r.rubric_digest,
            tp=r.tp,
            fn=r.fn,
            tn=r.tn,
            fp=r.fp,
            admissible=r.admissible,
            # SQLite returns stored times without their zone; they were written in UTC.
            certified_at=r.created_at if r.created_at.tzinfo else r.created_at.replace(tzinfo=UTC),
            cases=_case_counts(r.report),
        )
        for r in rows
    ]
