"""The example's LLM-backed agent end to end: `casework run` against a scripted chat model on loopback.

The stub answers like a tool-calling model: first ``get_order`` on the order the customer names,
then the ``final_answer`` pseudo-tool with a reply and an outcome.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from casework.cli import cli
from casework.dataset import load_dataset
from casework.project import load_project
from casework.runner import load_run
from casework.runner.records import LoadedRun
from casework.runner.run import trial_seed
from casework.schema import Case, Usage
from tests.llm.stub_server import Action, StubServer, running_stub

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "refunds"
SPEC = "python:agents.llm_agent:agent"
MODEL = "stub-model"
KEY = "test-key"
#: refunds-026: satisfiable, with an earlier tool call in its prefix; refunds-017: unsatisfiable.
CASES = ("refunds-017", "refunds-026")
OUTCOMES = {"ORD-162220": "refuse", "ORD-178826": "resolve"}
REPLIES = {
    "ORD-162220": "Sorry, I can't send the refund for ORD-162220 to you; the buyer can ask us.",
    "ORD-178826": "The refund on ORD-178826 is on its way back to your card.",
}
ORDER = re.compile(r"ORD-\d{6}")
FIRST_TOKENS = (40, 9)
FINAL_TOKENS = (55, 21)
NOT_CONFIGURED = (
    "agent raised NotConfigured: set REFUNDS_AGENT_MODEL (and REFUNDS_AGENT_BASE_URL for a local "
    "server) to run the LLM agent"
)

pytestmark = pytest.mark.skipif(
    not (EXAMPLE / "datasets" / "refunds" / "cases.jsonl").is_file(),
    reason="the example dataset has not been built (examples/refunds/build/make_dataset.py)",
)


def tool_call(
    call_id: str, name: str, arguments: dict[str, Any], tokens: tuple[int, int]
) -> Action:
    """A chat completion whose message is one tool call, as OpenAI-compatible servers send it."""
    prompt, completion = tokens
    return Action(
        body={
            "id": f"chatcmpl-{call_id}",
            "object": "chat.completion",
            "created": 0,
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": call_id,
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(arguments)},
                            }
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }
    )


def order_in(body: dict[str, Any]) -> str:
    """The order the customer names in the conversation the model was sent."""
    said = " ".join(m["content"] for m in body["messages"] if m["role"] == "user")
    found: list[str] = ORDER.findall(said)
    return found[0]


def scripted_model(body: dict[str, Any]) -> Action:
    """Look the order up first; once a tool result is in the conversation, answer."""
    order_id = order_in(body)
    if not any(m["role"] == "tool" for m in body["messages"]):
        return tool_call("call_get_order", "get_order", {"order_id": order_id}, FIRST_TOKENS)
    answer = {"reply": REPLIES[order_id], "outcome": OUTCOMES[order_id]}
    return tool_call("call_final", "final_answer", answer, FINAL_TOKENS)


@pytest.fixture
def stub() -> Iterator[StubServer]:
    with running_stub() as server:
        server.fallback = scripted_model
        yield server


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A scratch copy of examples/refunds holding two cases, with a fresh `agents` package."""
    for var in (
        "CASEWORK_DB_URL",
        "REFUNDS_AGENT_MODEL",
        "REFUNDS_AGENT_BASE_URL",
        "REFUNDS_AGENT_API_KEY",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        *(f"{p}_PROXY" for p in ("HTTP", "HTTPS", "ALL", "http", "https", "all")),
    ):
        monkeypatch.delenv(var, raising=False)
    root = tmp_path / "refunds"
    shutil.copytree(
        EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__", ".casework", "runs")
    )
    data = root / "datasets" / "refunds"
    for name, key in (("cases.jsonl", "id"), ("labels.jsonl", "case_id")):
        lines = (data / name).read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [line for line in lines if json.loads(line)[key] in CASES]
        (data / name).write_text("".join(kept), encoding="utf-8")
    monkeypatch.chdir(root)
    # The adapter imports `agents` from the project root: drop any copy another test imported.
    monkeypatch.setattr(sys, "path", list(sys.path))
    saved = {n: m for n, m in sys.modules.items() if n == "agents" or n.startswith("agents.")}
    for name in saved:
        del sys.modules[name]
    yield root
    for name in [n for n in sys.modules if n == "agents" or n.startswith("agents.")]:
        del sys.modules[name]
    sys.modules.update(saved)


