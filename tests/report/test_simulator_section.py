"""The simulated user's error rate in `results show` and the HTML report, on the bookings example.

The example (`examples/bookings`) has one case played by a simulated user (bk-conversation).
`results show` (text and JSON) and the report give the rate per slice with its case-level
interval, the same figures as the gate's audit; a quarantined case is named with why, a frozen
one only counted; a run without simulated users has no such field or section.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from casework.cli import cli
from casework.gate._gather import simulator_quarantine
from casework.project import Project, load_project
from casework.review import add_items, decide_task, list_tasks
from casework.review._trajectory import trajectory_items
from casework.runner import RunRequest, run_agent
from casework.runner.records import read_log
from casework.runner.store import load_run

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "bookings"
CASES = Path("datasets/bookings/cases.jsonl")
CONVERSATION = "bk-conversation"
_OURS = ("env", "agents", "llm")  # the example's own packages; other examples have some too


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
    for name in [n for n in sys.modules if n.split(".")[0] in _OURS]:
        monkeypatch.delitem(sys.modules, name)
    yield root
    for name in [n for n in sys.modules if n.split(".")[0] in _OURS]:
        del sys.modules[name]


def _edit(root: Path, change: Callable[[dict[str, Any]], dict[str, Any] | None]) -> None:
    """Rewrite each case row through ``change`` (``None`` drops the row), then release."""
    rows = [json.loads(line) for line in (root / CASES).read_text(encoding="utf-8").splitlines()]
    kept = [r for r in (change(row) for row in rows) if r is not None]
    (root / CASES).write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")
    result = CliRunner().invoke(cli, ["dataset", "release", "bookings", "-m", "edited"])
    assert result.exit_code == 0, result.output


def _flawed(row: dict[str, Any], *, frozen: bool = False) -> dict[str, Any]:
    if row["id"] == CONVERSATION:
        row["situation"]["user_scenario"]["known_info"] = (
            "Please book 1 seat from JFK to LAX on 2026-12-12 (user u-ben)."
        )
        row["frozen"] = frozen
    return row


def _run(project: Project) -> str:
    summary = run_agent(
        project, RunRequest(dataset="bookings", agent="python:agents.bookings_agent:good", k=2)
    )
    return read_log(summary.log).header.run_id


def _show(run_id: str, *extra: str) -> str:
    result = CliRunner().invoke(cli, ["results", "show", run_id, *extra])
    assert result.exit_code == 0, result.output
    return result.stdout


def _report(run_id: str, out: Path) -> str:
    result = CliRunner().invoke(cli, ["report", run_id, "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_a_review_blaming_the_simulated_user_makes_its_rate_in_results_and_the_report(
    copy: Path,
) -> None:
    project = load_project(copy)
    run_id = _run(project)
    # a reviewer blames the simulated user in one of the conversation's two trials
    items = [
        i
        for i in trajectory_items(project, run_id, 10, ["ana"], overlap=0)
        if i.payload["case_id"] == CONVERSATION
    ][:1]
    add_items(project, items)
    [task] = list_tasks(project, kind="trajectory")
    data = {"step": 0, "category": "task-derailment", "severity": "major"}
    decide_task(project, task.id, "fail", reviewer="ana", data={**data, "fault": "simulated_user"})
    out = json.loads(_show(run_id, "--format", "json"))
    audit, _ = simulator_quarantine(project, load_run(project, run_id))
    assert audit is not None
    rate = audit.slices["bookings"]
    assert (rate.successes, rate.n) == (1, 2)  # by hand: 1 of the case's 2 trials
    assert out["simulator"]["slices"] == {
        "bookings": {
            "errors": 1,
            "trials": 2,
            "rate": 0.5,
            "low": rate.low,
            "high": rate.high,
        }
    }
    assert rate.low is not None and rate.high is not None and rate.low < 0.5 < rate.high
    assert out["simulator"]["quarantined"] == [CONVERSATION]  # 50% > the default 20%
    assert out["simulator"]["cases"][CONVERSATION]["reasons"] == {
        "reviewed: a reviewer blamed the simulated user": 1
    }
    text = _show(run_id)
    assert f"bookings: 0.500 [{rate.low:.2f}, {rate.high:.2f}] · 1 of 2 trial(s)" in text
    html = _report(run_id, copy / "report.html")
    assert "<h2>The simulated user</h2>" in html
    assert f"0.500 <span class=note>[{rate.low:.2f}, {rate.high:.2f}]</span>" in html
    assert "Quarantined from gating: case bk-conversation" in html


def test_a_flawed_scenario_is_named_with_why_and_a_frozen_one_only_counted(copy: Path) -> None:
    _edit(copy, _flawed)
    project = load_project(copy)
    run_id = _run(project)
    why = "known_contradicts_goal: known_info says LAX where the goal says SFO (2 of 2)"
    out = json.loads(_show(run_id, "--format", "json"))["simulator"]
    assert (out["quarantined"], out["quarantined_frozen"]) == ([CONVERSATION], 0)
    assert why in _show(run_id)
    assert why in _report(run_id, copy / "report.html")
    # the same case frozen: counted, never named, its scenario never quoted
    _edit(copy, lambda row: _flawed(row, frozen=True))
    run_id = _run(load_project(copy))
    out = json.loads(_show(run_id, "--format", "json"))["simulator"]
    assert (out["quarantined"], out["quarantined_frozen"], out["cases"]) == ([], 1, {})
    assert out["slices"]["bookings"]["errors"] == 2
    text = _show(run_id)
    assert "1 frozen case(s) quarantined from gating" in text
    html = _report(run_id, copy / "report.html")
    assert "1 frozen case(s) quarantined from gating." in html
    for shown in (text, html, json.dumps(out)):
        assert "LAX" not in shown and CONVERSATION not in shown


def test_a_run_without_simulated_users_has_no_simulator_figures(copy: Path) -> None:
    _edit(copy, lambda row: None if row["id"] == CONVERSATION else row)
    run_id = _run(load_project(copy))
    assert "simulator" not in json.loads(_show(run_id, "--format", "json"))
    assert "simulated user" not in _show(run_id)
    assert "The simulated user" not in _report(run_id, copy / "report.html")
