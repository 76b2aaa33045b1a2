"""`tools_from = "cmd:…"` / `"http://…"`: declarations printed by a command or served on loopback."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from casework.dataset import declared_tools
from casework.errors import ConfigError, InputError
from casework.project import load_project
from casework.runner.adapters import AGENT_ENV_ALLOWED

DECLS = [{"name": "get_order", "description": "Fetch an order.", "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}}}]  # fmt: skip


def _project(root: Path, spec: str, extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "casework.toml").write_text(
        f'name = "t"\n[agent]\ntools_from = {json.dumps(spec)}\n{extra}', "utf-8"
    )
    return root


def _script(root: Path, body: str) -> str:
    (root / "decls.py").write_text(body, "utf-8")
    return f"cmd:{sys.executable} decls.py"


def test_a_command_prints_the_declarations(tmp_path: Path) -> None:
    root = tmp_path / "p"
    root.mkdir()
    spec = _script(root, f"print('starting up')\nprint({json.dumps(json.dumps(DECLS))})\n")
    tools = declared_tools(load_project(_project(root, spec)))
    assert list(tools) == ["get_order"]
    assert tools["get_order"].argument_names == frozenset({"order_id"})


def test_the_command_runs_in_the_project_with_a_scrubbed_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", "secret")
    monkeypatch.setenv("AGENT_SETTING", "x")
    monkeypatch.setenv("UNRELATED", "y")
    root = tmp_path / "p"
    root.mkdir()
    spec = _script(
        root,
        "import json, os\n"
        "names = [k for k in ('CASEWORK_PSEUDONYM_KEY', 'AGENT_SETTING', 'UNRELATED') if k in os.environ]\n"
        "print(json.dumps([{'name': 'env_' + n.lower()} for n in names] + [{'name': 'cwd_' + os.path.basename(os.getcwd())}]))\n",
    )
    project = load_project(_project(root, spec, 'pass_env = ["AGENT_SETTING"]\n'))
    assert sorted(declared_tools(project)) == ["cwd_p", "env_agent_setting"]


def test_the_allow_list_is_the_cmd_agents_one() -> None:
    from casework.dataset._tools_from import ENV_ALLOWED

    assert ENV_ALLOWED == AGENT_ENV_ALLOWED


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("import sys\nsys.stderr.write('no config\\n')\nsys.exit(3)\n", "exited with status 3: no config"),
        ("print('not json at all')\n", "printed no JSON tool declarations"),
        ("pass\n", "no tool declarations (empty output)"),
        ("import time\ntime.sleep(5)\n", "printed no declarations within 0.5 s"),
    ],
)  # fmt: skip
def test_a_failing_command_is_a_located_config_error(
    tmp_path: Path, body: str, message: str
) -> None:
    root = tmp_path / "p"
    root.mkdir()
    spec = _script(root, body)
    project = load_project(_project(root, spec, "tools_from_timeout = 0.5\n"))
    with pytest.raises(ConfigError) as info:
        declared_tools(project)
    text = str(info.value)
    assert text.startswith("casework.toml:3: agent.tools_from: ")
    assert message in text


def test_a_missing_command_and_bad_declarations_are_errors(tmp_path: Path) -> None:
    project = load_project(_project(tmp_path / "a", "cmd:no-such-program-here --tools"))
    with pytest.raises(ConfigError, match="command not found: no-such-program-here"):
        declared_tools(project)
    root = tmp_path / "b"
    root.mkdir()
    spec = _script(root, 'print(\'[{"description": "x"}]\')\n')
    with pytest.raises(InputError, match=r"\[0\]\.name: tool needs a non-empty"):
        declared_tools(load_project(_project(root, spec)))


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/tools":
            body, status = json.dumps({"tools": DECLS}).encode(), 200
        elif self.path == "/bad":
            body, status = b"<html>", 200
        else:
            body, status = b"{}", 404
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return


@pytest.fixture
def server() -> Iterator[str]:
    httpd = HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_a_loopback_url_serves_the_declarations(tmp_path: Path, server: str) -> None:
    tools = declared_tools(load_project(_project(tmp_path / "p", f"{server}/tools")))
    assert list(tools) == ["get_order"]


@pytest.mark.parametrize(
    ("path", "message"),
    [("/missing", "answered HTTP 404"), ("/bad", "served no JSON tool declarations")],
)
def test_a_url_that_fails_is_a_config_error(
    tmp_path: Path, server: str, path: str, message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        declared_tools(load_project(_project(tmp_path / "p", f"{server}{path}")))


def test_a_url_off_loopback_or_unreachable_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="must be http:// on loopback"):
        declared_tools(load_project(_project(tmp_path / "a", "http://example.com/tools")))
    with pytest.raises(ConfigError, match="cannot fetch the declarations"):
        declared_tools(load_project(_project(tmp_path / "b", "http://127.0.0.1:9/tools")))
