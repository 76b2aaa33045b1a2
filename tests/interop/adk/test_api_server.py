"""A real `adk api_server` (google-adk from PyPI) runs under `casework run` with zero user code.

The ADK app (tests/interop/adk/agents/refunds) is two Python tool functions and ADK's LiteLlm
model pointed at the OpenAI-compatible stub server of tests/llm on loopback, which plays a
deterministic model: look the order up, refund it, say so; ask for the order number when the
customer gives none. casework is configured with one line, `[agent] spec = "adk:URL/APP"`: the
tool declarations come from the server's app-info, each trial is an ADK session started with the
case's state, and the calls, results and final session state come from ADK's events.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner, Result
from httpx_sse import connect_sse

from casework.cli import cli
from casework.dataset.tools import declared_tools
from casework.project import load_project
from tests.llm.stub_server import Action, StubServer, chat_reply, error_reply

AGENTS = Path(__file__).resolve().parent / "agents"
ADK = Path(sys.executable).with_name("adk")
STARTUP_S = 60.0
PROXY_VARS = tuple(f"{p}_PROXY" for p in ("HTTP", "HTTPS", "ALL", "NO", "http", "https", "all"))
ORDER = re.compile(r"\bORD-\d+\b")


def _tool_call(name: str, args: dict[str, Any], call_id: str) -> Action:
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
        ],
    }
    return Action(
        body={
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": 0,
            "model": "stub-model",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24},
        }
    )


def _model(body: dict[str, Any]) -> Action:
    """The stand-in model: refunds the order the customer names, else asks which order."""
    messages = body["messages"]
    last = messages[-1]
    if last["role"] == "tool":
        result = json.loads(last["content"])
        if "refund_id" in result:
            return chat_reply(f"Done: refunded {result['amount']} EUR ({result['refund_id']}).")
        if "error" in result:
            return chat_reply(f"Sorry, I could not find that order: {result['error']}.")
        return _tool_call(
            "issue_refund", {"order_id": result["order_id"], "amount": result["total"]}, "call-2"
        )
    said = " ".join(str(m.get("content") or "") for m in messages if m["role"] == "user")
    found = ORDER.findall(said)
    if not found:
        return chat_reply("Which order number is it?", prompt_tokens=15, completion_tokens=6)
    return _tool_call("get_order", {"order_id": found[-1]}, "call-1")


def _streamed(reply: Action) -> Action:
    """A chat completion as the OpenAI streaming API sends it: chunks as server-sent events."""
    choice = reply.body["choices"][0]
    message = choice["message"]
    delta: dict[str, Any] = {"role": "assistant"}
    if message.get("tool_calls"):
        delta["tool_calls"] = [{"index": i, **c} for i, c in enumerate(message["tool_calls"])]
    chunks = [delta]
    text = message.get("content") or ""
    # The reply in two pieces, so ADK streams partial events before the whole one.
    chunks += (
        [{"content": text[: len(text) // 2]}, {"content": text[len(text) // 2 :]}] if text else []
    )
    head = {
        "id": "chatcmpl-stub",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "stub-model",
    }
    lines = [{**head, "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in chunks]
    lines.append(
        {
            **head,
            "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}],
            "usage": reply.body["usage"],
        }
    )
    raw = "".join(f"data: {json.dumps(line)}\n\n" for line in lines) + "data: [DONE]\n\n"
    return Action(raw=raw.encode())


def _model_or_stream(body: dict[str, Any]) -> Action:
    """The stand-in model, streaming its reply when asked to (ADK's /run_sse with streaming)."""
    reply = _model(body)
    return _streamed(reply) if body.get("stream") else reply


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def model() -> Iterator[StubServer]:
    server = StubServer()
    server.fallback = _model_or_stream
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def adk_url(model: StubServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`adk api_server` serving a scratch copy of the agents folder on a free loopback port."""
    agents = tmp_path_factory.mktemp("adk") / "agents"
    shutil.copytree(AGENTS, agents, ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARS}
    # LiteLLM would fetch its model price list from the internet: the bundled copy, offline.
    env |= {"CASEWORK_TEST_LLM_BASE": model.url, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    log_path = agents.parent / "adk.log"
    with log_path.open("w", encoding="utf-8") as log:
        proc = subprocess.Popen(
            [
                *(str(ADK), "api_server", "--host", "127.0.0.1", "--port", str(port)),
                *("--session_service_uri", "memory://", str(agents)),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + STARTUP_S
            while True:
                try:
                    httpx.get(f"{base}/list-apps", timeout=2.0, trust_env=False)
                    break
                except httpx.TransportError:
                    assert proc.poll() is None, log_path.read_text(encoding="utf-8")
                    assert time.monotonic() < deadline, log_path.read_text(encoding="utf-8")
                    time.sleep(0.1)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


CASES = [
    {
        "id": "adk-refund",
        "situation": {
            "goal": "refund a broken mug",
            "turns": [
                {"role": "user", "content": "My mug (order ORD-1) arrived broken, refund it."}
            ],
            "state": {"refunds": []},
        },
        "label": {
            "outcome": "resolve",
            "required_tools": [
                {"name": "get_order", "arguments": {"order_id": {"value": "ORD-1"}}},
                {"name": "issue_refund", "arguments": {"order_id": {"value": "ORD-1"}}},
            ],
        },
        "oracle": {
            "class": "state_assertion",
            "assertions": [
                {"expr": "refunds[0].amount", "value": 79.0},
                {"expr": "length(refunds)", "value": 1},
            ],
        },
    },
    {
        "id": "adk-clarify",
        "situation": {
            "goal": "a refund, order not named",
            "turns": [{"role": "user", "content": "I want my money back."}],
            "state": {"refunds": []},
        },
        "label": {"outcome": "clarify", "forbidden_tools": ["issue_refund"]},
        "oracle": {"class": "state_assertion", "assertions": [{"expr": "refunds", "value": []}]},
    },
    {
        "id": "adk-prefix",
        "situation": {
            "goal": "refund, order given after the agent asked",
            "turns": [
                {"role": "user", "content": "Hi, I need a refund."},
                {"role": "assistant", "content": "Which order number is it?"},
                {"role": "user", "content": "It is ORD-1."},
            ],
            "state": {"refunds": [{"order_id": "ORD-9", "amount": 5.0}]},
        },
        "label": {
            "outcome": "resolve",
            "required_tools": [
                {"name": "issue_refund", "arguments": {"order_id": {"value": "ORD-1"}}}
            ],
        },
        "oracle": {
            "class": "state_assertion",
            "assertions": [{"expr": "refunds[1].order_id", "value": "ORD-1"}],
        },
    },
]


SCENARIO = {
    "id": "adk-simulated",
    "situation": {
        "goal": "a refund, the order given when asked",
        "turns": [{"role": "user", "content": "I need a refund."}],
        "user_scenario": {"goal": "get order ORD-1 refunded", "known_info": "It is ORD-1."},
        "state": {"refunds": []},
    },
    "label": {
        "outcome": "resolve",
        "required_tools": [{"name": "issue_refund", "arguments": {"order_id": {"value": "ORD-1"}}}],
    },
    "oracle": {"class": "state_assertion", "assertions": [{"expr": "length(refunds)", "value": 1}]},
}
#: The simulated user, offline: names the order when asked, stops once refunded.
USER_RULES = [
    {"schema_version": 1, "when": "Done: refunded", "reply": "Thanks! ###STOP###"},
    {"schema_version": 1, "when": "Which order number", "reply": "It is ORD-1."},
]
#: An offline judge reading the outcome of the final reply (ADK agents report no outcome field).
JUDGE_RULES = [
    {"schema_version": 1, "regex": "<reply>\nWhich order", "reply": {"outcome": "clarify"}},
    {"schema_version": 1, "reply": {"outcome": "resolve", "reason": "it says it refunded"}},
]


def _project(root: Path, spec: str) -> Path:
    root.mkdir()
    (root / "casework.toml").write_text(
        f'schema_version = 1\nname = "adk-served"\n\n[agent]\nspec = "{spec}"\n\n'
        '[models.judge]\nprovider = "scripted"\nmodel = "scripted"\nscript = "judge.jsonl"\n\n'
        '[models.user]\nprovider = "scripted"\nmodel = "scripted-user"\nscript = "user.jsonl"\n',
        encoding="utf-8",
    )
    rules = "".join(json.dumps(rule) + "\n" for rule in JUDGE_RULES)
    (root / "judge.jsonl").write_text(rules, encoding="utf-8")
    users = "".join(json.dumps(rule) + "\n" for rule in USER_RULES)
    (root / "user.jsonl").write_text(users, encoding="utf-8")
    dataset = root / "datasets" / "refunds"
    dataset.mkdir(parents=True)
    lines = []
    for case in [*CASES, SCENARIO]:
        label = {"guideline_version": "g1", **case["label"]}  # type: ignore[dict-item]
        row = {"schema_version": 1, "slice": "refunds", "split": "dev", "source": "hand"}
        lines.append(json.dumps({**row, **case, "label": label}, sort_keys=True))
    (dataset / "cases.jsonl").write_text("\n".join(sorted(lines)) + "\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    return root


@pytest.fixture
def project(adk_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for var in ("CASEWORK_DB_URL", *PROXY_VARS):
        monkeypatch.delenv(var, raising=False)
    root = _project(tmp_path / "proj", f"adk:{adk_url}/refunds")
    monkeypatch.chdir(root)
    yield root


def _cli(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def _trials(root: Path, run_id: str) -> dict[str, dict[str, Any]]:
    log = next((root / ".casework").rglob(f"{run_id}*.jsonl"), None) or next(
        p for p in root.rglob("*.jsonl") if run_id in p.name
    )
    rows = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return {r["case_id"]: r for r in rows if "case_id" in r and "verdict" in r}


def test_tools_are_declared_by_the_served_agent(project: Path) -> None:
    tools = declared_tools(load_project(project))
    assert sorted(tools) == ["get_order", "issue_refund"]
    assert tools["issue_refund"].parameters["required"] == ["order_id", "amount"]
    assert tools["get_order"].description.startswith("Fetch one order by its id.")
    check = _cli("dataset", "check", "refunds")
    assert check.exit_code == 0, check.output


def test_casework_run_drives_the_adk_server(project: Path, model: StubServer, adk_url: str) -> None:
    run = _cli("run", "refunds", "-k", "1", "--timeout", "60", "--format", "json")
    assert run.exit_code == 0, run.output
    summary = json.loads(run.stdout)
    assert (summary["trials"], summary["errors"]) == (4, 0)
    trials = _trials(project, summary["run_id"])
    refund = trials["adk-refund"]["trajectory"]
    assert [(c["name"], c["arguments"]) for c in refund["tool_calls"]] == [
        ("get_order", {"order_id": "ORD-1"}),
        ("issue_refund", {"order_id": "ORD-1", "amount": 79.0}),
    ]
    assert refund["tool_calls"][1]["result"] == {"refund_id": "REF-1", "amount": 79.0}
    assert refund["final_reply"] == "Done: refunded 79.0 EUR (REF-1)."
    assert refund["final_state"] == {"refunds": [{"order_id": "ORD-1", "amount": 79.0}]}
    assert refund["usage"] == {"input_tokens": 50, "output_tokens": 13, "cost_usd": 0.0}
    verdicts = {
        case_id: {c["name"]: c["status"] for c in trial["verdict"]["checks"]}
        for case_id, trial in trials.items()
    }
    assert verdicts == {
        "adk-refund": {"required_tools": "pass", "state": "pass", "outcome": "pass"},
        "adk-clarify": {"forbidden_tools": "pass", "state": "pass", "outcome": "pass"},
        "adk-prefix": {"required_tools": "pass", "state": "pass", "outcome": "pass"},
        "adk-simulated": {"required_tools": "pass", "state": "pass", "outcome": "pass"},
    }
    assert summary["passed"] == 4
    # A simulated user's turns continue the trial's one ADK session: state and calls carry over.
    simulated = trials["adk-simulated"]
    assert simulated["user_sim"]["user_turns"] == 2 and simulated["user_sim"]["stop"] == "user_stop"
    said = [(m["role"], m["content"]) for m in simulated["trajectory"]["messages"] if m["content"]]
    assert said[0] == ("assistant", "Which order number is it?")
    assert ("user", "It is ORD-1.") in said
    assert [c["name"] for c in simulated["trajectory"]["tool_calls"]] == [
        "get_order",
        "issue_refund",
    ]
    sessions = httpx.get(
        f"{adk_url}/apps/refunds/users/casework/sessions", timeout=10, trust_env=False
    ).json()
    assert len(sessions) == 4  # one per trial: the simulated user's second turn opened none
    assert simulated["trajectory"]["final_state"] == {
        "refunds": [{"order_id": "ORD-1", "amount": 79.0}]
    }
    clarify = trials["adk-clarify"]
    assert clarify["trajectory"]["tool_calls"] == []
    assert clarify["trajectory"]["final_reply"] == "Which order number is it?"
    # The prefix reached the model through the session's events: its assistant turn is there.
    prefix = trials["adk-prefix"]["trajectory"]
    assert [c["name"] for c in prefix["tool_calls"]] == ["get_order", "issue_refund"]
    assert prefix["final_state"]["refunds"][0] == {"order_id": "ORD-9", "amount": 5.0}
    asked = [
        r["messages"] for r in model.requests if any("Hi, I need" in str(m) for m in r["messages"])
    ]
    assert asked and any(
        m["role"] == "assistant" and m.get("content") == "Which order number is it?"
        for m in asked[0]
    ), asked[0]


def test_an_app_the_server_does_not_serve_stops_the_run(
    adk_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("CASEWORK_DB_URL", *PROXY_VARS):
        monkeypatch.delenv(var, raising=False)
    root = _project(tmp_path / "proj", f"adk:{adk_url}/nope")
    monkeypatch.chdir(root)
    check = _cli("dataset", "check", "refunds")
    assert check.exit_code == 1
    assert f"agent.spec: the URL answered HTTP 404. Got 'adk:{adk_url}/nope'" in check.stderr
    run = _cli("run", "refunds", "-k", "1", "--timeout", "60")
    assert run.exit_code == 1, run.output
    assert f"ADK server {adk_url} does not serve app 'nope'" in run.stderr


def test_run_sse_streams_the_same_trials_as_run(
    adk_url: str, model: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("CASEWORK_DB_URL", *PROXY_VARS):
        monkeypatch.delenv(var, raising=False)
    outcomes: dict[str, Any] = {}
    for name, spec in (
        ("run", f"adk:{adk_url}/refunds"),
        ("sse", f"adk:{adk_url}/refunds?stream=sse"),
    ):
        root = _project(tmp_path / name, spec)
        monkeypatch.chdir(root)
        asked = len(model.requests)
        run = _cli("run", "refunds", "-k", "1", "--timeout", "60", "--format", "json")
        assert run.exit_code == 0, run.output
        summary = json.loads(run.stdout)
        assert (summary["trials"], summary["errors"], summary["passed"]) == (4, 0, 4)
        streamed = [bool(r.get("stream")) for r in model.requests[asked:]]
        assert streamed and set(streamed) == {name == "sse"}  # /run_sse asked the model to stream
        outcomes[name] = {
            case_id: (
                {c["name"]: c["status"] for c in trial["verdict"]["checks"]},
                [
                    (c["name"], c["arguments"], c["result"])
                    for c in trial["trajectory"]["tool_calls"]
                ],
                trial["trajectory"]["final_reply"],
                trial["trajectory"]["final_state"],
                trial["trajectory"]["usage"],
                [(m["role"], m["content"]) for m in trial["trajectory"]["messages"]],
            )
            for case_id, trial in _trials(root, summary["run_id"]).items()
        }
    assert outcomes["sse"] == outcomes["run"]
    # The whole reply, not the streamed pieces of it, is the trial's final reply and message.
    assert outcomes["sse"]["adk-refund"][2] == "Done: refunded 79.0 EUR (REF-1)."
    # What the adapter skipped: the stream carries the reply in partial events before the whole.
    base = f"{adk_url}/apps/refunds/users/casework/sessions"
    session = httpx.post(base, json={"state": {"refunds": []}}, trust_env=False).json()["id"]
    said = {"role": "user", "parts": [{"text": "I want my money back."}]}
    body = {"appName": "refunds", "userId": "casework", "sessionId": session, "newMessage": said}
    with (
        httpx.Client(base_url=adk_url, trust_env=False, timeout=60) as client,
        connect_sse(client, "POST", "/run_sse", json={**body, "streaming": True}) as source,
    ):
        events = [json.loads(e.data) for e in source.iter_sse()]
    texts = [(e.get("partial", False), e["content"]["parts"][0]["text"]) for e in events]
    assert texts == [
        (True, "Which order "),
        (True, "number is it?"),
        (False, "Which order number is it?"),
    ]


def test_adk_specs_take_only_the_stream_option(
    adk_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("CASEWORK_DB_URL", *PROXY_VARS):
        monkeypatch.delenv(var, raising=False)
    root = _project(tmp_path / "proj", f"adk:{adk_url}/refunds?stream=websocket")
    monkeypatch.chdir(root)
    run = _cli("run", "refunds", "-k", "1")
    assert run.exit_code == 2, run.output
    assert "the only option of an adk: spec is ?stream=sse" in run.stderr


def test_an_error_adk_reports_mid_stream_fails_the_trial(
    adk_url: str, model: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for var in ("CASEWORK_DB_URL", *PROXY_VARS):
        monkeypatch.delenv(var, raising=False)
    root = _project(tmp_path / "proj", f"adk:{adk_url}/refunds?stream=sse")
    monkeypatch.chdir(root)
    # The model fails once the stream has begun: ADK answers 200, then an error event.
    monkeypatch.setattr(model, "fallback", lambda body: error_reply(400, "model unavailable"))
    run = _cli("run", "refunds", "-k", "1", "--timeout", "60", "--format", "json")
    summary = json.loads(run.stdout)
    assert (summary["trials"], summary["passed"]) == (4, 0), run.output
    errors = {t["trajectory"]["error"] for t in _trials(root, summary["run_id"]).values()}
    assert len(errors) == 1, errors
    [error] = errors
    assert error.startswith("ADK /run_sse reported an error: "), error
    assert "model unavailable" in error
