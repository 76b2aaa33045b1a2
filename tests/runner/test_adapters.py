from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
import types
from pathlib import Path
from typing import Any

import httpx
import pytest

from casework.errors import InputErrors, UsageError
from casework.project import Project, load_project
from casework.runner import RunRequest, Tools, load_agent, load_run, run_agent
from casework.runner.adapters import (
    AGENT_ENV_ALLOWED,
    AgentUnavailable,
    PythonAgent,
    agent_environment,
)
from casework.runner.fixtures import ToolSession
from casework.runner.toolserver import ToolServer
from casework.schema import AgentInput, AgentTool, Case, Label, ToolFixture, Turn
from tests.runner import sample_agents
from tests.runner.agent_servers import http_agent, write_cmd_agent
from tests.runner.builders import SECRETS

FORBIDDEN_KEYS = {
    "label",
    "oracle",
    "satisfiable",
    "slice",
    "split",
    "provenance",
    "goal",
    "fixtures",
    "state",
    "injected",
    "source",
    "id",
}


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


def assert_only_situation(payload: dict[str, Any]) -> None:
    assert set(payload) == {"schema_version", "trial_id", "turns", "tools", "tool_server", "seed"}
    assert (
        not (_keys(payload) & FORBIDDEN_KEYS - {"state"})
        or not _keys(payload["turns"]) & FORBIDDEN_KEYS
    )
    assert not _keys(payload["turns"]) & FORBIDDEN_KEYS
    text = json.dumps(payload)
    for secret in SECRETS:
        assert secret not in text
    for case_id in ("r-1", "r-2", "r-3", "u-1", "e-1"):
        assert case_id not in text


def test_python_agent_receives_only_the_situation(project: Project) -> None:
    sample_agents.RECEIVED.clear()
    summary = run_agent(
        project,
        RunRequest(
            dataset="refunds", agent="python:tests.runner.sample_agents:spy", k=2, use_judge=False
        ),
    )
    assert len(sample_agents.RECEIVED) == 10
    for payload in sample_agents.RECEIVED:
        assert_only_situation(payload)
        assert payload["tool_server"] is None
        assert [t["name"] for t in payload["tools"]] == [
            "escalate_to_human",
            "get_order",
            "issue_refund",
        ]
    run = load_run(project, summary.header.run_id)
    trial = run.trials[0]
    assert (
        trial.trajectory.final_reply == "tool said: no fixture for tool 'no_such_tool' in this case"
    )
    assert trial.trajectory.tool_calls[0].error == "no fixture for tool 'no_such_tool' in this case"


def test_http_agent_receives_only_the_situation_and_calls_tools_over_http(project: Project) -> None:
    received: list[dict[str, Any]] = []
    with http_agent(received) as url:
        summary = run_agent(
            project,
            RunRequest(
                dataset="refunds",
                agent=f"http:{url}",
                k=1,
                concurrency=4,
                slices=("refunds",),
                use_judge=False,
            ),
        )
    assert len(received) == 4
    for payload in received:
        assert_only_situation(payload)
        assert payload["tool_server"].startswith("http://127.0.0.1:")
    run = load_run(project, summary.header.run_id)
    by_case = {t.case_id: t for t in run.trials}
    assert by_case["r-1"].verdict.passed is True
    assert [c.name for c in by_case["r-1"].trajectory.tool_calls] == ["get_order", "issue_refund"]
    assert by_case["r-1"].trajectory.final_state == {
        "orders": {"o1": {"note": "SECRET-STATE", "refunded": 12.0}}
    }
    refusal = by_case["u-1"].verdict
    assert refusal.passed is None  # its answer fact needs a judge; none is configured
    assert {c.name: c.status for c in refusal.checks} == {
        "required_tools": "pass",
        "forbidden_tools": "pass",
        "answer_facts": "undetermined",
        "unsatisfiable": "pass",
    }