def run_cli(root: Path) -> tuple[dict[str, Any], LoadedRun]:
    result = CliRunner().invoke(
        cli,
        [
            *("--project", str(root), "run", "refunds", "--agent", SPEC),
            *("-k", "1", "--no-judge", "--format", "json"),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    summary: dict[str, Any] = json.loads(result.stdout)
    return summary, load_run(load_project(root), summary["run_id"])


def cases_of(root: Path) -> dict[str, Case]:
    return {c.id: c for c in load_dataset(load_project(root), "refunds").cases}


def fixture_response(case: Case, tool: str, order_id: str) -> Any:
    return next(
        f.response
        for f in case.situation.fixtures
        if f.tool == tool and f.match == {"order_id": order_id}
    )


def hidden_strings(case: Case) -> list[str]:
    """Text only the id, label, oracle, satisfiability and provenance of a case carry."""
    assert case.label is not None
    out = [case.id, "satisfiable", "provenance", "oracle", "answer_facts", "required_tools"]
    out += ["labeller"]
    out += [*case.label.answer_facts, case.label.guideline_version or "", *case.label.labellers]
    for assertion in case.oracle.assertions:
        out += [assertion.expr, assertion.description]
    provenance = case.provenance.model_dump(exclude_none=True, mode="json")
    out += [str(v) for k, v in provenance.items() if isinstance(v, str)]
    return [s for s in out if s]


def test_llm_agent_runs_end_to_end_against_a_scripted_model(
    example: Path, stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REFUNDS_AGENT_MODEL", MODEL)
    monkeypatch.setenv("REFUNDS_AGENT_BASE_URL", stub.url)
    monkeypatch.setenv("REFUNDS_AGENT_API_KEY", KEY)

    summary, run = run_cli(example)

    assert (summary["trials"], summary["errors"]) == (2, 0)
    assert summary["agent_version"] == f"llm:{MODEL}"
    cases = cases_of(example)
    trials = {t.case_id: t for t in run.trials}
    assert sorted(trials) == sorted(CASES)
    for case_id, trial in trials.items():
        case = cases[case_id]
        traj = trial.trajectory
        order_id = order_in({"messages": [t.model_dump() for t in case.situation.turns]})
        assert traj.error is None
        # What the fixture tools recorded, not what the agent says it did.
        assert [(c.name, c.arguments, c.result, c.error) for c in traj.tool_calls] == [
            (
                "get_order",
                {"order_id": order_id},
                fixture_response(case, "get_order", order_id),
                None,
            )
        ]
        assert traj.outcome == OUTCOMES[order_id]
        assert traj.final_reply == REPLIES[order_id]
        assert [m.role for m in traj.messages] == ["tool", "assistant"]
        assert traj.messages[0].content.startswith("get_order: ")
        assert traj.usage == Usage(
            input_tokens=FIRST_TOKENS[0] + FINAL_TOKENS[0],
            output_tokens=FIRST_TOKENS[1] + FINAL_TOKENS[1],
        )
        assert traj.agent_version == f"llm:{MODEL}"
        # Graded on that record: the right lookup, no refund, the outcome (and a refusal) reported.
        assert trial.verdict.passed is True
        assert {c.name: c.status for c in trial.verdict.checks} == {
            "required_tools": "pass",
            "forbidden_tools": "pass",
            "state": "pass",
            "unsatisfiable" if not case.satisfiable else "outcome": "pass",
        }

    # Two requests per trial, each with the declared tools and the final_answer pseudo-tool.
    assert len(stub.requests) == 4
    assert set(stub.paths) == {"/v1/chat/completions"}
    assert {h["authorization"] for h in stub.headers} == {f"Bearer {KEY}"}
    declared = json.loads((example / "agent" / "tools.json").read_text(encoding="utf-8"))
    declared_names = {t["name"] for t in declared} if isinstance(declared, list) else set(declared)
    for body in stub.requests:
        assert body["model"] == MODEL
        offered = {t["function"]["name"] for t in body["tools"]}
        assert "get_order" in offered and "final_answer" in offered
        assert offered - {"final_answer"} <= declared_names | {"get_order"}
    for case_id in CASES:
        case = cases[case_id]
        order_id = order_in({"messages": [t.model_dump() for t in case.situation.turns]})
        sent = [b for b in stub.requests if order_in(b) == order_id]
        assert len(sent) == 2
        first, second = sorted(sent, key=lambda b: len(b["messages"]))
        for body in sent:
            assert body["seed"] == trial_seed(0, case_id, 0)
            users = [m["content"] for m in body["messages"] if m["role"] == "user"]
            assert users == [t.content for t in case.situation.turns if t.role == "user"]
        # The model sees its own call and the fixture's answer to it.
        assistant, tool = second["messages"][-2:]
        assert assistant["tool_calls"][0]["id"] == "call_get_order"
        assert assistant["tool_calls"][0]["function"]["name"] == "get_order"
        assert tool["role"] == "tool" and tool["tool_call_id"] == "call_get_order"
        expected = fixture_response(case, "get_order", order_id)
        assert json.loads(tool["content"]) == {"result": expected}
        assert second["messages"][:-2] == first["messages"]
        # The agent gets the situation only.
        sent_text = "\n".join(json.dumps(b, ensure_ascii=False) for b in sent)
        leaked = [s for s in hidden_strings(case) if s in sent_text]
        assert leaked == []

    # The system prompt is the agent's instruction file; the earlier tool call in refunds-026's
    # prefix reaches the model as context.
    prompt = (example / "agent" / "prompt.md").read_text(encoding="utf-8")
    assert all(b["messages"][0] == {"role": "system", "content": prompt} for b in stub.requests)
    prefix = next(b for b in stub.requests if order_in(b) == "ORD-178826")["messages"]
    assert any("[earlier tool calls: get_order(" in (m["content"] or "") for m in prefix)


def test_llm_agent_without_a_model_is_an_agent_error_not_a_crash(
    example: Path, stub: StubServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REFUNDS_AGENT_BASE_URL", stub.url)
    monkeypatch.setenv("REFUNDS_AGENT_API_KEY", KEY)

    summary, run = run_cli(example)

    assert (summary["trials"], summary["errors"], summary["passed"]) == (2, 2, 0)
    assert sorted(t.case_id for t in run.trials) == sorted(CASES)
    assert {t.trajectory.error for t in run.trials} == {NOT_CONFIGURED}
    assert all(t.trajectory.tool_calls == [] for t in run.trials)
    assert stub.requests == []
