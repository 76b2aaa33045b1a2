"""Shard workers forked from a parent without threads, and started afresh from one with threads.

A forked worker inherits the dataset and what the parent prepared from it; it must run the same
trials, report its errors and leave a resumable run when killed, as a worker that loads them
again does. The forked runs happen in a fresh process (`tests.runner.shard_driver`): this test
process may hold threads (a local Ray's) that rightly stop a fork.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from casework.project import Project
from casework.runner import RunRequest, log_path, run_agent
from casework.runner.records import read_log
from casework.runner.shards import run_sharded, shard_folder
from casework.workbench import open_workbench
from casework.workbench.models_runs import TrialRow
from tests.runner.shard_agents import KILLED_MARKER, PARENTS_DIR, worker_parents
from tests.runner.test_shards import _assert_merged_whole, _order_key, _trial_lines

GOOD = "python:tests.runner.sample_agents:good"
RECORDING = "python:tests.runner.shard_agents:good_recording"
KILLER = "python:tests.runner.shard_agents:kill_worker_once"
REPO = Path(__file__).resolve().parents[2]
DRIVER = (sys.executable, "-m", "tests.runner.shard_driver")


def _driven(project: Project, request: dict[str, Any], workers: int = 2) -> dict[str, Any]:
    """Run a sharded run in a fresh process; its pid and figures, or its error's message."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "src")])}
    done = subprocess.run(
        [*DRIVER, str(project.root), json.dumps(request), str(workers)],
        cwd=project.root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.stdout, done.stderr
    out: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    assert done.returncode == (1 if "error" in out else 0), done.stderr
    return out


def _stored(project: Project, run_id: str) -> int:
    with open_workbench(project) as wb, wb.session() as s:
        count = s.scalar(
            select(func.count()).select_from(TrialRow).where(TrialRow.run_id == run_id)
        )
        return int(count or 0)


def _one_process(project: Project) -> Path:
    """The log of the trials of the sharded runs below, run in this process."""
    request = RunRequest(
        dataset="refunds", agent=GOOD, k=3, use_judge=False, run_id="r-one", store=False
    )
    return run_agent(project, request).log


def _same_trials(sharded: Path, single: Path) -> None:
    """The sharded log holds the trials of the single one, in (trial, case) order, and an end."""
    merged = _trial_lines(sharded)
    log = read_log(sharded)
    key = _order_key(log.header.case_ids)
    assert merged == sorted(merged, key=key)
    assert merged == sorted(_trial_lines(single), key=key)
    one = read_log(single).end
    assert log.end is not None and one is not None
    assert (log.end.trials, log.end.passed, log.end.failed, log.end.undetermined) == (
        one.trials,
        one.passed,
        one.failed,
        one.undetermined,
    )
    assert not shard_folder(sharded).exists()


def test_forked_workers_run_the_trials_of_one_process(project: Project) -> None:
    single = _one_process(project)
    request = {"dataset": "refunds", "agent": RECORDING, "k": 3, "use_judge": False}
    out = _driven(project, {**request, "run_id": "r-fork"})
    # Both workers are children of the process that ran the run: forked, not from a fork server.
    assert worker_parents(project.root) == {out["pid"]}
    assert len(list((project.root / PARENTS_DIR).iterdir())) == 2
    assert (out["ran"], out["resumed"], out["end"]["trials"]) == (15, 0, 15)
    _same_trials(Path(out["log"]), single)
    assert _stored(project, "r-fork") == 15


def test_a_killed_forked_worker_leaves_a_resumable_run(project: Project) -> None:
    request = {"dataset": "refunds", "agent": KILLER, "k": 2, "concurrency": 2}
    out = _driven(project, {**request, "use_judge": False, "run_id": "r-kill"})
    assert "stopped by signal 9; its finished trials are kept" in out["error"]
    assert out["error"].endswith("Run r-kill is resumable: `resume` r-kill.")
    assert worker_parents(project.root) == {out["pid"]}
    assert (project.root / KILLED_MARKER).exists()
    path = log_path(project, "r-kill")
    assert read_log(path).end is None
    kept = [t for part in shard_folder(path).glob("part-*.jsonl") for t in read_log(part).trials]
    assert len(kept) == 7
    resumed = _driven(project, {"resume": "r-kill", "use_judge": False})
    assert (resumed["resumed"], resumed["ran"], resumed["end"]["trials"]) == (7, 3, 10)
    _assert_merged_whole(path)
    assert _stored(project, "r-kill") == 10


def test_a_forked_workers_error_reaches_the_parent(project: Project) -> None:
    agent = "python:tests.runner.shard_agents:no_such_agent"
    out = _driven(
        project,
        {"dataset": "refunds", "agent": agent, "k": 1, "use_judge": False, "run_id": "r-bad"},
    )
    assert "no_such_agent" in out["error"]
    assert out["error"].endswith("Run r-bad is resumable: `resume` r-bad.")
    assert read_log(log_path(project, "r-bad")).end is None


def test_workers_start_afresh_while_the_parent_runs_another_thread(project: Project) -> None:
    single = _one_process(project)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait, name="test-other-thread")
    other.start()
    try:
        summary = run_sharded(
            project,
            RunRequest(dataset="refunds", agent=RECORDING, k=3, use_judge=False, run_id="r-afresh"),
            workers=2,
        )
    finally:
        stop.set()
        other.join()
    parents = worker_parents(project.root)
    # Forked by the fork server (one process, not this one), never by this threaded process.
    assert len(parents) == 1 and os.getpid() not in parents
    assert summary.ran == 15
    _same_trials(summary.log, single)
    assert _stored(project, "r-afresh") == 15
