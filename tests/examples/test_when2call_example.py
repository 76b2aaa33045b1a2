"""The When2Call-style example project `examples/when2call/`: checks clean, separates its agents.

It runs in a scratch copy (a run writes `runs/` and the workbench), on the offline stand-ins.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from casework.dataset import read_cases
from casework.dataset.jsonl import canonical_bytes
from casework.gate import check_project
from casework.project import Project, load_project
from casework.runner import RunRequest, load_run, run_agent

PROJECT = Path(__file__).resolve().parents[2] / "examples" / "when2call"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = tmp_path / "when2call"
    shutil.copytree(
        PROJECT, root, ignore=shutil.ignore_patterns(".casework", "runs", "__pycache__")
    )
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    monkeypatch.chdir(root)
    monkeypatch.setattr(sys, "path", list(sys.path))
    # The refunds example has `agents` and `llm` packages too: set them aside while this runs.
    ours = ("agents", "llm")
    saved = {n: m for n, m in sys.modules.items() if n.split(".")[0] in ours}
    for name in saved:
        del sys.modules[name]
    yield load_project(root)
    for name in [n for n in sys.modules if n.split(".")[0] in ours]:
        del sys.modules[name]
    sys.modules.update(saved)


def test_the_example_is_canonical_and_checks_clean(project: Project) -> None:
    path = PROJECT / "datasets" / "when2call" / "cases.jsonl"
    cases = read_cases(path)
    assert path.read_bytes() == canonical_bytes(cases, sort_key=lambda c: c.id)
    assert check_project(project, "when2call").findings == []
    outcomes = {c.label.outcome for c in cases if c.label is not None}
    assert outcomes == {"resolve", "clarify", "refuse"}
    assert any(c.situation.tools_file for c in cases)
    assert sum(c.situation.user_scenario is not None for c in cases) == 1


def test_the_careful_agent_passes_and_the_eager_one_fails(project: Project) -> None:
    runs = {}
    for name in ("agent", "eager"):
        spec = f"python:agents.when2call_agent:{name}"
        request = RunRequest(dataset="when2call", agent=spec, k=2, use_judge=False, store=False)
        runs[name] = load_run(project, run_agent(project, request).header.run_id)
    assert all(t.verdict.passed for t in runs["agent"].trials)
    assert not any(t.verdict.passed for t in runs["eager"].trials)
    simulated = [t for t in runs["agent"].trials if t.user_sim is not None]
    assert {t.case_id for t in simulated} == {"w2c-umbrella-sim"}
    assert all(t.user_sim is not None and t.user_sim.stop == "user_stop" for t in simulated)
    assert [m.role for m in simulated[0].trajectory.messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