def _pass_env(project: Project, *names: str) -> Project:
    config = project.root / "casework.toml"
    names_toml = ", ".join(f'"{n}"' for n in names)
    config.write_text(
        config.read_text(encoding="utf-8") + f"[agent]\npass_env = [{names_toml}]\n",
        encoding="utf-8",
    )
    return load_project(project.root)


def test_cmd_agent_receives_only_the_situation(
    project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = write_cmd_agent(project.root)
    spy = tmp_path / "spy.jsonl"
    monkeypatch.setenv("SPY_FILE", str(spy))
    project = _pass_env(project, "SPY_FILE")
    summary = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent=f"cmd:{sys.executable} {script.name}",
            k=1,
            slices=("refunds",),
            use_judge=False,
        ),
    )
    payloads = [json.loads(line) for line in spy.read_text().splitlines()]
    assert len(payloads) == 4
    for payload in payloads:
        assert_only_situation(payload)
    run = load_run(project, summary.header.run_id)
    assert run.header.agent_version == "cmd-1"
    assert [t.verdict.passed for t in run.trials] == [True, True, True, None]


ENV_SPY = r"""
import json, os, sys
json.load(sys.stdin)
with open("agent-env.json", "w") as out:
    json.dump(dict(os.environ), out)
print(json.dumps({"final_reply": "ok"}))
"""


def test_cmd_agent_gets_a_scrubbed_environment(
    project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", "the-projects-pseudonym-key-0123456789")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "not-for-agents")
    monkeypatch.setenv("AGENT_MODEL_TOKEN", "for-the-agent")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    (project.root / "env_spy.py").write_text(ENV_SPY, encoding="utf-8")
    project = _pass_env(project, "AGENT_MODEL_TOKEN")
    run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent=f"cmd:{sys.executable} env_spy.py",
            k=1,
            slices=("refunds",),
            use_judge=False,
        ),
    )
    env = json.loads((project.root / "agent-env.json").read_text(encoding="utf-8"))
    assert "CASEWORK_PSEUDONYM_KEY" not in env
    assert "the-projects-pseudonym-key-0123456789" not in json.dumps(env)
    assert "AWS_SECRET_ACCESS_KEY" not in env
    assert env["AGENT_MODEL_TOKEN"] == "for-the-agent"
    assert env["CASEWORK_TOOL_SERVER"].startswith("http://127.0.0.1:")
    assert env["LC_ALL"] == "C.UTF-8"
    assert set(env) - {"AGENT_MODEL_TOKEN", "CASEWORK_TOOL_SERVER"} <= AGENT_ENV_ALLOWED | {
        k for k in env if k.startswith("LC_")
    }


def test_the_pseudonym_key_cannot_be_passed_to_agents(project: Project) -> None:
    with pytest.raises(InputErrors) as exc:
        _pass_env(project, "CASEWORK_PSEUDONYM_KEY", "OTHER")
    assert "agent.pass_env: Value error, CASEWORK_PSEUDONYM_KEY is never passed to an agent" in str(
        exc.value
    )
    env = agent_environment(
        {"CASEWORK_PSEUDONYM_KEY": "k", "CASEWORK_DB_URL": "postgresql://u:pw@h/db", "PATH": "/b"},
        "http://t",
        ["CASEWORK_PSEUDONYM_KEY", "CASEWORK_DB_URL"],
    )
    assert env == {"PATH": "/b", "CASEWORK_TOOL_SERVER": "http://t"}


