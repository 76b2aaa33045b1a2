"""Runs sharded across worker processes: the same trials as one process, resumable after a kill."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from casework.errors import CaseworkError, UsageError
from casework.project import Project
from casework.runner import RunRequest, log_path, run_agent
from casework.runner.records import read_log
from casework.runner.shards import run_sharded, shard_folder
from casework.workbench import open_workbench
from casework.workbench.models_runs import TrialRow
from tests.runner.shard_agents import KILLED_MARKER

GOOD = "python:tests.runner.sample_agents:good"
KILLER = "python:tests.runner.shard_agents:kill_worker_once"

#: Fields of a trial line that differ between two runs of the same trials by nature.
VOLATILE = ("run_id", "started_at", "duration_s")


def _trial_lines(path: Path) -> list[dict[str, Any]]:
    """The trial lines of a run log, in file order, without their volatile fields."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if obj["kind"] != "trial":
            continue
        for key in VOLATILE:
            obj.pop(key)
        obj["trajectory"].pop("trial_id", None)
        out.append(obj)
    return out


def _order_key(header_case_ids: list[str]) -> Any:
    position = {cid: i for i, cid in enumerate(header_case_ids)}
    return lambda t: (t["trial"], position[t["case_id"]])


def _assert_merged_whole(path: Path) -> None:
    """The run log at ``path`` holds every trial of its 5 cases x k=2 once, in the merge's order,
    with an end record, and the shard files are gone."""
    log = read_log(path)
    assert log.end is not None
    assert sorted((t.case_id, t.trial) for t in log.trials) == sorted(
        (cid, t) for cid in log.header.case_ids for t in range(2)
    )
    lines = _trial_lines(path)
    assert len(lines) == 10 and lines == sorted(lines, key=_order_key(log.header.case_ids))
    assert not shard_folder(path).exists()


def test_merged_log_equals_a_single_process_run_in_a_fixed_order(project: Project) -> None:
    one = run_agent(
        project,
        RunRequest(
            dataset="refunds", agent=GOOD, k=3, use_judge=False, run_id="r-one", store=False
        ),
    )
    two = run_sharded(
        project,
        RunRequest(dataset="refunds", agent=GOOD, k=3, use_judge=False, run_id="r-two"),
        workers=2,
    )
    assert two.ran == 15 and two.resumed == 0
    assert (two.end.trials, two.end.passed, two.end.failed, two.end.undetermined) == (
        one.end.trials,
        one.end.passed,
        one.end.failed,
        one.end.undetermined,
    )
    assert two.end.agent_version == "good-1"
    merged = _trial_lines(two.log)
    single = _trial_lines(one.log)
    key = _order_key(two.header.case_ids)
    # The merged log is already in the deterministic order: (trial, case in the header's order).
    assert merged == sorted(merged, key=key)
    assert merged == sorted(single, key=key)
    log = read_log(two.log)
    assert log.end is not None and len(log.trials) == 15
    assert not shard_folder(two.log).exists()
    with open_workbench(project) as wb, wb.session() as s:
        stored = s.scalar(
            select(func.count()).select_from(TrialRow).where(TrialRow.run_id == "r-two")
        )
        assert stored == 15


def test_a_killed_worker_leaves_a_resumable_run(project: Project) -> None:
    request = RunRequest(
        dataset="refunds", agent=KILLER, k=2, concurrency=2, use_judge=False, run_id="r-kill"
    )
    with pytest.raises(CaseworkError) as info:
        run_sharded(project, request, workers=2)
    message = str(info.value)
    assert "stopped by signal 9; its finished trials are kept" in message
    assert message.endswith("Run r-kill is resumable: `resume` r-kill.")
    assert (project.root / KILLED_MARKER).exists()
    path = log_path(project, "r-kill")
    assert read_log(path).end is None
    # The merged log was written as the trials ended, to a temp file: gone, the log untouched.
    assert len(path.read_bytes().splitlines()) == 1
    assert not list(project.root.rglob(f".{path.name}.*.tmp"))
    parts = sorted(shard_folder(path).glob("part-*.jsonl"))
    kept = [t for part in parts for t in read_log(part).trials]
    # Dealt round-robin, (e-1, 0) is the third trial of shard 0: it had flushed two when its
    # worker was killed; shard 1 finished its five.
    assert len(kept) == 7
    summary = run_sharded(project, RunRequest(resume="r-kill", use_judge=False), workers=2)
    assert summary.resumed == 7 and summary.ran == 3 and summary.end.trials == 10
    _assert_merged_whole(path)


def test_workers_must_be_at_least_one(project: Project) -> None:
    with pytest.raises(UsageError, match=r"^workers: must be at least 1\. Got 0\.$") as info:
        run_sharded(project, RunRequest(dataset="refunds", agent=GOOD), workers=0)
    assert info.value.param == "workers"


def test_cli_run_workers_shards_and_reports_errors_with_flags(project: Project) -> None:
    from click.testing import CliRunner

    from casework.cli import cli

    runner = CliRunner()
    base = ["--project", str(project.root), "run", "refunds", "--agent", GOOD, "--no-judge"]
    result = runner.invoke(cli, [*base, "-k", "2", "--workers", "2", "--format", "json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["trials"] == 10
    assert not shard_folder(Path(summary["log"])).exists()
    bad = runner.invoke(cli, [*base, "--workers", "0"])
    assert bad.exit_code == 2
    assert "--workers: must be at least 1. Got 0." in bad.stderr
