"""Runs sharded across Ray tasks on a local Ray with 2 CPUs: the same trials as one process."""

from __future__ import annotations

import json
from typing import Any

import pytest

from casework.project import Project
from casework.runner import RunRequest, run_agent
from casework.runner.records import read_log
from casework.runner.shards import run_sharded, shard_folder

ray = pytest.importorskip("ray")

pytestmark = [
    # The worker's local Ray of two CPUs, shared with the other Ray tests (tests/ray_cluster.py).
    pytest.mark.usefixtures("ray_local"),
    # Ray's own modules warn about their own deprecated settings; those are not ours to fix.
    pytest.mark.filterwarnings("ignore::DeprecationWarning:ray", "ignore::FutureWarning:ray"),
]

GOOD = "python:tests.runner.sample_agents:good"


def _trials(path: Any) -> list[tuple[str, int, int, bool | None, str]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj["kind"] == "trial":
            verdict = obj["verdict"]
            checks = json.dumps(verdict["checks"], sort_keys=True)
            out.append((obj["case_id"], obj["trial"], obj["seed"], verdict["passed"], checks))
    return out


def test_ray_shards_equal_a_single_process_run(project: Project) -> None:
    assert ray.cluster_resources()["CPU"] >= 2
    one = run_agent(
        project, RunRequest(dataset="refunds", agent=GOOD, k=2, use_judge=False, store=False)
    )
    two = run_sharded(
        project,
        RunRequest(dataset="refunds", agent=GOOD, k=2, use_judge=False, run_id="r-ray"),
        workers=2,
        use_ray=True,
    )
    assert two.ran == 10 and read_log(two.log).end is not None
    position = {cid: i for i, cid in enumerate(two.header.case_ids)}
    merged = _trials(two.log)
    assert merged == sorted(_trials(one.log), key=lambda t: (t[1], position[t[0]]))
    assert not shard_folder(two.log).exists()
