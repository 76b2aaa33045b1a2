"""Simulated users: turn limit, stop token, per-trial seeds, blindness of the simulator's prompt."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from casework.errors import UsageError
from casework.llm import Message, ScriptedProvider
from casework.llm.accounting import process_ledger
from casework.llm.client import Client
from casework.project import Project, load_project
from casework.runner import RunRequest, Tools, load_run, run_agent, run_results
from casework.runner.user_sim import UserSimulator, user_seed
from casework.schema import STOP_TOKEN, AgentInput, Trajectory, UserScenario
from tests.runner.builders import SECRETS, make_project, refund_case

AGENT = "python:tests.runner.test_user_sim:asks_for_the_order"
#: Every AgentInput the agent received in the current test.
SEEN: list[AgentInput] = []


def asks_for_the_order(request: AgentInput, tools: Tools) -> Trajectory:
    """Asks for the order id until a user turn names one, then refunds its total."""
    SEEN.append(request)
    said = " ".join(t.content for t in request.turns if t.role == "user")
    found = re.search(r"\b(o\d+)\b", said)
    if found is None:
        return Trajectory(final_reply="Which order is it? Please give me its id.")
    order = tools.call("get_order", order_id=found.group(1))
    tools.call("issue_refund", order_id=found.group(1), amount=order["total"])
    return Trajectory(final_reply=f"Refunded {order['total']}.", outcome="resolve")


class ScriptedUser:
    """A simulated user answering its n-th turn of a conversation with ``replies[n]``.

    The turn is read from the prompt (how many messages the customer already wrote), so
    concurrent trials each get the script from its start; every prompt is recorded.
    """

    def __init__(self, replies: list[str]) -> None:
        self.replies = replies
        self.prompts: list[list[Message]] = []

    def __call__(self, messages: list[Message]) -> str:
        self.prompts.append(messages)
        written = sum(m.role == "assistant" for m in messages)
        return self.replies[min(written, len(self.replies) - 1)]

    def client(self) -> Client:
        return Client(ScriptedProvider(fn=self), provider_name="scripted", role="user")

    def text(self) -> str:
        return "\n".join(m.content for prompt in self.prompts for m in prompt)


def scenario_case(case_id: str, max_turns: int = 4, **situation: Any) -> dict[str, Any]:
    case = refund_case(case_id, "o1", 12.0)
    case["situation"]["turns"] = []
    case["situation"]["user_scenario"] = {
        "persona": "a hurried customer",
        "goal": "get the broken kettle refunded",
        "known_info": "the order id is o1",
        "unknown_info": "the delivery date",
        "instructions": "give the order id only when asked",
        "max_turns": max_turns,
    }
    case["situation"].update(situation)
    case["label"]["answer_facts"] = ["SECRET-FACT"]
    case["oracle"]["class"] = "state_assertion"
    return case


@pytest.fixture(autouse=True)
def _clear_seen() -> Iterator[None]:
    SEEN.clear()
    yield
    SEEN.clear()


def project_with(tmp_path: Path, cases: list[dict[str, Any]]) -> Project:
    return load_project(make_project(tmp_path / "proj", cases))


def test_user_opens_answers_and_stops_with_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    project = project_with(tmp_path, [scenario_case("s-1")])
    user = ScriptedUser(
        ["my kettle broke, refund please", "it is order o1", f"thanks {STOP_TOKEN}"]
    )
    summary = run_agent(
        project,
        RunRequest(
            dataset="refunds", agent=AGENT, k=2, concurrency=1, use_judge=False, store=False
        ),
        user=user.client(),
    )
    run = load_run(project, summary.header.run_id)
    assert summary.end.passed == 2
    for trial in run.trials:
        sim = trial.user_sim
        assert sim is not None and sim.stop == "user_stop" and sim.user_turns == 3
        assert sim.seed == user_seed(0, "s-1", trial.trial) != trial.seed
        said = [(m.role, m.content) for m in trial.trajectory.messages]
        assert said == [
            ("user", "my kettle broke, refund please"),
            ("assistant", "Which order is it? Please give me its id."),
            ("user", "it is order o1"),
            ("assistant", "Refunded 12.0."),
            ("user", "thanks"),
        ]
        assert trial.trajectory.final_reply == "Refunded 12.0."
        assert [c.name for c in trial.trajectory.tool_calls] == ["get_order", "issue_refund"]
    # The agent saw the conversation grow; the stop token never reached it.
    assert [len(r.turns) for r in SEEN] == [1, 3, 1, 3]
    assert all(STOP_TOKEN not in t.content for r in SEEN for t in r.turns)
    # The trial seeds differ, so do the user seeds; pass^k is computed as for any case.
    assert len({t.user_sim.seed for t in run.trials if t.user_sim}) == 2
    overall = run_results(run).overall
    assert overall.pass_hat[2] == 1.0 and overall.stability == 1.0


def test_turn_limit_ends_a_user_who_never_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    project = project_with(tmp_path, [scenario_case("s-1", max_turns=2)])
    user = ScriptedUser(["refund my kettle", "I don't know the id"])
    summary = run_agent(
        project,
        RunRequest(dataset="refunds", agent=AGENT, k=1, use_judge=False, store=False),
        user=user.client(),
    )
    trial = load_run(project, summary.header.run_id).trials[0]
    assert trial.user_sim is not None
    assert (trial.user_sim.stop, trial.user_sim.user_turns) == ("max_turns", 2)
    assert len(user.prompts) == 2 and len(SEEN) == 2  # two user turns, two agent turns
    assert trial.verdict.passed is False  # never refunded: state and tools fail


def test_a_user_turn_that_only_stops_leaves_nothing_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    project = project_with(tmp_path, [scenario_case("s-1")])
    summary = run_agent(
        project,
        RunRequest(dataset="refunds", agent=AGENT, k=1, use_judge=False, store=False),
        user=ScriptedUser([STOP_TOKEN]).client(),
    )
    trial = load_run(project, summary.header.run_id).trials[0]
    assert trial.user_sim is not None and trial.user_sim.stop == "user_stop"
    assert SEEN == [] and trial.trajectory.messages == []
    assert trial.verdict.passed is False


def test_the_simulator_prompt_holds_the_scenario_and_never_the_answer_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    case = scenario_case("s-1")
    case["satisfiable"] = True
    case["label"]["nl_assertions"] = ["SECRET-ASSERTION"]
    case["label"]["matched_facts"] = [{"text": "SECRET-MATCHED", "match": "exact"}]
    project = project_with(tmp_path, [case])
    user = ScriptedUser(["refund please", "order o1", STOP_TOKEN])
    run_agent(
        project,
        RunRequest(dataset="refunds", agent=AGENT, k=2, use_judge=False, store=False),
        user=user.client(),
    )
    text = user.text()
    assert "the order id is o1" in text and "a hurried customer" in text
    hidden = [*SECRETS, "SECRET-ASSERTION", "SECRET-MATCHED", "satisfiable", "state_assertion"]
    hidden += ["get_order", "issue_refund", "delivered", "total"]  # tool calls and results
    leaked = [s for s in hidden if s in text]
    assert leaked == []


def test_the_prompt_is_built_only_from_scenario_and_conversation() -> None:
    scenario = UserScenario(goal="g", persona="p", max_turns=3)
    sim = UserSimulator(ScriptedUser(["x"]).client())
    opening = sim.prompt(scenario, [])
    assert [m.role for m in opening] == ["system", "user"]
    assert "Your goal: g" in opening[0].content and "Who you are: p" in opening[0].content
    assert "What you know" not in opening[0].content  # empty parts are left out
    assert STOP_TOKEN in opening[0].content


def test_a_frozen_case_with_a_scenario_needs_a_private_user_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    case = scenario_case("s-1")
    case["frozen"] = True
    root = make_project(
        tmp_path / "proj", [case], '[models.user]\nprovider = "openai"\nmodel = "gpt-4o-mini"\n'
    )
    with pytest.raises(UsageError, match="frozen case s-1 has a user_scenario"):
        run_agent(
            load_project(root),
            RunRequest(dataset="refunds", agent=AGENT, k=1, use_judge=False, store=False),
        )


def test_old_trial_records_keep_their_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    project = project_with(tmp_path, [refund_case("r-1", "o1", 12.0)])
    summary = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent="python:tests.runner.sample_agents:good",
            k=1,
            use_judge=False,
            store=False,
        ),
    )
    lines = summary.log.read_text().splitlines()
    assert all("user_sim" not in json.loads(line) for line in lines)


def test_casework_run_ends_with_the_simulated_users_usage_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from casework.cli import cli

    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    config = '\n[models.user]\nprovider = "scripted"\nmodel = "scripted-user"\nscript = "llm/user.jsonl"\n'
    root = make_project(tmp_path / "proj", [scenario_case("s-1")], config)
    (root / "llm").mkdir()
    replies = ["my kettle broke, refund please", "it is order o1", f"thanks {STOP_TOKEN}"]
    (root / "llm" / "user.jsonl").write_text(
        "".join(json.dumps({"reply": r}) + "\n" for r in replies), encoding="utf-8"
    )
    monkeypatch.chdir(root)
    # A library call made earlier in this process (another test, a program) is not this
    # command's usage: only the run's own simulated user is reported.
    process_ledger().record("user", "earlier-stand-in", None, cached=False)
    result = CliRunner().invoke(cli, ["run", "refunds", "--agent", AGENT, "-k", "1", "--no-judge"])
    assert result.exit_code == 0, result.stderr
    usage = [line for line in result.stderr.splitlines() if line.startswith("user (")]
    assert len(usage) == 1
    assert re.fullmatch(
        r"user \(scripted-user\): \d+ requests, 0 from cache, tokens not reported by the provider",
        usage[0],
    )
    assert "user (" not in result.stdout
