"""`casework run` on τ²-bench's published telecom tasks: the user's phone served to the user.

The evidence is τ²'s own data and evaluator: telecom's 20 ``tasks_small.json`` tasks are
imported and run with the example's golden-replay agent and scripted user
(`examples/tau2/`), whose phone calls go to τ²'s own user tools; each trial's calls are then
given to τ²'s ``evaluate_simulation`` and its verdict must equal casework's.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from casework.interop.tau2 import Tau2Options
from casework.interop.tau2._domains import import_tau2
from casework.project import load_project
from casework.runner import RunRequest, load_run, run_agent

pytest.importorskip("tau2")

REPO = Path(__file__).parents[3]
EXAMPLE = REPO / "examples" / "tau2"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "conformance_tau2", REPO / "benchmarks" / "conformance_tau2.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("conformance_tau2", module)
    spec.loader.exec_module(module)
    module.quiet()
    return module


@pytest.fixture
def own_modules() -> Iterator[None]:
    """The example's `golden_agent` and `user_sim` are imported by name: none before, none after."""
    names = ("golden_agent", "user_sim")
    saved = {n: sys.modules.pop(n) for n in names if n in sys.modules}
    yield
    for name in names:
        sys.modules.pop(name, None)
    sys.modules.update(saved)


@pytest.mark.usefixtures("own_modules")
def test_telecom_runs_with_the_users_phone_and_agrees_with_tau2s_evaluator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "p"
    root.mkdir()
    (root / "casework.toml").write_text(
        'name = "telecom"\n' + (EXAMPLE / "models.toml").read_text("utf-8"), "utf-8"
    )
    for name in ("golden_agent.py", "user_sim.py"):
        shutil.copy(EXAMPLE / name, root / name)
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root))
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    project = load_project(root)
    import_tau2(
        project, None, "telecom", Tau2Options(), domain="telecom", tasks_file="tasks_small.json"
    )
    request = RunRequest(
        dataset="telecom", agent="python:golden_agent:run", k=1, use_judge=False, store=False
    )
    trials = load_run(project, run_agent(project, request).header.run_id).trials
    assert len(trials) == 20

    bench = _bench()
    loaded = bench.load("telecom", "tasks_small.json")
    tasks = {case.id: task for case, task in zip(loaded.cases, loaded.tasks, strict=True)}
    passed = 0
    for trial in trials:
        # The agent acts on its first turn, the user on their next message: τ²'s order too.
        calls = [
            {"name": c.name, "arguments": c.arguments, "requestor": "assistant"}
            for c in trial.trajectory.tool_calls
        ]
        calls += [
            {"name": c.name, "arguments": c.arguments, "requestor": "user"}
            for m in trial.trajectory.messages
            if m.role == "user"
            for c in m.tool_calls
        ]
        said = " ".join(m.content for m in trial.trajectory.messages if m.role == "assistant")
        theirs = bench._theirs("telecom", tasks[trial.case_id], calls, said)
        assert trial.verdict.passed is theirs, (trial.case_id, trial.verdict.summary())
        passed += bool(theirs)
    # Users with a unique scenario fix their phone (a scripted user cannot tell apart the
    # tasks that share one): those pass, under τ²'s evaluator as under casework's.
    assert passed >= 8
    users = [m for t in trials for m in t.trajectory.messages if m.role == "user" and m.tool_calls]
    assert users and all(c.error is None for m in users for c in m.tool_calls)


def test_the_users_tool_lines_are_read_as_written() -> None:
    from casework.runner.user_sim import tool_lines

    text = 'Let me check.\nTOOL: toggle_roaming {}\nTOOL: grant_app_permission {"app_name": "x"}'
    assert tool_lines(text) == [
        ("toggle_roaming", {}),
        ("grant_app_permission", {"app_name": "x"}),
    ]
    # Arguments that are no JSON object come back as None: the call is answered with an error.
    assert tool_lines("TOOL: reboot_device {not json}") == [("reboot_device", None)]
    assert tool_lines("TOOL: reboot_device") == [("reboot_device", {})]
    assert tool_lines("no tools here") == []
