from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from sqlalchemy import func, select

from casework.errors import InputError, InputErrors, Problem, UsageError
from casework.project import Project
from casework.runner import RunRequest, TrialRecord, load_run, log_path, run_agent, run_results
from casework.runner.records import read_log
from casework.runner.run import trial_seed
from casework.workbench import open_workbench
from casework.workbench.models_runs import RunRow, TrialRow

GOOD = "python:tests.runner.sample_agents:good"


def test_run_grades_every_trial_and_writes_log_and_workbench(project: Project) -> None:
    summary = run_agent(
        project, RunRequest(dataset="refunds", agent=GOOD, k=3, concurrency=4, use_judge=False)
    )
    assert summary.end.trials == 15 and summary.ran == 15 and summary.resumed == 0
    assert (summary.end.passed, summary.end.failed, summary.end.undetermined) == (12, 0, 3)
    log = read_log(summary.log)
    assert log.header.dataset_ref == "refunds@working" and len(log.header.dataset_hash) == 64
    assert log.header.agent_version == "good-1"
    assert len(log.trials) == 15 and log.end is not None
    wb = open_workbench(project)
    with wb.session() as s:
        row = s.get(RunRow, summary.header.run_id)
        assert row is not None and row.finished_at is not None and row.agent_version == "good-1"
        assert s.scalar(select(func.count()).select_from(TrialRow)) == 15
    wb.close()
    loaded = load_run(project, summary.header.run_id[:12])
    assert loaded.source.startswith("workbench") and loaded.finished
    assert {t.case_id for t in loaded.trials} == {"r-1", "r-2", "r-3", "u-1", "e-1"}


def test_trials_are_independent_fresh_state_and_input(project: Project) -> None:
    summary = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent="python:tests.runner.sample_agents:mutate",
            k=3,
            concurrency=1,
            slices=("refunds",),
            use_judge=False,
        ),
    )
    run = load_run(project, summary.header.run_id)
    for t in run.trials:
        if t.case_id == "r-1":
            # Each trial refunds once into a fresh copy: never 24 or 36.
            assert t.trajectory.final_state == {
                "orders": {"o1": {"note": "SECRET-STATE", "refunded": 12.0}}
            }
            assert len(t.trajectory.tool_calls) == 2
    assert all(t.verdict.passed is not False for t in run.trials)
    cases = project.dataset_dir("refunds") / "cases.jsonl"
    assert "MUTATED" not in cases.read_text()


def test_seeds_are_per_trial_and_reproducible(project: Project) -> None:
    a = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent="python:tests.runner.sample_agents:flaky",
            k=4,
            seed=5,
            use_judge=False,
            store=False,
        ),
    )
    b = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent="python:tests.runner.sample_agents:flaky",
            k=4,
            seed=5,
            use_judge=False,
            store=False,
        ),
    )
    ta, tb = read_log(a.log).trials, read_log(b.log).trials
    assert [(t.case_id, t.trial, t.seed, t.verdict.passed) for t in ta] == [
        (t.case_id, t.trial, t.seed, t.verdict.passed) for t in tb
    ]
    assert len({t.seed for t in ta}) == 20
    assert ta[0].seed == trial_seed(5, ta[0].case_id, ta[0].trial)
    res = run_results(read_log(a.log))
    assert 0 < res.overall.pass1 < 1 if res.overall.pass1 is not None else False
    assert res.flaky  # a stochastic agent flips some verdicts


def test_interrupted_run_resumes_only_missing_trials(project: Project) -> None:
    full = run_agent(
        project, RunRequest(dataset="refunds", agent=GOOD, k=2, use_judge=False, run_id="r-full")
    )
    lines = full.log.read_text().splitlines()
    # Simulate a crash: header + 4 trials + a torn fifth line, no end record, nothing in the DB.
    partial = log_path(project, "r-part")
    header = json.loads(lines[0])
    header["run_id"] = "r-part"
    trials = []
    for line in lines[1:5]:
        rec = json.loads(line)
        rec["run_id"] = "r-part"
        trials.append(json.dumps(rec))
    partial.write_text(
        "\n".join([json.dumps(header), *trials]) + '\n{"kind": "trial", "run_', encoding="utf-8"
    )
    summary = run_agent(project, RunRequest(resume="r-part", use_judge=False))
    assert summary.resumed == 4 and summary.ran == 6 and summary.end.trials == 10
    run = load_run(project, "r-part")
    assert len(run.trials) == 10 and run.finished
    assert sorted((t.case_id, t.trial) for t in run.trials) == sorted(
        (t.case_id, t.trial) for t in read_log(full.log).trials
    )
    with pytest.raises(UsageError, match=r"^run r-part already finished; nothing to resume\.$"):
        run_agent(project, RunRequest(resume="r-part", use_judge=False))


