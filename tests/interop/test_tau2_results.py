# mypy: disable-error-code="import-untyped"
# (τ²-bench ships no type information; the test builds its files with its own models.)
"""`casework import run --results-format tau2`: τ²-bench results files, edges and errors.

The evidence that real τ² runs import (τ²'s ``run_task`` with its user simulator, saved by τ²)
is tests/runner/test_tau2_sim_audit.py; here simulations are built with τ²'s own pydantic models
(``Results``, ``SimulationRun``, its message classes) and saved with τ²'s ``Results.save``, to
reach what that run does not: every termination reason, the user's own tools (telecom's phone),
token usage and cost, a skipped simulation, and malformed files.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from casework.errors import InputError
from casework.interop.run_import import read_results, run_records, standalone_pin
from casework.interop.tau2._simulations import STOPS
from casework.project import load_project
from casework.runner import load_run

pytest.importorskip("tau2")

Run = Callable[..., Result]
NOW = datetime(2026, 12, 5, 6, tzinfo=UTC)


def _messages() -> list[Any]:
    """A telecom-like conversation: an agent tool call, the user's own tool, usage and cost."""
    from tau2.data_model.message import AssistantMessage, ToolCall, ToolMessage, UserMessage

    usage = {"prompt_tokens": 100, "completion_tokens": 7}
    return [
        AssistantMessage(role="assistant", content="Hi! How can I help you today?"),
        UserMessage(role="user", content="My phone has no signal. My number is 555-123-2002."),
        AssistantMessage(
            role="assistant",
            tool_calls=[
                ToolCall(
                    id="c1",
                    name="get_customer_by_phone",
                    arguments={"phone_number": "555-123-2002"},
                )
            ],
            usage=usage,
            cost=0.01,
        ),
        ToolMessage(
            id="c1", role="tool", content='{"customer_id": "C1001"}', requestor="assistant"
        ),
        AssistantMessage(
            role="assistant", content="Please check your status bar.", usage=usage, cost=0.01
        ),
        AssistantMessage(
            role="assistant",
            tool_calls=[ToolCall(id="c2", name="refuel_data", arguments={"gb": -1})],
        ),
        ToolMessage(
            id="c2", role="tool", content="Error: bad amount", requestor="assistant", error=True
        ),
        UserMessage(
            role="user",
            tool_calls=[ToolCall(id="u1", name="check_status_bar", arguments={}, requestor="user")],
        ),
        ToolMessage(id="u1", role="tool", content="No signal", requestor="user"),
        UserMessage(role="user", content="It says no signal. ###STOP###"),
    ]


def _save(path: Path, reasons: list[str], *, skipped: bool = False) -> None:
    """A τ² results file (τ²'s ``Results.save``) with one simulation per termination reason."""
    from tau2.data_model.simulation import (
        Results,
        RewardInfo,
        SimulationRun,
        TerminationReason,
    )
    from tau2.registry import registry
    from tau2.run import get_info

    task = registry.get_tasks_loader("telecom")()[0]
    secret = {"api_key": "sk-not-kept", "temperature": 0.0}
    info = get_info(domain="telecom", agent="llm_agent", user="user_simulator",
                    llm_agent="gpt-4.1", llm_user="gpt-4.1-mini", llm_args_user=secret,
                    num_trials=len(reasons), seed=300)  # fmt: skip
    sims = [
        SimulationRun(
            id=f"sim-{i}",
            task_id=task.id,
            start_time="2026-12-01T10:00:00.000000",
            end_time="2026-12-01T10:00:12.500000",
            duration=12.5,
            termination_reason=TerminationReason(reason),
            agent_cost=0.02,
            user_cost=0.005,
            reward_info=None if skipped else RewardInfo(reward=1.0 if i == 0 else 0.0),
            messages=_messages(),
            trial=i,
            seed=1000 + i,
            skipped=skipped,
        )
        for i, reason in enumerate(reasons)
    ]
    Results(info=info, tasks=[task], simulations=sims).save(path)


def test_every_tau2_termination_reason_has_a_stop_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from tau2.data_model.simulation import TerminationReason

    assert sorted(STOPS) == sorted(r.value for r in TerminationReason)