def _reachable(*roots: object) -> list[object]:
    """Every object reachable from ``roots`` by what an agent can do with what it received:
    attributes, slots, properties, containers, bound methods, closures and defaults (modules,
    classes and functions' globals excluded: those are what `import` reaches anyway)."""
    seen: set[int] = set()
    out: list[object] = []
    stack = list(roots)
    while stack:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, type | types.ModuleType):
            continue
        seen.add(id(obj))
        out.append(obj)
        if isinstance(obj, dict):
            stack.extend([*obj.keys(), *obj.values()])
            continue
        if isinstance(obj, list | tuple | set | frozenset):
            stack.extend(obj)
            continue
        if isinstance(obj, str | bytes | int | float | bool) or obj is None:
            continue
        if isinstance(obj, types.MethodType):
            stack.extend([obj.__self__, obj.__func__])
            continue
        if isinstance(obj, types.FunctionType):
            stack.extend(c.cell_contents for c in obj.__closure__ or ())
            stack.extend(obj.__defaults__ or ())
            stack.extend((obj.__kwdefaults__ or {}).values())
            continue
        stack.extend(getattr(obj, "__dict__", {}).values())
        for klass in type(obj).__mro__:
            for name, member in vars(klass).items():
                if name in ("__slots__", "__weakref__", "__dict__", "__class__"):
                    continue
                if isinstance(member, types.FunctionType):
                    stack.append(member)
                elif isinstance(member, property | types.MemberDescriptorType) or name in (
                    getattr(klass, "__slots__", ()) or ()
                ):
                    with contextlib.suppress(Exception):
                        stack.append(getattr(obj, name))
    return out


def test_python_agent_reaches_no_fixture_state_or_label(project: Project) -> None:
    received: list[tuple[AgentInput, object]] = []

    def snoop(request: AgentInput, tools: Tools) -> str:
        received.append((request, tools))
        return "ok"

    agent = PythonAgent("python:snoop", snoop, timeout_s=5, threads=1)
    fixture = ToolFixture.model_validate(
        {"tool": "get_order", "response": {"status": "processing", "note": "SECRET-FIXTURE"}}
    )
    state = {"orders": {"o1": {"note": "SECRET-STATE"}}}
    session = ToolSession([fixture], state, [AgentTool(name="get_order")])
    asyncio.run(agent.run(_request(), session))
    [(request, tools_)] = received
    assert isinstance(tools_, Tools)
    tools = tools_
    assert tools.names() == ["get_order"]
    reached = _reachable(request, tools)
    assert not [o for o in reached if isinstance(o, ToolSession | ToolFixture | Case)]
    assert not any(o is state or o is session.state or o is session.calls for o in reached)
    text = " ".join(o for o in reached if isinstance(o, str))
    assert "SECRET-FIXTURE" not in text and "SECRET-STATE" not in text
    # the facade still works, and calls are recorded by the session it hides
    assert tools.call("get_order") == {"status": "processing", "note": "SECRET-FIXTURE"}
    assert [c.name for c in session.calls] == ["get_order"]


def test_python_agent_in_a_run_reaches_no_label(project: Project) -> None:
    sample_agents.REACHED.clear()
    run_agent(
        project,
        RunRequest(
            dataset="refunds", agent="python:tests.runner.sample_agents:keep", k=1, use_judge=False
        ),
    )
    assert len(sample_agents.REACHED) == 5
    for args in sample_agents.REACHED:
        reached = _reachable(*args)
        assert not [o for o in reached if isinstance(o, ToolSession | ToolFixture | Case | Label)]
        text = " ".join(o for o in reached if isinstance(o, str))
        for secret in SECRETS:
            assert secret not in text


def _request(url: str | None = None) -> AgentInput:
    return AgentInput(
        trial_id="t",
        turns=[Turn(role="user", content="please refund order o1")],
        tools=[AgentTool(name="get_order")],
        tool_server=url,
    )


def _session() -> ToolSession:
    fx = [ToolFixture.model_validate({"tool": "get_order", "response": {"status": "processing"}})]
    return ToolSession(fx, {})


