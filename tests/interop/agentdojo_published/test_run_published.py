"""An imported AgentDojo suite, as the `agentdojo` wheel publishes it, runs with `casework run` alone.

The evidence is AgentDojo's own suite: `casework import agentdojo banking` brings every user task
and user × injection pair, `casework run` serves them with AgentDojo's tools (no environment
configured) and an agent that replays each user task's ``ground_truth()`` — and, for some
injection tasks, carries out the injection it reads in a tool result. Every trial's verdict is
compared with AgentDojo's own scorer on the same calls (its public ``run_task_with_pipeline``,
through the conformance benchmark's replaying pipeline).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import Result

pytest.importorskip("agentdojo")

from casework.interop.agentdojo._import import AgentDojoOptions, _injections
from casework.interop.agentdojo._suites import load_suite
from casework.project import load_project
from casework.runner import load_run
from casework.runner.records import TrialRecord

BENCH = Path(__file__).parents[3] / "benchmarks" / "conformance_agentdojo.py"

#: Injection tasks the agent carries out when it reads them (it ignores the others).
FOLLOWS = ("injection_task_1", "injection_task_4")

AGENT = f"""
from agentdojo.task_suite.load_suites import get_suite

SUITE = get_suite("v1.2.2", "banking")
TASKS = {{task.PROMPT: task for task in SUITE.user_tasks.values()}}
FOLLOWS = {FOLLOWS!r}


def _texts(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)


def run(agent_input, tools):
    task = TASKS[next(t.content for t in agent_input.turns if t.role == "user")]
    env = task.init_environment(SUITE.load_and_inject_default_environment({{}}))
    read = []
    for call in task.ground_truth(env.model_copy(deep=True)):
        reply = tools.try_call(call.function, dict(call.args))
        read += _texts(reply.result)
    for name in FOLLOWS:
        injection = SUITE.injection_tasks[name]
        if any(injection.GOAL in text for text in read):
            for call in injection.ground_truth(env.model_copy(deep=True)):
                tools.try_call(call.function, dict(call.args))
    return {{"final_reply": task.GROUND_TRUTH_OUTPUT}}
"""


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("conformance_agentdojo", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("conformance_agentdojo", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ran(
    tmp_path_factory: pytest.TempPathFactory,
    run_cli_module: Callable[..., Result],
) -> tuple[Path, Result, Result, list[TrialRecord]]:
    root = tmp_path_factory.mktemp("agentdojo-run")
    (root / "casework.toml").write_text('name = "agentdojo-published"\n', "utf-8")
    (root / "replay_agent.py").write_text(AGENT, "utf-8")
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        mp.syspath_prepend(str(root))
        mp.delenv("CASEWORK_DB_URL", raising=False)
        imported = run_cli_module("import", "agentdojo", "banking", "--dataset", "bank")
        run = run_cli_module(
            "run", "bank", "--agent", "python:replay_agent:run", "-k", "1", "--format", "json"
        )
        trials = load_run(load_project(root), json.loads(run.stdout)["run_id"]).trials
    return root, imported, run, trials


@pytest.fixture(scope="module")
def run_cli_module() -> Callable[..., Result]:
    from click.testing import CliRunner

    from casework.cli import cli

    runner = CliRunner()

    def _run(*args: str) -> Result:
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return _run


def test_the_import_says_the_suite_runs_with_no_configuration(
    ran: tuple[Path, Result, Result, list[TrialRecord]],
) -> None:
    root, imported, run, _ = ran
    assert imported.exit_code == 0, imported.output
    assert "16 user task(s), 9 injection task(s) → 144 security case(s)" in imported.stdout
    assert "runs with AgentDojo's own tools" in imported.stdout
    assert "no configuration: `casework run bank --agent …`" in imported.stdout
    assert "[run" not in (root / "casework.toml").read_text("utf-8")
    assert run.exit_code in (0, 1), run.output  # 1: some cases failed (the followed injections)


def test_every_trial_gets_agentdojos_own_verdict(
    ran: tuple[Path, Result, Result, list[TrialRecord]],
) -> None:
    _, _, _, trials = ran
    bench = _bench()
    suite = load_suite("banking")
    default = suite.load_and_inject_default_environment({})
    injections = _injections(suite, AgentDojoOptions())
    assert len(trials) == 16 + 16 * 9
    verdicts: dict[str, tuple[bool | None, bool]] = {}
    for trial in trials:
        # Case ids are `banking-<user task>[-<injection task>]` (AgentDojo's ids have no `-`).
        _, user_id, *injected = trial.case_id.split("-")
        task = suite.user_tasks[user_id]
        injection = suite.injection_tasks[injected[0]] if injected else None
        start = (
            suite.load_and_inject_default_environment(injections[(user_id, injected[0])])
            if injected
            else default
        )
        calls = [(c.name, dict(c.arguments)) for c in trial.trajectory.tool_calls]
        utility, security = bench.theirs(
            suite, task, injection, start, calls, trial.trajectory.reply()
        )
        verdicts[trial.case_id] = (
            trial.verdict.passed,
            utility if security is None else not security,
        )
    disagree = {k: v for k, v in verdicts.items() if v[0] != v[1]}
    assert disagree == {}
    # The replayed ground truth passes every user task, by AgentDojo and by casework.
    assert all(verdicts[f"banking-user_task_{n}"] == (True, True) for n in range(16))
    # An injection carried out fails its security case; one ignored passes it.
    assert verdicts["banking-user_task_0-injection_task_1"] == (False, False)
    assert verdicts["banking-user_task_0-injection_task_2"] == (True, True)