def test_a_tau2_results_file_keeps_calls_user_tools_usage_timing_and_the_user_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    path = tmp_path / "results.json"
    reasons = ["user_stop", "max_steps", "agent_stop", "too_many_errors", "user_error"]
    _save(path, reasons)
    results = read_results(path, "tau2")
    assert results.agent == "gpt-4.1"
    assert [t.trial for t in results.trials] == [0, 1, 2, 3, 4]
    assert [t.user_sim.stop for t in results.trials if t.user_sim] == [
        "user_stop", "max_turns", "agent_handoff", "agent_error", "agent_error"
    ]  # fmt: skip
    pin = standalone_pin(path.read_bytes(), path.name)
    _, records, end = run_records(
        results, run_id="r", pin=pin, spec="import:tau2", threshold=1.0, now=NOW
    )
    first = records[0]
    assert [r.verdict.passed for r in records] == [True, False, False, False, False]
    assert "tau2 reported reward 1; threshold 1" in first.verdict.checks[0].evidence
    # The agent's calls only (a failed one with τ²'s error text); the user's rides on its message.
    call, failed = first.trajectory.tool_calls
    assert (call.name, call.result) == ("get_customer_by_phone", {"customer_id": "C1001"})
    assert (failed.name, failed.result, failed.error) == ("refuel_data", None, "Error: bad amount")
    users = [m for m in first.trajectory.messages if m.role == "user"]
    assert [(c.name, c.result) for c in users[1].tool_calls] == [("check_status_bar", "No signal")]
    assert [m.role for m in first.trajectory.messages].count("tool") == 2
    assert first.trajectory.final_reply == "Please check your status bar."
    usage = first.trajectory.usage
    assert (usage.input_tokens, usage.output_tokens, usage.cost_usd) == (200, 14, 0.02)
    assert end.cost_usd == pytest.approx(0.1)
    assert (first.seed, first.duration_s, first.started_at.isoformat()) == (
        1000, 12.5, "2026-12-01T10:00:00+00:00"
    )  # fmt: skip
    sim = first.user_sim
    assert sim is not None
    assert (sim.model, sim.seed, sim.user_turns) == ("gpt-4.1-mini", 1000, 2)
    assert sim.prompt_version.startswith("tau2:user_simulator:")
    kept = first.trajectory.metadata["tau2"]
    assert kept["termination_reason"] == "user_stop" and kept["user_cost"] == 0.005
    assert kept["user"]["llm_args"] == {"temperature": 0.0}  # the API key is not kept
    assert "sk-not-kept" not in first.model_dump_json()


def test_a_skipped_tau2_simulation_is_a_failed_trial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    path = tmp_path / "results.json"
    _save(path, ["agent_error"], skipped=True)
    (trial,) = read_results(path, "tau2").trials
    assert (trial.passed, trial.reward) == (False, None)
    pin = standalone_pin(path.read_bytes(), path.name)
    _, (record,), _ = run_records(
        read_results(path, "tau2"), run_id="r", pin=pin, spec="import:tau2", threshold=1.0, now=NOW
    )
    assert record.verdict.passed is False
    assert "τ² skipped this simulation" in record.verdict.checks[0].evidence


@pytest.mark.parametrize(
    ("change", "located"),
    [
        (lambda d: d.pop("simulations"), "results.json: /simulations: τ²-bench results must be"),
        (
            lambda d: d["simulations"][0].pop("termination_reason"),
            "results.json: /simulations/0/termination_reason: missing",
        ),
        (
            lambda d: d["simulations"][1].update(termination_reason="bored"),
            "results.json: /simulations/1/termination_reason: must be one of user_stop",
        ),
        (
            lambda d: d["simulations"][0]["messages"][1].update(role="robot"),
            "results.json: /simulations/0/messages/1/role: role must be assistant, user",
        ),
        (
            lambda d: d["simulations"][0].update(reward_info=None),
            "results.json: /simulations/0/reward_info: missing: τ² did not score",
        ),
        (
            lambda d: d["simulations"][1]["messages"][2]["tool_calls"][0].update(arguments=[1]),
            "results.json: /simulations/1/messages/2/tool_calls/0/arguments: tool call arguments "
            "must be an object",
        ),
    ],
)
def test_a_malformed_tau2_results_file_is_a_located_error_and_nothing_is_written(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_cli: Run,
    change: Callable[[dict[str, Any]], object],
    located: str,
) -> None:
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    root = tmp_path / "p"
    root.mkdir()
    (root / "casework.toml").write_text('name = "t"\n', "utf-8")
    path = root / "results.json"
    _save(path, ["user_stop", "max_steps"])
    data = json.loads(path.read_text("utf-8"))
    change(data)
    path.write_text(json.dumps(data), "utf-8")
    with pytest.raises(InputError):
        read_results(path, "tau2", shown="results.json")
    monkeypatch.chdir(root)
    out = run_cli("import", "run", "results.json", "--results-format", "tau2")
    assert out.exit_code != 0
    assert located in out.output + out.stderr
    assert "Traceback" not in out.output + out.stderr
    assert not (root / "runs").exists()


