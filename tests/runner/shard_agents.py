"""Agents for the sharded-run tests (``python:tests.runner.shard_agents:NAME``)."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from casework.runner import Tools
from casework.runner.run import trial_seed
from casework.schema import AgentInput, Trajectory
from tests.runner.sample_agents import good

#: Created (in the project folder, the workers' working directory) by the trial that kills its
#: worker, so the resumed run does not kill again.
KILLED_MARKER = "killed-once.marker"
#: Folder (in the project folder) where each worker process that ran a trial of the recording
#: agents leaves a file named by its pid, holding its parent's pid.
PARENTS_DIR = "worker-parents"


def _record_parent() -> None:
    folder = Path.cwd() / PARENTS_DIR
    folder.mkdir(exist_ok=True)
    (folder / str(os.getpid())).write_text(str(os.getppid()), encoding="utf-8")


def worker_parents(root: Path) -> set[int]:
    """The parent pids the worker processes of the recording agents left under ``root``."""
    folder = root / PARENTS_DIR
    return (
        {int(p.read_text(encoding="utf-8")) for p in folder.iterdir()} if folder.is_dir() else set()
    )


def good_recording(request: AgentInput, tools: Tools) -> Trajectory:
    """`good`, leaving its worker's parent pid under `PARENTS_DIR`."""
    _record_parent()
    return good(request, tools)


async def slow_good(request: AgentInput, tools: Tools) -> Trajectory:
    """`good`, after 0.6 s: longer than the run log's flush interval, so each trial is flushed."""
    await asyncio.sleep(0.6)
    return good(request, tools)


#: The trial that kills its worker: case e-1, trial 0, of a run with seed 0 (known by its seed).
KILLING_SEED = trial_seed(0, "e-1", 0)


async def kill_worker_once(request: AgentInput, tools: Tools) -> Trajectory:
    """`slow_good`, except that trial 0 of case e-1 kills its own worker process (once).

    Leaves its worker's parent pid under `PARENTS_DIR`.
    """
    _record_parent()
    await asyncio.sleep(0.6)
    marker = Path.cwd() / KILLED_MARKER
    if request.seed == KILLING_SEED and not marker.exists():
        marker.write_text(str(os.getpid()), encoding="utf-8")
        os.kill(os.getpid(), signal.SIGKILL)
    return good(request, tools)
