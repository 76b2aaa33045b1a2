# mypy: disable-error-code="import-untyped"
# (τ²-bench ships no type information; the test reads it as published.)
"""casework's simulator audit on real τ² simulations, beside what τ² itself says of each run.

τ²-bench's own ``run_task`` plays a published airline task (τ²'s ``LLMAgent`` and its real
``UserSimulator``, with its stop/transfer/out-of-scope tokens, turn-taking, environment and
evaluator), the two models being scripted replies of an OpenAI-compatible stub on loopback, so
the simulated user misbehaves in known, planted ways (stops at a question, says an id its
scenario says it does not know, gives another user id than the one it knows, never ends) or
behaves. τ² saves the simulations as a results file with its own ``Results`` model; `casework
import run --results-format tau2` imports it on the airline release `casework import tau2` made,
each trial with the simulated user's record, and casework's audit must flag exactly the planted
ones, as it does on the same simulations mapped by hand. τ²'s termination reason and reward stand beside casework's findings: τ²'s
reward marks none of them, scoring a run the user spoiled as the agent's failure and one it made
easier as a success (docs/review.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from casework.dataset import load_dataset
from casework.interop.run_import import RunPin, run_records
from casework.interop.tau2._results import read_tau_results
from casework.project import load_project
from casework.runner import load_run
from casework.runner.records import TrialRecord
from casework.runner.sim_audit import audit_cases, audit_simulator, simulator_findings
from casework.runner.user_sim import StopReason, UserSimRecord
from casework.schema import Case
from tests.llm.stub_server import Action, StubServer, chat_reply

pytestmark = pytest.mark.slow

TASK = "21"  # Sofia Kim: knows her user id, "does not remember" her reservation id (OBUT9V)
USER_ID = "sofia_kim_7287"
FLIGHTS = [
    {"flight_number": n, "date": "2024-05-27"} for n in ("HAT078", "HAT118", "HAT290", "HAT175")
]
GOLDEN: list[tuple[str, dict[str, Any]]] = [
    (
        "update_reservation_flights",
        {
            "reservation_id": "OBUT9V",
            "cabin": "economy",
            "flights": FLIGHTS,
            "payment_id": "gift_card_6276644",
        },
    ),
    (
        "update_reservation_baggages",
        {
            "reservation_id": "OBUT9V",
            "total_baggages": 2,
            "nonfree_baggages": 0,
            "payment_id": "gift_card_6276644",
        },
    ),
]
OPENING = "Hi, I want to change my Houston to Denver trip of May 27 and add one checked bag."
ASK_ID = "Sure, I can help. What is your user id?"
OFFER = (
    "I found your reservation OBUT9V. I can move it to flights HAT078, HAT118, HAT290 and HAT175 "
    "in economy and add one checked bag, paid with gift_card_6276644. Shall I proceed?"
)
DONE = "Done: your flights are changed and the bag is added."
Step = str | tuple[str, dict[str, Any]]


def _job(user_first: str = OPENING) -> tuple[list[Step], list[str]]:
    """The agent's and the user's scripted replies of a run in which the agent does the task."""
    agent: list[Step] = [ASK_ID, ("get_user_details", {"user_id": USER_ID}), OFFER, *GOLDEN, DONE]
    return agent, [user_first, f"It is {USER_ID}.", "Yes, please go ahead.", "###STOP###"]


@dataclass(frozen=True)
class Planted:
    """One τ² simulation: the scripts, and the checks casework must report (none: it behaves)."""

    name: str
    agent: list[Step]
    user: list[str]
    expected: frozenset[str]
    max_steps: int = 40


def _planted() -> list[Planted]:
    job_agent, job_user = _job()
    leak_agent, leak_user = _job(
        f"Hi, I want to change reservation OBUT9V and add a bag. {OPENING}"
    )
    nagging = [f"Hello again, can you help with my May 27 trip? ({i})" for i in range(10)]
    return [
        Planted("behaves, the agent does the task", job_agent, job_user, frozenset()),
        Planted(
            "behaves, the agent gives up",
            [ASK_ID, "Sorry, I cannot change flights booked with a gift card."],
            [OPENING, f"It is {USER_ID}.", "###STOP###"],
            frozenset(),
        ),
        Planted(
            "stops when the agent asks",
            [ASK_ID],
            [OPENING, "###STOP###"],
            frozenset({"stopped_early"}),
        ),
        Planted(
            "says the reservation id it does not know",
            leak_agent,
            leak_user,
            frozenset({"invented"}),
        ),
        Planted(
            "gives another user id than the one it knows",
            [ASK_ID, "I cannot find user sofia_kim_7288."],
            [OPENING, "It is sofia_kim_7288.", "###STOP###"],
            frozenset({"contradicted_known"}),
        ),
        Planted(
            "never ends the conversation",
            ["What else do you need?"] * 10,
            nagging,
            frozenset({"max_turns"}),
            max_steps=6,
        ),
    ]


def _reply(step: Step, n: int) -> Action:
    if isinstance(step, str):
        return chat_reply(step)
    name, args = step
    call = {
        "id": f"call_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    action = chat_reply("")
    action.body["choices"][0]["message"] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [call],
    }
    action.body["choices"][0]["finish_reason"] = "tool_calls"
    return action


class Script:
    """The stub's answers: the agent's and the user's next scripted reply, by model name."""

    def __init__(self) -> None:
        self.agent: list[Step] = []
        self.user: list[str] = []
        self.served = 0

    def load(self, planted: Planted) -> None:
        self.agent, self.user = list(planted.agent), list(planted.user)

    def __call__(self, body: dict[str, Any]) -> Action:
        self.served += 1
        if body["model"] == "scripted-user":
            return chat_reply(self.user.pop(0))
        return _reply(self.agent.pop(0), self.served)


