"""Builders of the trajectory review tests: the bundled bookings example, run once, then copied.

The example (`examples/bookings`) is a τ²-style project with one shared tool environment and a
case played by a simulated user. :func:`bookings_with_run` copies it, marks ``bk-cancel`` frozen
and runs the sloppy agent twice per case (so some trials fail); each test copies that folder
(:func:`fresh_copy`) and queues the items it needs.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from casework.project import Project, load_project
from casework.review import add_items, list_tasks
from casework.review._task import ReviewTask
from casework.review._trajectory import trajectory_items
from casework.runner import RunRequest, run_agent
from casework.runner.records import read_log

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "bookings"
FROZEN = "bk-cancel"
_OURS = ("env", "agents", "llm")  # the example's own packages; other examples have some too


def bookings_with_run(root: Path) -> str:
    """Copy the example to ``root`` (``FROZEN`` frozen), run the sloppy agent k=2; the run id."""
    shutil.copytree(
        EXAMPLE, root, ignore=shutil.ignore_patterns("runs", ".casework", "__pycache__")
    )
    cases = root / "datasets" / "bookings" / "cases.jsonl"
    rows = [json.loads(line) for line in cases.read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row["frozen"] = row["id"] == FROZEN
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv("CASEWORK_DB_URL", raising=False)
        mp.chdir(root)
        mp.setattr(sys, "path", list(sys.path))
        for name in [n for n in sys.modules if n.split(".")[0] in _OURS]:
            mp.delitem(sys.modules, name)
        try:
            summary = run_agent(
                load_project(root),
                RunRequest(dataset="bookings", agent="python:agents.bookings_agent:sloppy", k=2),
            )
        finally:
            for name in [n for n in sys.modules if n.split(".")[0] in _OURS]:
                del sys.modules[name]
    return read_log(summary.log).header.run_id


def fresh_copy(template: Path, root: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A copy of the built project (files and workbench), the test's working directory."""
    shutil.copytree(template, root)
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    monkeypatch.chdir(root)
    return load_project(root)


def queue_trials(
    project: Project,
    run_id: str,
    n: int,
    reviewers: list[str],
    *,
    overlap: float,
    seed: int = 0,
    include_frozen: bool = False,
) -> list[ReviewTask]:
    """Queue ``n`` trials of the run for review; the trajectory items now stored."""
    items = trajectory_items(
        project,
        run_id,
        n,
        reviewers,
        overlap=overlap,
        seed=seed,
        include_frozen=include_frozen,
    )
    add_items(project, items)
    return list_tasks(project, kind="trajectory")
