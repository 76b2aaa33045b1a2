"""Trials reach the workbench in batches; a run killed between batches loses none of them.

The run log is the source of truth: a `casework run` process killed (SIGKILL) while finished
trials wait for the workbench writer leaves them in the log, and `resume` stores every trial
exactly once.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import select

from casework.project import Project
from casework.runner.records import read_log
from casework.runner.run import RunRequest, run_agent
from casework.runner.store import log_path
from casework.workbench import open_workbench
from casework.workbench.models_runs import TrialRow
from tests.runner.shard_agents import KILLED_MARKER

REPO = Path(__file__).resolve().parents[2]
KILLER = "python:tests.runner.shard_agents:kill_worker_once"

#: The run, in a process of its own: the agent kills that process at trial 0 of case e-1, the
#: fifth trial to start (two in flight, 0.6 s each), after four trials finished (three of them
#: flushed to the log at 0.5 s intervals).
CHILD = """
import sys
from pathlib import Path
from casework.project import load_project
from casework.runner import run as run_module
from casework.runner.run import RunRequest, run_agent

run_module.DB_BATCH = int(sys.argv[1])
run_module.DB_BATCH_S = float(sys.argv[2])
run_module.LOG_FLUSH_S = float(sys.argv[4])
run_agent(
    load_project(Path.cwd()),
    RunRequest(dataset="refunds", agent=sys.argv[3], k=2, concurrency=2, use_judge=False,
               run_id="r-kill"),
)
"""


def _stored(project: Project) -> list[tuple[str, int, str]]:
    with open_workbench(project) as wb, wb.session() as s:
        rows = s.execute(
            select(TrialRow.case_id, TrialRow.trial, TrialRow.record).where(
                TrialRow.run_id == "r-kill"
            )
        )
        return sorted((r.case_id, r.trial, r.record) for r in rows)


@pytest.mark.parametrize(
    ("batch", "interval_s", "log_flush_s", "stored_before"),
    [
        # Every trial went to the writer once its log line was flushed.
        (1, 60.0, 0.5, "some"),
        # The writer is eager but the log never flushed before the kill: a trial the workbench
        # held and the log lost would run again on resume and be stored twice.
        (1, 0.05, 60.0, "none"),
    ],
)
def test_a_run_killed_between_batches_loses_no_trial(
    project: Project, batch: int, interval_s: float, log_flush_s: float, stored_before: str
) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    env.pop("CASEWORK_DB_URL", None)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(batch), str(interval_s), KILLER, str(log_flush_s)],
        cwd=project.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == -signal.SIGKILL, child.stderr
    assert (project.root / KILLED_MARKER).exists()
    path = log_path(project, "r-kill")
    logged = read_log(path)
    assert logged.end is None
    before = _stored(project)
    if stored_before == "none":
        assert before == []
    else:
        assert 0 < len(before) <= len(logged.trials)
    # Whatever reached the workbench is a trial of the log, byte for byte.
    lines = path.read_text(encoding="utf-8").splitlines()[1:]
    assert {record for _, _, record in before} <= set(lines)

    summary = run_agent(project, RunRequest(resume="r-kill", use_judge=False))
    assert summary.end.trials == 10
    after = _stored(project)
    final = read_log(path)
    assert sorted((t.case_id, t.trial) for t in final.trials) == [(c, t) for c, t, _ in after]
    assert len(after) == 10 == len({(cid, t) for cid, t, _ in after})
    trial_lines = path.read_text(encoding="utf-8").splitlines()[1:-1]
    assert sorted(record for _, _, record in after) == sorted(trial_lines)
