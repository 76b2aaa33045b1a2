"""The bundled tool-environment example `examples/bookings/` checks, runs and separates agents."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import casework
from casework.dataset import read_cases
from casework.dataset.jsonl import canonical_bytes
from casework.gate import check_project
from casework.project import load_project
from casework.runner import RunRequest, run_agent
from casework.runner.records import read_log

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "bookings"


@pytest.fixture
def copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "bookings"
    shutil.copytree(
        EXAMPLE, root, ignore=shutil.ignore_patterns("runs", ".casework", "__pycache__")
    )
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    monkeypatch.chdir(root)
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    monkeypatch.setattr(sys, "path", list(sys.path))
    # Other examples have `agents` and `llm` packages too: set theirs aside, and drop ours after.
    ours = ("env", "agents", "llm")
    for name in [n for n in sys.modules if n.split(".")[0] in ours]:
        monkeypatch.delitem(sys.modules, name)
    yield root
    for name in [n for n in sys.modules if n.split(".")[0] in ours]:
        del sys.modules[name]


def test_the_committed_files_are_what_the_build_script_writes(copy: Path) -> None:
    before = {
        p: (copy / p).read_bytes() for p in ("states/airline.json", "datasets/bookings/cases.jsonl")
    }
    src = str(Path(casework.__file__).resolve().parents[1])  # this casework, not an installed one
    env = {**os.environ, "PYTHONPATH": src}
    subprocess.run([sys.executable, "build/make_cases.py"], cwd=copy, check=True, env=env)
    assert {p: (copy / p).read_bytes() for p in before} == before
    cases = read_cases(copy / "datasets/bookings/cases.jsonl")
    assert (
        canonical_bytes(cases, sort_key=lambda c: c.id) == before["datasets/bookings/cases.jsonl"]
    )


def test_the_example_checks_and_the_sloppy_agent_fails_where_it_writes_wrong(copy: Path) -> None:
    project = load_project(copy)
    report = check_project(project, "bookings")
    assert report.ok and "state_refs" in report.checks
    passed: dict[str, dict[str, bool]] = {}
    for agent in ("good", "sloppy"):
        summary = run_agent(
            project,
            RunRequest(
                dataset="bookings",
                agent=f"python:agents.bookings_agent:{agent}",
                k=2,
                use_judge=False,
                store=False,
            ),
        )
        trials = read_log(summary.log).trials
        passed[agent] = {t.case_id: bool(t.verdict.passed) for t in trials}
        assert all(
            t.trajectory.final_state is None and t.trajectory.state_diff is not None for t in trials
        )
        # The τ²-style case is a conversation with the simulated traveller, who stops itself.
        talks = [t for t in trials if t.case_id == "bk-conversation"]
        assert talks and all(t.user_sim is not None for t in talks)
        assert {t.user_sim.stop for t in talks if t.user_sim is not None} == {"user_stop"}
    assert all(passed["good"].values()) and len(passed["good"]) == 5
    assert passed["sloppy"] == {
        "bk-cancel": True,
        "bk-conversation": False,  # it books the flight with the lowest id, not the cheapest
        "bk-cheapest": False,
        "bk-no-funds": False,
        "bk-sold-out": True,
    }
