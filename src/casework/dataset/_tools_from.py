"""`tools_from = "cmd:…"` / `"http://…"`: declarations printed by a command or served on loopback.

A team whose agent is not Python declares its tools from the configuration the agent is built
from: casework runs the command (in the project root, with the scrubbed environment a `cmd:`
agent gets, under a timeout) or GETs the loopback URL, and reads the JSON it prints or serves
(a list of declarations, or ``{"tools": [...]}``).

``tools_from = "adk:http://127.0.0.1:8000/APP"`` (or an `[agent] spec` of that form with no
declarations file) reads the tools of an agent served by ``adk api_server``: ADK's
``GET /apps/{app}/app-info`` lists each agent of the app with its tools' function declarations
(``google/adk/cli/api_server.py``, ``google/adk/utils/agent_info.py``).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from casework.decoding import BadJSON, parse_json
from casework.project import NEVER_PASSED, Project

#: What the command inherits (plus `LC_*` and `[agent] pass_env`): the list a `cmd:` agent gets.
ENV_ALLOWED = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM",
        "TMPDIR", "TMP", "TEMP", "SYSTEMROOT", "COMSPEC", "PATHEXT", "WINDIR",
    }
)  # fmt: skip
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def is_external(spec: str) -> bool:
    """Whether ``spec`` names a command (``cmd:``), a URL (``http://``) or an ADK app (``adk:``)."""
    return spec.startswith(("cmd:", "http://", "https://", "adk:"))


def adk_target(spec: str) -> tuple[str, str] | None:
    """``(server URL, app name)`` of an ``adk:URL/APP`` spec; ``None`` when it names no app.

    A bare ``host:port`` is read as ``http://host:port``, as ``http:`` agent specs are.
    """
    rest = spec.removeprefix("adk:").strip().rstrip("/")
    if not rest.startswith(("http://", "https://")):
        rest = f"http://{rest}"
    parts = urlsplit(rest)
    path = parts.path.strip("/")
    if not parts.netloc or not path:
        return None
    prefix, _, app = path.rpartition("/")  # a server mounted under --url_prefix keeps its prefix
    return f"{parts.scheme}://{parts.netloc}" + (f"/{prefix}" if prefix else ""), app


def _schema(value: Any) -> Any:
    """A Gemini ``Schema`` (upper-case ``type``, camelCase keys) as JSON Schema."""
    if isinstance(value, list):
        return [_schema(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        if key == "type" and isinstance(item, str):
            out[key] = item.lower()
        elif key == "properties" and isinstance(item, dict):
            out[key] = {name: _schema(v) for name, v in item.items()}
        elif key in ("anyOf", "items"):
            out[key] = _schema(item)
        else:
            out[key] = item
    return out


def declarations_from_app_info(info: Any) -> list[dict[str, Any]]:
    """Tool declarations of every agent in ADK's ``app-info`` answer, each name once.

    ADK lists a tool as ``{"functionDeclarations": [{"name", "description",
    "parametersJsonSchema" | "parameters"}]}``; ``parameters`` is Gemini's Schema, converted.

    Raises:
        _Failed: The answer is not ADK's app-info shape.
    """
    agents = info.get("agents") if isinstance(info, dict) else None
    if not isinstance(agents, dict):
        raise _Failed("the ADK server's app-info lists no agents")
    out: dict[str, dict[str, Any]] = {}
    for agent in agents.values():
        tools = agent.get("tools") if isinstance(agent, dict) else None
        for tool in tools if isinstance(tools, list) else []:
            found = tool.get("functionDeclarations") if isinstance(tool, dict) else None
            if found is None and isinstance(tool, dict):
                found = tool.get("function_declarations")
            for decl in found if isinstance(found, list) else []:
                if not isinstance(decl, dict) or not isinstance(decl.get("name"), str):
                    continue
                params = decl.get("parametersJsonSchema", decl.get("parameters_json_schema"))
                if params is None:
                    params = _schema(decl.get("parameters") or {"type": "object"})
                out.setdefault(
                    decl["name"],
                    {
                        "name": decl["name"],
                        "description": decl.get("description") or "",
                        "parameters": params,
                    },
                )
    return list(out.values())


class _Failed(Exception):
    """Why the declarations could not be had (located by :func:`external_tools`)."""


def _scrubbed(environ: Mapping[str, str], pass_env: list[str]) -> dict[str, str]:
    passed = set(pass_env) - NEVER_PASSED
    return {
        k: v
        for k, v in environ.items()
        if (k in ENV_ALLOWED or k.startswith("LC_") or k in passed) and k not in NEVER_PASSED
    }


def _decode(body: bytes, what: str) -> Any:
    text = body.decode("utf-8", errors="replace").strip()
    if not text:
        raise _Failed(f"{what} no tool declarations (empty output)")
    try:
        return parse_json(text)
    except BadJSON:
        last = text.splitlines()[-1]  # logs first, the declarations last (as `cmd:` agents do)
        try:
            return parse_json(last)
        except BadJSON as exc:
            raise _Failed(f"{what} no JSON tool declarations: {exc.message}") from None


def _from_command(spec: str, root: Path, timeout: float, pass_env: list[str]) -> Any:
    command = spec[len("cmd:") :].strip()
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise _Failed(f"cannot split the command: {exc}") from None
    if not argv:
        raise _Failed("`cmd:` needs a command")
    try:
        done = subprocess.run(
            argv,
            cwd=root,
            env=_scrubbed(os.environ, pass_env),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except FileNotFoundError:
        raise _Failed(f"command not found: {argv[0]}") from None
    except subprocess.TimeoutExpired:
        raise _Failed(f"the command printed no declarations within {timeout:g} s") from None
    except OSError as exc:
        raise _Failed(f"cannot run the command: {exc}") from None
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", errors="replace").strip().splitlines()[-3:]
        said = f": {' / '.join(tail)}" if tail else ""
        raise _Failed(f"the command exited with status {done.returncode}{said}")
    return _decode(done.stdout, "the command printed")


def _from_url(spec: str, timeout: float) -> Any:
    parts = urlsplit(spec)
    if parts.scheme != "http" or parts.hostname not in _LOOPBACK:
        raise _Failed("a tools_from URL must be http:// on loopback (127.0.0.1, localhost)")
    try:
        # Loopback: never through a proxy the environment names.
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(spec, timeout=timeout) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        exc.close()  # the error holds the response's socket
        raise _Failed(f"the URL answered HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise _Failed(f"cannot fetch the declarations: {reason}") from None
    return _decode(body, "the URL served")


def _from_adk(spec: str, timeout: float) -> Any:
    target = adk_target(spec)
    if target is None:
        raise _Failed("expected adk:http://HOST:PORT/APP, the app an `adk api_server` serves")
    base, app = target
    return declarations_from_app_info(_from_url(f"{base}/apps/{quote(app)}/app-info", timeout))


def external_tools(project: Project, spec: str | None = None) -> Any:
    """The raw declarations `[agent] tools_from`'s command prints, loopback URL or ADK app serves.

    Args:
        project: The project.
        spec: The spec to read (default: `[agent] tools_from`; an `adk:` agent spec stands in for
            it when the project declares no tools).

    Raises:
        ConfigError: At `agent.tools_from`: the command fails, times out or prints no JSON; the
            URL is not loopback, cannot be fetched or serves no JSON.
    """
    agent = project.config.agent
    field = "agent.tools_from" if spec is None else "agent.spec"
    spec = spec or agent.tools_from or ""
    try:
        if spec.startswith("adk:"):
            return _from_adk(spec, agent.tools_from_timeout)
        if spec.startswith("cmd:"):
            return _from_command(spec, project.root, agent.tools_from_timeout, agent.pass_env)
        return _from_url(spec, agent.tools_from_timeout)
    except _Failed as exc:
        raise project.config_error(field, str(exc), spec, has_got=True) from None