def test_adapter_failures_become_failed_trajectories(tmp_path: Path) -> None:
    async def go() -> None:
        crash = load_agent("python:tests.runner.sample_agents:crash", root=tmp_path)
        traj = await crash.run(_request(), _session())
        assert traj.error == "agent raised RuntimeError: boom"
        await crash.aclose()
        one_arg = load_agent("python:tests.runner.sample_agents:reply_only", root=tmp_path)
        assert (
            await one_arg.run(_request(), _session())
        ).final_reply == "hello please refund order o1"
        await one_arg.aclose()
        slow = load_agent(
            f"cmd:{sys.executable} -c 'import time; time.sleep(5)'", root=tmp_path, timeout_s=0.3
        )
        assert (
            await slow.run(_request("http://127.0.0.1:1/t/x"), _session())
        ).error == "agent timed out after 0.3 s"
        bad = load_agent(f"cmd:{sys.executable} -c 'print(42)'", root=tmp_path)
        assert (await bad.run(_request("u"), _session())).error == (
            "agent printed something that is not a trajectory: agent returned int, expected a Trajectory, dict or str"
        )
        exits = load_agent(f"cmd:{sys.executable} -c 'import sys; sys.exit(3)'", root=tmp_path)
        assert (await exits.run(_request("u"), _session())).error == "agent exited with code 3: "

    asyncio.run(go())


def test_http_agent_error_status_is_a_failed_trial(tmp_path: Path) -> None:
    async def go(url: str) -> str | None:
        agent = load_agent(f"http:{url}", root=tmp_path)
        with ToolServer() as server:
            session = _session()
            _, tool_url = server.register(session)
            traj = await agent.run(_request(tool_url), session)
        await agent.aclose()
        return traj.error

    with http_agent([], status=500) as url:
        assert asyncio.run(go(url)) == "agent answered HTTP 500: agent broke"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def test_unreachable_agents_stop_the_run(tmp_path: Path) -> None:
    async def go(spec: str) -> None:
        agent = load_agent(spec, root=tmp_path)
        await agent.run(_request("http://127.0.0.1:1/t/x"), _session())

    with pytest.raises(AgentUnavailable, match="is not reachable"):
        asyncio.run(go(f"http://127.0.0.1:{_free_port()}/agent"))
    with pytest.raises(AgentUnavailable, match="cannot be started"):
        asyncio.run(go("cmd:/nonexistent/agent-binary"))


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            "nonsense",
            "agent: expected python:pkg.module:callable, http:URL, cmd:COMMAND or adk:URL/APP. Got 'nonsense'.",
        ),
        ("ftp:x", "agent: unknown scheme 'ftp'; use python:, http:, cmd: or adk:. Got 'ftp:x'."),
        (
            "python:nomodule_xyz:fn",
            "agent: cannot import 'nomodule_xyz': No module named 'nomodule_xyz'.",
        ),
        (
            "python:tests.runner.sample_agents:missing",
            "agent: module 'tests.runner.sample_agents' has no attribute 'missing'.",
        ),
        (
            "python:tests.runner.sample_agents",
            "agent: expected python:pkg.module:callable. Got 'python:tests.runner.sample_agents'.",
        ),
    ],
)
def test_bad_specs(spec: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(UsageError) as err:
        load_agent(spec, root=tmp_path)
    assert str(err.value) == message


def test_tool_server_protocol() -> None:
    with ToolServer() as server:
        session = ToolSession(
            [ToolFixture.model_validate({"tool": "get_order", "response": {"ok": 1}})],
            {},
            [AgentTool(name="get_order")],
        )
        token, url = server.register(session)
        with httpx.Client(trust_env=False) as client:
            assert client.get(url + "/tools").json() == {
                "tools": [{"name": "get_order", "description": "", "parameters": {}}]
            }
            assert client.post(url + "/tools/get_order", json={"order_id": "o1"}).json() == {
                "result": {"ok": 1}
            }
            assert client.post(url + "/tools/other", json={}).json() == {
                "error": "no fixture for tool 'other' in this case"
            }
            bad = client.post(url + "/tools/get_order", content=b"{nope")
            assert bad.status_code == 400 and bad.json()["error"].startswith(
                "request body is not JSON"
            )
            assert client.post(url + "/tools/get_order", json=[1]).status_code == 400
            assert (
                client.post(server.base_url + "/t/unknown/tools/get_order", json={}).status_code
                == 404
            )
            server.unregister(token)
            assert client.get(url + "/tools").status_code == 404
        assert [c.name for c in session.calls] == ["get_order", "other"]
