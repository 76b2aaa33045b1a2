"""People's verdicts on a run's own replies, per trial: the labelled sample of PPI++.

`casework judge sample` draws judge verdicts of runs onto blind sheets; once people's verdicts are
imported (and two people agree, or one was asked), each reviewed item says what people think of
one judged finding of one trial. PPI++ (:func:`casework.runner.analysis.corrected_pass` with
``estimator="ppi++"``) needs people's verdict on a **trial**: a judge-decided trial passes only when
every judged finding passes, so a trial counts as reviewed only when every judged finding of it
was reviewed, and people pass it when they passed every one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping

from sqlalchemy import select

from casework.grading.certify import compare
from casework.project import Project
from casework.runner.records import LoadedRun, TrialRecord
from casework.workbench import open_workbench
from casework.workbench.db import workbench_exists
from casework.workbench.models_judge import ReviewItemRow, ReviewVerdictRow

__all__ = ["Reviewed", "judged_findings", "reviewed_trials"]

Reviewed = Mapping[tuple[str, int], bool]
"""People's verdict per ``(case_id, trial)`` of a run."""


def judged_findings(trial: TrialRecord) -> int:
    """How many review items `judge sample` makes of a trial's judged checks.

    One outcome item (``outcome`` or ``unsatisfiable``), fact items numbered from 0 (the rubric
    applied as fact 0 shares its number with the first answer fact), then the NL assertions.
    """
    judged = [c for c in trial.verdict.checks if c.judged and c.status != "undetermined"]
    outcome = any(c.name in ("outcome", "unsatisfiable") for c in judged)
    rubric = any(c.name == "rubric" for c in judged)
    facts = sum(len(c.findings) for c in judged if c.name == "answer_facts")
    nl = sum(len(c.findings) for c in judged if c.name == "nl_assertions")
    return int(outcome) + max(int(rubric), facts) + nl


def reviewed_trials(project: Project, run: LoadedRun) -> dict[tuple[str, int], bool]:
    """People's verdict on each fully reviewed trial of ``run`` (from the workbench).

    Items whose two people disagree are left out until adjudicated (as certification does); a
    trial with a judged finding nobody reviewed is left out. A run no judge decided, or a
    project without a workbench, has none (and no workbench is created to say so).
    """
    if not any(judged_findings(t) for t in run.trials) or not workbench_exists(project):
        return {}
    with open_workbench(project) as wb, wb.session() as s:
        items = s.scalars(select(ReviewItemRow).where(ReviewItemRow.run_id == run.header.run_id))
        found = list(items)
        keys = [i.key for i in found]
        verdicts = s.scalars(select(ReviewVerdictRow).where(ReviewVerdictRow.item_key.in_(keys)))
        compared, _, _ = compare(found, list(verdicts))
    by_key = {c.key: c.human_pass for c in compared}
    people: dict[tuple[str, int], list[bool]] = defaultdict(list)
    for item in found:
        if item.key in by_key:
            people[(item.case_id, item.trial)].append(by_key[item.key])
    out: dict[tuple[str, int], bool] = {}
    for trial in run.trials:
        answers = people.get((trial.case_id, trial.trial))
        if answers and len(answers) >= judged_findings(trial):
            out[(trial.case_id, trial.trial)] = all(answers)
    return out