@pytest.fixture(scope="module")
def stub() -> Iterator[tuple[StubServer, Script]]:
    server = StubServer().start()
    script = Script()
    server.fallback = script
    try:
        yield server, script
    finally:
        server.stop()


# The hand mapping this test made before `import run --results-format tau2` existed, kept as the
# check of the importer: τ²'s reasons a simulation ended as casework's simulated user records
# them (τ² counts its transfer and out-of-scope tokens as the user's stop, and its step limit,
# messages of both sides, is the nearest thing to casework's user-turn limit).
STOPS: dict[str, StopReason] = {
    "user_stop": "user_stop",
    "max_steps": "max_turns",
    "agent_stop": "agent_handoff",
    "agent_error": "agent_error",
    "too_many_errors": "agent_error",
}


def _openai_messages(sim: Any) -> list[dict[str, Any]]:
    """A τ² simulation's messages in the OpenAI chat shape casework's τ-bench reader reads."""
    out: list[dict[str, Any]] = []
    for m in sim.messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.id, "content": m.content or ""})
            continue
        calls = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in m.tool_calls or []
        ]
        out.append({"role": m.role, "content": m.content or "", "tool_calls": calls})
    return out


def _hand_mapped(sims: list[Any], case: Case) -> list[TrialRecord]:
    """The simulations as trials of the case, mapped by hand (τ-bench's reader, the stops above)."""
    rows = [
        {"task_id": case.id, "trial": i, "reward": sim.reward_info.reward, "info": {},
         "traj": _openai_messages(sim)}
        for i, sim in enumerate(sims)
    ]  # fmt: skip
    results = read_tau_results(json.dumps(rows).encode(), "tau2-simulations.json")
    pin = RunPin("airline", "airline@1", "0" * 64, {case.id: case})
    _, records, _ = run_records(
        results, run_id="hand", pin=pin, spec="import:tau", threshold=1.0, now=datetime.now(UTC)
    )
    out = []
    for sim, record in zip(sims, records, strict=True):
        users = sum(1 for m in record.trajectory.messages if m.role == "user")
        seen = UserSimRecord(
            seed=0,
            model="scripted-user",
            prompt_version="tau2-user-simulator",
            user_turns=users,
            stop=STOPS[sim.termination_reason.value],
        )
        out.append(record.model_copy(update={"user_sim": seen}))
    return out


def _project(root: Path) -> Path:
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "tools.json").write_text("[]", encoding="utf-8")
    (root / "casework.toml").write_text(
        'name = "t"\n[agent]\ntools = "agent/tools.json"\n', "utf-8"
    )
    return root


def _save_results(sims: list[Any], task: Any, args: dict[str, Any], path: Path) -> None:
    """The simulations as `tau2 run` saves them: τ²'s own ``Results`` model and save function."""
    from tau2.data_model.simulation import Results
    from tau2.run import get_info

    for i, sim in enumerate(sims):
        sim.trial = i  # what τ²'s `run_tasks` sets on each of its trials
    info = get_info(
        domain="airline",
        agent="llm_agent",
        user="user_simulator",
        llm_agent="openai/scripted-agent",
        llm_args_agent=args,
        llm_user="openai/scripted-user",
        llm_args_user=args,
        num_trials=len(sims),
        max_steps=40,
        seed=300,
    )
    Results(info=info, tasks=[task], simulations=sims).save(path)


