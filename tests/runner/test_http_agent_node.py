"""A non-Python agent end to end: `casework run` against the example's Node.js agent over HTTP.

The agent (``examples/refunds/agents/http_agent.mjs``) runs as a real ``node`` process on a free
loopback port; grading reads the calls casework's own tool server recorded, not the agent's account.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

import pytest
from click.testing import CliRunner

from casework.cli import cli
from casework.dataset import load_dataset
from casework.project import load_project
from casework.runner import TrialRecord, load_run
from casework.runner.records import LoadedRun
from casework.schema import Case

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "refunds"
AGENT = EXAMPLE / "agents" / "http_agent.mjs"
NODE = shutil.which("node")
VERSION = "refunds-node-0.1"
K = 2
STARTUP_S = 10.0
#: Order id each kept case's customer names (None: the customer names no order).
ORDERS = {
    "refunds-007": "ORD-130339",  # outside every window: a refusal
    "refunds-010": "ORD-199293",  # damaged item: a refund
    "refunds-026": "ORD-178826",  # a refund already issued: say so, refund nothing
    "refunds-087": "ORD-198442",  # a solicitor: escalate
    "status-025": None,  # "Where is my order?": ask which
}
CASES = tuple(ORDERS)
PROXY_VARS = tuple(f"{p}_PROXY" for p in ("HTTP", "HTTPS", "ALL", "NO", "http", "https", "all"))

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed (the agent under test is JS)"),
    pytest.mark.skipif(
        not (EXAMPLE / "datasets" / "refunds" / "cases.jsonl").is_file(),
        reason="the example dataset has not been built (examples/refunds/build/make_dataset.py)",
    ),
]


def first_line(stream: IO[str], timeout_s: float) -> str | None:
    """The first line `stream` yields within `timeout_s` seconds (None if none came)."""
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: lines.put(stream.readline()), daemon=True).start()
    try:
        return lines.get(timeout=timeout_s)
    except queue.Empty:
        return None


@pytest.fixture
def agent_url(tmp_path: Path, request: pytest.FixtureRequest) -> str:
    """Start the Node agent on a free port; its URL from the line it prints. Always stopped."""
    assert NODE is not None
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARS}
    log = (tmp_path / "node-agent.stderr").open("w", encoding="utf-8")
    proc = subprocess.Popen(
        [NODE, str(AGENT), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=log,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )

    def stop() -> None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
        log.close()

    request.addfinalizer(stop)
    assert proc.stdout is not None
    line = first_line(proc.stdout, STARTUP_S)
    errors = (tmp_path / "node-agent.stderr").read_text(encoding="utf-8")
    assert line is not None, f"node agent printed nothing in {STARTUP_S:g} s; stderr: {errors}"
    prefix = "listening on "
    assert line.startswith(prefix) and line.endswith("/agent\n"), (line, errors)
    url = line[len(prefix) :].strip()
    assert url.startswith("http://127.0.0.1:")
    return url


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch copy of examples/refunds holding only the cases above, with their labels."""
    for var in ("CASEWORK_DB_URL", *PROXY_VARS):
        monkeypatch.delenv(var, raising=False)
    root = tmp_path / "refunds"
    shutil.copytree(
        EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__", ".casework", "runs")
    )
    data = root / "datasets" / "refunds"
    for name, key in (("cases.jsonl", "id"), ("labels.jsonl", "case_id")):
        lines = (data / name).read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [line for line in lines if json.loads(line)[key] in CASES]
        (data / name).write_text("".join(kept), encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def run_cli(root: Path, url: str) -> tuple[dict[str, Any], LoadedRun]:
    result = CliRunner().invoke(
        cli,
        [
            *("--project", str(root), "run", "refunds", "--agent", url),
            *("-k", str(K), "--no-judge", "--timeout", "30", "--format", "json"),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    summary: dict[str, Any] = json.loads(result.stdout)
    return summary, load_run(load_project(root), summary["run_id"])


def cases_of(root: Path) -> dict[str, Case]:
    return {c.id: c for c in load_dataset(load_project(root), "refunds").cases}


def fixture_response(case: Case, tool: str, order_id: str) -> Any:
    return next(
        f.response
        for f in case.situation.fixtures
        if f.tool == tool and f.match == {"order_id": order_id}
    )


def test_node_agent_runs_end_to_end_over_http(example: Path, agent_url: str) -> None:
    summary, run = run_cli(example, agent_url)

    assert (summary["trials"], summary["errors"]) == (len(CASES) * K, 0)
    assert summary["agent_version"] == VERSION
    cases = cases_of(example)
    assert sorted(cases) == sorted(CASES)
    by_case: dict[str, list[TrialRecord]] = {}
    for trial in run.trials:
        by_case.setdefault(trial.case_id, []).append(trial)
    assert {c: sorted(t.trial for t in ts) for c, ts in by_case.items()} == {
        c: list(range(K)) for c in CASES
    }

    for case_id, trials in by_case.items():
        order_id = ORDERS[case_id]
        for trial in trials:
            traj = trial.trajectory
            assert traj.error is None
            assert traj.agent_version == VERSION
            assert traj.final_reply.strip()
            # Every trial is graded, each check with evidence a person can read.
            assert trial.verdict.checks
            assert all(c.evidence.strip() for c in trial.verdict.checks)
            # The agent's own account of its calls matches what casework's tool server recorded.
            reported = [(c.name, c.arguments) for m in traj.messages for c in m.tool_calls]
            assert reported == [(c.name, c.arguments) for c in traj.tool_calls]
            if order_id is None:
                assert traj.outcome == "clarify"
                assert all(c.name != "get_order" for c in traj.tool_calls)
                continue
            lookup = traj.tool_calls[0]
            assert (lookup.name, lookup.arguments, lookup.error) == (
                "get_order",
                {"order_id": order_id},
                None,
            )
            assert lookup.result == fixture_response(cases[case_id], "get_order", order_id)

    outcomes = {c: {t.trajectory.outcome for t in ts} for c, ts in by_case.items()}
    assert outcomes == {
        "refunds-007": {"refuse"},
        "refunds-010": {"resolve"},
        "refunds-026": {"resolve"},
        "refunds-087": {"escalate"},
        "status-025": {"clarify"},
    }
    # Effects of the recorded calls reach the trial's state: one refund of the item's price.
    for trial in by_case["refunds-010"]:
        state = trial.trajectory.final_state
        assert state is not None
        assert [(e["order_id"], e["amount"]) for e in state["ledger"]] == [("ORD-199293", 32.0)]
        assert trial.verdict.passed is True
    for trial in by_case["refunds-026"]:
        assert [c.name for c in trial.trajectory.tool_calls] == ["get_order"]
        assert trial.verdict.passed is True
    for trial in by_case["refunds-087"]:
        names = [c.name for c in trial.trajectory.tool_calls]
        assert names == ["get_order", "escalate_to_human"]
        assert trial.trajectory.tool_calls[1].arguments["queue"] == "billing"
    # The status case wanted tracking, not a question: a real failure, with the grader's reason.
    for trial in by_case["status-025"]:
        assert trial.verdict.passed is False
        failed = {c.name: c.evidence for c in trial.verdict.failures()}
        assert failed["outcome"] == "expected resolve, took clarify (structured outcome field)"