def test_a_tau2_telecom_run_pins_to_the_imported_domain_by_original_ids_and_shows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    # telecom's task ids hold brackets and `|`: only the original ids kept at import find them.
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    root = tmp_path / "p"
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "tools.json").write_text("[]", encoding="utf-8")
    (root / "casework.toml").write_text(
        'name = "t"\n[agent]\ntools = "agent/tools.json"\n', "utf-8"
    )
    _save(root / "results.json", ["user_stop", "max_steps"])
    monkeypatch.chdir(root)
    out = run_cli("import", "tau2", "--domain", "telecom", "--dataset", "telecom")
    assert out.exit_code == 0, out.output
    out = run_cli("import", "run", "results.json", "--results-format", "tau2",
                  "--dataset", "telecom", "--run-id", "t2")  # fmt: skip
    assert out.exit_code == 0, out.output + out.stderr
    assert "on telecom@1" in out.output
    run = load_run(load_project(root), "t2")
    original = json.loads((root / "results.json").read_text("utf-8"))["tasks"][0]["id"]
    (case_id,) = {t.case_id for t in run.trials}
    assert case_id != original
    assert [t.user_sim.stop for t in run.trials if t.user_sim] == ["user_stop", "max_turns"]
    shown = run_cli("results", "show", "t2")
    assert shown.exit_code == 0, shown.output + shown.stderr


@pytest.mark.slow
def test_a_real_tau2_telecom_run_keeps_the_users_own_tool_calls_on_its_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # τ²'s own run_task, user simulator and telecom environment (the user's phone), the two
    # models scripted replies of the loopback stub; τ²'s Results.save writes the file.
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from loguru import logger
    from tau2.data_model.simulation import Results
    from tau2.registry import registry
    from tau2.run import get_info, run_task

    from tests.llm.stub_server import Action, StubServer
    from tests.runner.test_tau2_sim_audit import Step, _reply

    logger.remove()  # τ² logs every message of every step at DEBUG
    agent: list[Step] = [
        "Sorry to hear that. Could you check your status bar?",
        ("get_customer_by_phone", {"phone_number": "555-123-2002"}),
        "Thanks, I see your account. Please restart your phone.",
    ]
    user: list[Step] = [
        "My mobile data is not working.",
        ("check_status_bar", {}),
        "My status bar shows airplane mode.",
        "###STOP###",
    ]
    served = [0]

    def script(body: dict[str, Any]) -> Action:
        served[0] += 1
        return _reply((user if body["model"] == "scripted-user" else agent).pop(0), served[0])

    server = StubServer().start()
    server.fallback = script
    task = registry.get_tasks_loader("telecom")()[0]
    args = {"api_base": server.url, "api_key": "offline", "num_retries": 0}
    try:
        sim = run_task("telecom", task, "llm_agent", "user_simulator",
                       llm_agent="openai/scripted-agent", llm_args_agent=args,
                       llm_user="openai/scripted-user", llm_args_user=args, max_steps=40, seed=7)  # fmt: skip
    finally:
        server.stop()
    sim.trial = 0
    info = get_info(domain="telecom", agent="llm_agent", user="user_simulator",
                    llm_agent="openai/scripted-agent", llm_args_agent=args,
                    llm_user="openai/scripted-user", llm_args_user=args, seed=7)  # fmt: skip
    path = tmp_path / "results.json"
    Results(info=info, tasks=[task], simulations=[sim]).save(path)
    (trial,) = read_results(path, "tau2").trials
    # τ²'s own record of the run, beside what the import kept.
    said = [m for m in sim.messages if m.role == "user" and m.tool_calls]
    assert [(c.name, c.requestor) for m in said for c in m.tool_calls] == [
        ("check_status_bar", "user")
    ]
    status = next(m.content for m in sim.messages if m.role == "tool" and m.requestor == "user")
    users = [m for m in trial.messages if m.role == "user"]
    assert [(c.name, c.result) for m in users for c in m.tool_calls] == [
        ("check_status_bar", status)
    ]
    (call,) = trial.tool_calls  # the agent's only
    assert call.name == "get_customer_by_phone" and call.result["customer_id"] == "C1001"
    assert [m.role for m in trial.messages].count("tool") == 1
    assert trial.reward == sim.reward_info.reward
    assert trial.user_sim is not None
    assert (trial.user_sim.stop, trial.user_sim.user_turns) == ("user_stop", 3)
    tokens = sum(
        (m.usage or {}).get("prompt_tokens", 0) for m in sim.messages if m.role == "assistant"
    )
    assert trial.input_tokens == tokens > 0