def test_the_audit_flags_exactly_the_planted_tau2_simulations_imported_from_tau2_results(
    stub: tuple[StubServer, Script],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    run_cli: Callable[..., Result],
) -> None:
    # τ²'s registry imports LiteLLM, which would fetch a price list over the network.
    monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from loguru import logger
    from tau2.registry import registry
    from tau2.run import run_task

    logger.remove()  # τ² logs every message of every step at DEBUG
    server, script = stub
    task = next(t for t in registry.get_tasks_loader("airline")() if t.id == TASK)
    args = {"api_base": server.url, "api_key": "offline", "num_retries": 0}
    planted = _planted()
    sims = []
    for p in planted:
        script.load(p)
        sims.append(
            run_task(
                "airline",
                task,
                "llm_agent",
                "user_simulator",
                llm_agent="openai/scripted-agent",
                llm_args_agent=args,
                llm_user="openai/scripted-user",
                llm_args_user=args,
                max_steps=p.max_steps,
                seed=300,
            )
        )
        assert script.agent == [] or p.max_steps < 40, (p.name, script.agent)
    results = tmp_path / "p" / "tau2-results.json"
    _save_results(sims, task, args, _project(tmp_path / "p") / "tau2-results.json")
    monkeypatch.chdir(tmp_path / "p")
    # Before: "tau2" was not a results format (`--results-format` refused it).
    out = run_cli("import", "tau2", "--domain", "airline", "--dataset", "airline")
    assert out.exit_code == 0, out.output
    out = run_cli("import", "run", str(results), "--results-format", "tau2",
                  "--dataset", "airline", "--run-id", "tau2-sims")  # fmt: skip
    assert out.exit_code == 0, out.output + out.stderr
    project = load_project(tmp_path / "p")
    run = load_run(project, "tau2-sims")
    released = {c.id: c for c in load_dataset(project, "airline@1").cases}
    case = released[f"airline-{TASK}"]
    scenario = case.situation.user_scenario
    assert scenario is not None and USER_ID in scenario.known_info
    assert "reservation" in scenario.unknown_info and "OBUT9V" not in scenario.unknown_info
    rows = []
    for p, sim, trial, hand in zip(
        planted, sims, run.trials, _hand_mapped(sims, case), strict=True
    ):
        assert trial.user_sim is not None and hand.user_sim is not None
        assert (trial.user_sim.stop, trial.user_sim.user_turns) == (
            hand.user_sim.stop,
            hand.user_sim.user_turns,
        )
        assert trial.user_sim.model == "openai/scripted-user" and trial.user_sim.seed == 300
        assert trial.verdict.passed is (sim.reward_info.reward >= 1.0)
        assert [c.name for c in trial.trajectory.tool_calls] == [
            c.name for c in hand.trajectory.tool_calls
        ]
        ours = {f.check for f in simulator_findings(case, trial)}
        assert ours == {f.check for f in simulator_findings(case, hand)}, p.name
        rows.append((p.name, sim.termination_reason.value, sim.reward_info.reward, sorted(ours)))
    # What τ² says of each run, beside casework's findings (docs/review.md shows this table).
    assert rows == [
        ("behaves, the agent does the task", "user_stop", 1.0, []),
        ("behaves, the agent gives up", "user_stop", 0.0, []),
        ("stops when the agent asks", "user_stop", 0.0, ["stopped_early"]),
        ("says the reservation id it does not know", "user_stop", 1.0, ["invented"]),
        ("gives another user id than the one it knows", "user_stop", 0.0, ["contradicted_known"]),
        ("never ends the conversation", "max_steps", 0.0, ["max_turns"]),
    ]
    assert [set(r[3]) for r in rows] == [set(p.expected) for p in planted]
    audit = audit_cases(run, [case], [], threshold=0.2)
    found = audit.cases[case.id]
    assert (found.trials, found.flagged) == (6, 4)
    assert audit.quarantined == (case.id,)
    # The gate's own audit (the project's threshold and reviews) quarantines it too.
    assert audit_simulator(project, run, list(released.values())).quarantined == (case.id,)
    # The user model's arguments are kept without the credential τ² saved with them.
    kept = run.trials[0].trajectory.metadata["tau2"]["user"]
    assert kept["llm_args"] == {"api_base": server.url, "num_retries": 0}
    assert "offline" not in results.with_name("runs").joinpath("tau2-sims.jsonl").read_text("utf-8")
    shown = run_cli("results", "show", "tau2-sims")
    assert shown.exit_code == 0, shown.output + shown.stderr
    # The gate quarantines the case (and, as for every imported run, blocks: `imported_run`).
    gate = run_cli("gate", "--run", "tau2-sims", "--format", "json")
    decision = json.loads(gate.stdout)
    quarantined = [w for w in decision["warnings"] if w["code"] == "simulator_quarantine"]
    assert len(quarantined) == 1 and f"case {case.id}:" in quarantined[0]["message"]
    assert "imported_run" in {f["code"] for f in decision["failures"]}
