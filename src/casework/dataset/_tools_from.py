"""`tools_from = "cmd:…"` / `"http://…"`: declarations printed by a command or served on loopback.

A team whose agent is not Python declares its tools from the configuration the agent is built
from: casework runs the command (in the project root, with the scrubbed environment a `cmd:`
agent gets, under a timeout) or GETs the loopback URL, and reads the JSON it prints or serves
(a list of declarations, or ``{"tools": [...]}``).
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
from urllib.parse import urlsplit

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
    """Whether ``spec`` names a command (``cmd:``) or a URL (``http://``) rather than code."""
    return spec.startswith(("cmd:", "http://", "https://"))


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
        raise _Failed(f"the URL answered HTTP {exc.code}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise _Failed(f"cannot fetch the declarations: {reason}") from None
    return _decode(body, "the URL served")


def external_tools(project: Project) -> Any:
    """The raw declarations `[agent] tools_from`'s command prints or loopback URL serves.

    Raises:
        ConfigError: At `agent.tools_from`: the command fails, times out or prints no JSON; the
            URL is not loopback, cannot be fetched or serves no JSON.
    """
    agent = project.config.agent
    spec = agent.tools_from or ""
    try:
        if spec.startswith("cmd:"):
            return _from_command(spec, project.root, agent.tools_from_timeout, agent.pass_env)
        return _from_url(spec, agent.tools_from_timeout)
    except _Failed as exc:
        raise project.config_error("agent.tools_from", str(exc), spec, has_got=True) from None
