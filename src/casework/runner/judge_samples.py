"""Repeated judge verdicts on reviewed items, for the flip rate of `judge certify --samples N`.

The judge is asked again on exactly what it graded: each reviewed item's trial is read back from
its run, and the judged check that gave the item's verdict is run again on the logged trajectory,
once per sample. Each sample sends its own seed (1..N), so no sample is the cached reply of
another or of the run itself; the judge keeps its temperature (0 unless configured otherwise).
Certification itself (:func:`casework.grading.certify.certify_judge`) sits below the runner and
cannot read runs, so it receives the function this module builds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from casework.dataset import load_dataset
from casework.grading.certify import Resampler
from casework.grading.graders import GradeContext, get_grader
from casework.grading.judge import Judge
from casework.grading.verdict import CheckResult
from casework.project import Project
from casework.runner.records import LoadedRun, TrialRecord
from casework.runner.store import load_run
from casework.schema import Case
from casework.workbench.models_judge import ReviewItemRow

__all__ = ["item_verdict", "judge_resampler", "source_check"]

RunLoader = Callable[[str], tuple[LoadedRun, Sequence[Case]]]


def source_check(trial: TrialRecord, case: Case, kind: str, fact_index: int | None) -> str | None:
    """The name of the logged judged check that gave an item's verdict (``None``: none did).

    Mirrors how `judge sample` makes items of a trial: ``outcome`` and ``unsatisfiable`` give the
    outcome item; a ``rubric`` check gives fact 0 when the case has a rubric; ``answer_facts``
    gives the label's facts and ``nl_assertions`` the indices after them.
    """
    facts = len(case.label.answer_facts) if case.label is not None else 0
    for check in trial.verdict.checks:
        if not check.judged or check.status == "undetermined":
            continue
        if kind == "outcome" and check.name in ("outcome", "unsatisfiable"):
            return check.name
        if kind != "answer_fact" or fact_index is None:
            continue
        if check.name == "rubric" and case.oracle.rubric and fact_index == 0:
            return check.name
        if check.name == "answer_facts" and fact_index < facts:
            return check.name
        if check.name == "nl_assertions" and fact_index >= facts:
            return check.name
    return None


def item_verdict(
    check: CheckResult | None, case: Case, kind: str, fact_index: int | None
) -> bool | None:
    """An item's verdict in a check run again (``None``: the judge gave none)."""
    if check is None or not check.judged or check.status == "undetermined":
        return None
    if kind == "outcome" or check.name == "rubric":
        return check.status == "pass"
    facts = len(case.label.answer_facts) if case.label is not None else 0
    index = (fact_index or 0) - (facts if check.name == "nl_assertions" else 0)
    if 0 <= index < len(check.findings):
        return check.findings[index]
    return None


def _asked(judge: Judge, trial: TrialRecord, case: Case, item: ReviewItemRow) -> bool | None:
    name = source_check(trial, case, item.kind, item.fact_index)
    if name is None:
        return None
    ctx = GradeContext(
        case=case, trajectory=trial.trajectory, initial_state=case.situation.state, judge=judge
    )
    return item_verdict(get_grader(name)(ctx), case, item.kind, item.fact_index)


def _loader(project: Project) -> RunLoader:
    seen: dict[str, tuple[LoadedRun, Sequence[Case]]] = {}

    def load(run_id: str) -> tuple[LoadedRun, Sequence[Case]]:
        if run_id not in seen:
            run = load_run(project, run_id)
            ref = f"{run.header.dataset}@{run.header.dataset_hash}"
            seen[run_id] = (run, load_dataset(project, ref).cases)
        return seen[run_id]

    return load


def judge_resampler(
    project: Project, judge: Judge, samples: int, *, loader: RunLoader | None = None
) -> Resampler:
    """A function asking ``judge`` ``samples`` times on each reviewed item it is given.

    Args:
        project: The project (runs and dataset versions are read from it).
        judge: The judge as configured now.
        samples: Verdicts to ask per item.
        loader: Reads a run and its dataset version's cases (default: from the project).

    Returns:
        A :data:`casework.grading.certify.Resampler`: per item key, one verdict per sample
        (``None`` where the judge gave none, or the item's trial or check is gone).
    """
    load = loader or _loader(project)

    def resample(items: Sequence[ReviewItemRow]) -> Mapping[str, Sequence[bool | None]]:
        out: dict[str, list[bool | None]] = {}
        for item in sorted(items, key=lambda i: i.key):
            run, cases = load(item.run_id)
            case = next((c for c in cases if c.id == item.case_id), None)
            trial = next(
                (t for t in run.trials if t.case_id == item.case_id and t.trial == item.trial),
                None,
            )
            if case is None or trial is None:
                out[item.key] = [None] * samples
                continue
            graded = judge.for_cases(cases)
            out[item.key] = [
                _asked(replace(graded, seed=i), trial, case, item) for i in range(1, samples + 1)
            ]
        return out

    return resample
