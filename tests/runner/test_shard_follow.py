"""A sharded run's parent follows the shard files: its workbench rows and progress match the log.

Without a progress observer the parent only parses each shard line; with one, the observer gets
each trial's validated record (or, when it wants verdicts only, each verdict). Either way the
workbench holds the rows a run in one process would store for the same log lines.
"""

from __future__ import annotations

import pytest
from sqlalchemy import select

from casework.project import Project
from casework.runner.records import TrialRecord, read_log
from casework.runner.run import RunRequest
from casework.runner.shards import run_sharded
from casework.runner.store import read_trial_line, trial_row, trial_row_from_line
from casework.workbench import open_workbench
from casework.workbench.models_runs import TrialRow

FLAKY = "python:tests.runner.sample_agents:flaky"
COLUMNS = ("run_id", "case_id", "trial", "slice", "split", "source", "passed", "admissible")


class Seen:
    """A progress observer keeping what it was given."""

    def __init__(self) -> None:
        self.total = -1
        self.records: list[TrialRecord] = []

    def started(self, total: int, done: int) -> None:
        self.total = total

    def trial_done(self, record: TrialRecord) -> None:
        self.records.append(record)


def _rows(project: Project, run_id: str) -> dict[tuple[str, int], dict[str, object]]:
    with open_workbench(project) as wb, wb.session() as s:
        rows = s.scalars(select(TrialRow).where(TrialRow.run_id == run_id)).all()
        return {
            (r.case_id, r.trial): {
                **{c: getattr(r, c) for c in COLUMNS},
                "duration_s": r.duration_s,
                "cost_usd": r.cost_usd,
                "record": r.record,
            }
            for r in rows
        }


@pytest.mark.parametrize("observed", [False, True])
def test_the_parent_stores_and_reports_what_the_shards_logged(
    project: Project, observed: bool
) -> None:
    seen = Seen() if observed else None
    run_id = f"r-follow-{observed}"
    summary = run_sharded(
        project,
        RunRequest(
            dataset="refunds", agent=FLAKY, k=3, concurrency=4, use_judge=False, run_id=run_id
        ),
        workers=2,
        observer=seen,
    )
    log = read_log(summary.log)
    lines = summary.log.read_text(encoding="utf-8").splitlines()[1:-1]
    assert len(log.trials) == len(lines) == 15
    # Each stored row is what a run in one process stores for the same log line.
    parsed = [(TrialRecord.model_validate_json(line), line) for line in lines]
    want = {(t.case_id, t.trial): trial_row(t, line) for t, line in parsed}
    assert _rows(project, run_id) == want
    # The end record counts the verdicts of the log (flaky: some pass, some fail or stay open).
    assert summary.end.passed == sum(t.verdict.passed is True for t in log.trials)
    assert summary.end.failed == sum(t.verdict.passed is False for t in log.trials)
    assert summary.end.agent_version in {"good-1", "flaky-1"}
    if seen is not None:
        assert seen.total == 15
        assert sorted(seen.records, key=lambda r: (r.trial, r.case_id)) == log.trials


class Verdicts(Seen):
    """An observer that wants only each trial's verdict (as the CLI's progress bar)."""

    def __init__(self) -> None:
        super().__init__()
        self.verdicts: list[bool | None] = []

    def trial_passed(self, passed: bool | None) -> None:
        self.verdicts.append(passed)


@pytest.mark.parametrize("workers", [1, 2])
def test_an_observer_wanting_verdicts_only_gets_each_trials_verdict_and_no_record(
    project: Project, workers: int
) -> None:
    seen = Verdicts()
    summary = run_sharded(
        project,
        RunRequest(
            dataset="refunds",
            agent=FLAKY,
            k=3,
            concurrency=4,
            use_judge=False,
            run_id=f"r-verdicts-{workers}",
        ),
        workers=workers,
        observer=seen,
    )
    log = read_log(summary.log)
    assert seen.total == 15 and seen.records == []
    assert sorted(seen.verdicts, key=repr) == sorted(
        (t.verdict.passed for t in log.trials), key=repr
    )
    assert seen.verdicts.count(True) == summary.end.passed


def test_a_trial_lines_fields_give_the_row_of_its_validated_record(project: Project) -> None:
    summary = run_sharded(
        project,
        RunRequest(
            dataset="refunds", agent=FLAKY, k=2, use_judge=False, run_id="r-fields", store=False
        ),
    )
    lines = summary.log.read_text(encoding="utf-8").splitlines()[1:-1]
    assert len(lines) == 10
    for line in lines:
        rec = TrialRecord.model_validate_json(line)
        fields = read_trial_line(line.encode("utf-8"))
        assert trial_row_from_line(fields, line) == trial_row(rec, line)
        assert (fields.trajectory.error, fields.trajectory.agent_version) == (
            rec.trajectory.error,
            rec.trajectory.agent_version,
        )


@pytest.mark.parametrize(
    ("raw", "says"),
    [
        (b"not json", "malformed"),
        (b'{"kind": "trial", "case_id": "c-1"}', "missing required field"),
        (
            b'{"run_id": "r", "case_id": "c", "trial": 0, "slice": "s", "split": "dev",'
            b' "source": "hand", "duration_s": 1, "verdict": [], "trajectory": {}}',
            "Expected `object`, got `array`",
        ),
    ],
)
def test_a_line_that_is_not_a_trial_is_refused_with_the_reason(raw: bytes, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        read_trial_line(raw)