def test_resume_refuses_a_changed_dataset(project: Project) -> None:
    full = run_agent(
        project, RunRequest(dataset="refunds", agent=GOOD, k=1, use_judge=False, run_id="r-x")
    )
    lines = full.log.read_text().splitlines()
    full.log.write_text(lines[0] + "\n", encoding="utf-8")
    cases = project.dataset_dir("refunds") / "cases.jsonl"
    cases.write_text(cases.read_text().splitlines()[0] + "\n", encoding="utf-8")
    with pytest.raises(
        UsageError, match=r"resume: run r-x: dataset refunds@working changed since the run started"
    ):
        run_agent(project, RunRequest(resume="r-x", use_judge=False))


def test_bad_requests(project: Project) -> None:
    with pytest.raises(UsageError) as err:
        run_agent(project, RunRequest(dataset="refunds", agent=GOOD, slices=("nope",)))
    assert (
        str(err.value) == "slice: no slice nope in refunds@working (slices: SECRET-SLICE, refunds)."
    )
    with pytest.raises(UsageError, match=r"^k: must be at least 1. Got 0.$"):
        run_agent(project, RunRequest(dataset="refunds", agent=GOOD, k=0))
    with pytest.raises(UsageError, match=r"^run: no agent; pass `agent` SPEC"):
        run_agent(project, RunRequest(dataset="refunds"))
    with pytest.raises(UsageError, match=r"^concurrency: must be at least 1. Got 0.$"):
        run_agent(project, RunRequest(dataset="refunds", agent=GOOD, concurrency=0))


def test_observer_sees_every_trial(project: Project) -> None:
    seen: list[TrialRecord] = []
    started: list[tuple[int, int]] = []

    class Obs:
        def started(self, total: int, done: int) -> None:
            started.append((total, done))

        def trial_done(self, record: TrialRecord) -> None:
            seen.append(record)

    def clock() -> datetime:
        return datetime(2026, 1, 2, tzinfo=UTC)

    summary = run_agent(
        project,
        RunRequest(dataset="refunds", agent=GOOD, k=2, use_judge=False),
        observer=Obs(),
        clock=clock,
    )
    assert started == [(10, 0)] and len(seen) == 10
    assert summary.header.run_id.startswith("20260102T000000Z-good-")
    assert all(t.started_at == clock() for t in seen)


@pytest.mark.parametrize("kind", ["one", "many"])
def test_an_input_error_mid_run_keeps_its_type_and_message_and_says_how_to_resume(
    project: Project, kind: str
) -> None:
    problems = [
        Problem("x.jsonl", 3, "f", "bad value", 1, has_got=True),
        Problem("x.jsonl", 9, None, "worse"),
    ]
    raised: InputError = (
        InputError("x.jsonl", 3, "f", "bad value", 1) if kind == "one" else InputErrors(problems)
    )

    class Failing:
        def started(self, total: int, done: int) -> None:
            pass

        def trial_done(self, record: TrialRecord) -> None:
            raise raised

    with pytest.raises(InputError) as info:
        run_agent(
            project,
            RunRequest(dataset="refunds", agent=GOOD, k=1, use_judge=False, run_id="r-err"),
            observer=Failing(),
        )
    assert info.value is raised and type(info.value) is type(raised)
    first = "x.jsonl:3: f: bad value. Got 1."
    assert str(info.value).startswith(first)
    assert str(info.value).endswith("Run r-err is resumable: `resume` r-err.")
    assert info.value.render(lambda name: f"--{name}").endswith("resumable: --resume r-err.")
