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


async def slow_good(request: AgentInput, tools: Tools) -> Trajectory:
    """`good`, after 0.6 s: longer than the run log's flush interval, so each trial is flushed."""
    await asyncio.sleep(0.6)
    return good(request, tools)


#: The trial that kills its worker: case e-1, trial 0, of a run with seed 0 (known by its seed).
KILLING_SEED = trial_seed(0, "e-1", 0)


async def kill_worker_once(request: AgentInput, tools: Tools) -> Trajectory:
    """`slow_good`, except that trial 0 of case e-1 kills its own worker process (once)."""
    await asyncio.sleep(0.6)
    marker = Path.cwd() / KILLED_MARKER
    if request.seed == KILLING_SEED and not marker.exists():
        marker.write_text(str(os.getpid()), encoding="utf-8")
        os.kill(os.getpid(), signal.SIGKILL)
    return good(request, tools)
