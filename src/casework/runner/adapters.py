"""Agent adapters: how the runner calls the agent under evaluation for one trial.

Specs: ``python:pkg.module:callable`` (sync or async, in-process tools), ``http:URL`` (POST the
:class:`AgentInput` JSON, receive a :class:`Trajectory`), ``cmd:COMMAND`` (input JSON on stdin,
trajectory JSON on stdout, a scrubbed environment: :func:`agent_environment`), ``adk:URL/APP``
(an app ``adk api_server`` serves: :mod:`casework.runner.adk_agent`). Entry point:
:func:`load_agent`.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import httpx
from pydantic import ValidationError

from casework.decoding import parse_json
from casework.errors import CaseworkError, UsageError
from casework.plugins import load_object
from casework.project import NEVER_PASSED
from casework.runner.adk_agent import AdkAgent
from casework.runner.fixtures import Tools, ToolSession
from casework.schema import AgentInput, Trajectory

__all__ = [
    "AGENT_ENV_ALLOWED",
    "NEVER_PASSED",
    "TOOL_SERVER_ENV",
    "Agent",
    "AgentUnavailable",
    "CmdAgent",
    "HttpAgent",
    "PythonAgent",
    "agent_environment",
    "coerce_trajectory",
    "load_agent",
]

#: Environment variable holding the tool server URL for `cmd:` agents.
TOOL_SERVER_ENV = "CASEWORK_TOOL_SERVER"

#: Variables a `cmd:` agent inherits from casework's environment (plus `LC_*`): what a program
#: needs to start and find its files, nothing that holds a secret.
AGENT_ENV_ALLOWED = frozenset(
    {
        "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TERM",
        "TMPDIR", "TMP", "TEMP", "SYSTEMROOT", "COMSPEC", "PATHEXT", "WINDIR",
    }
)  # fmt: skip


def agent_environment(
    environ: Mapping[str, str], tool_server: str | None, pass_env: Sequence[str] = ()
) -> dict[str, str]:
    """The environment of a `cmd:` agent: the allow-list, ``pass_env``, and the tool server URL.

    Args:
        environ: casework's own environment.
        tool_server: The trial's tool server URL (``CASEWORK_TOOL_SERVER``).
        pass_env: Further variables the project passes through (`[agent] pass_env`).
    """
    passed = set(pass_env) - NEVER_PASSED
    env = {
        k: v
        for k, v in environ.items()
        if (k in AGENT_ENV_ALLOWED or k.startswith("LC_") or k in passed) and k not in NEVER_PASSED
    }
    env[TOOL_SERVER_ENV] = tool_server or ""
    return env


class AgentUnavailable(CaseworkError):
    """The agent cannot be reached at all (connection refused, command not found): the run stops."""


class Agent(Protocol):
    """One way of running the agent for a trial."""

    spec: str
    needs_tool_server: bool

    async def run(self, request: AgentInput, session: ToolSession) -> Trajectory:
        """Run one trial and return the agent's trajectory (errors become ``Trajectory.error``)."""
        ...

    async def aclose(self) -> None:
        """Release connections and threads."""
        ...


def coerce_trajectory(value: Any) -> Trajectory:
    """Accept what agents return: a :class:`Trajectory`, its JSON object, or a plain reply string.

    Raises:
        ValueError: Anything else, or an object that is not a valid trajectory.
    """
    if isinstance(value, Trajectory):
        return value
    if isinstance(value, str):
        return Trajectory(final_reply=value)
    if isinstance(value, dict):
        try:
            return Trajectory.model_validate(value)
        except ValidationError as exc:
            first = exc.errors(include_url=False)[0]
            where = ".".join(str(p) for p in first["loc"]) or "trajectory"
            raise ValueError(f"invalid trajectory: {where}: {first['msg']}") from exc
    raise ValueError(f"agent returned {type(value).__name__}, expected a Trajectory, dict or str")


def _failed(message: str) -> Trajectory:
    return Trajectory(error=message)


class PythonAgent:
    """``python:pkg.module:callable``: called as ``fn(agent_input, tools)`` (or ``fn(agent_input)``).

    Async callables run on the event loop; sync ones on a thread pool as wide as the concurrency.
    """

    needs_tool_server = False

    def __init__(
        self, spec: str, fn: Callable[..., Any], *, timeout_s: float, threads: int
    ) -> None:
        self.spec = spec
        self._fn = fn
        self._timeout = timeout_s
        self._is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            getattr(fn, "__call__", None)  # noqa: B004 - instances with an async __call__
        )
        self._two_args = _positional_arity(fn) >= 2
        self._pool = (
            None if self._is_async else ThreadPoolExecutor(max(1, threads), "casework-agent")
        )

    def _args(self, request: AgentInput, session: ToolSession) -> tuple[Any, ...]:
        return (request, Tools(session)) if self._two_args else (request,)

    async def run(self, request: AgentInput, session: ToolSession) -> Trajectory:
        """Call the agent; exceptions and timeouts become a failed trajectory."""
        try:
            async with asyncio.timeout(self._timeout):  # cheaper than wait_for: no extra task
                if self._is_async:
                    value = await self._fn(*self._args(request, session))
                else:
                    loop = asyncio.get_running_loop()
                    args = self._args(request, session)
                    value = await loop.run_in_executor(self._pool, self._fn, *args)
            return coerce_trajectory(value)
        except TimeoutError:
            return _failed(f"agent timed out after {self._timeout:g} s")
        except Exception as exc:  # the agent's own failure is a failed trial, not a failed run
            return _failed(f"agent raised {type(exc).__name__}: {exc}")

    async def aclose(self) -> None:
        """Shut the thread pool down."""
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


def _positional_arity(fn: Callable[..., Any]) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 2
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in params):
        return 2
    return sum(
        p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for p in params
    )


class HttpAgent:
    """``http:URL``: POST the :class:`AgentInput` JSON to URL; the response body is the trajectory."""

    needs_tool_server = True

    def __init__(self, spec: str, url: str, *, timeout_s: float, connections: int) -> None:
        self.spec = spec
        self.url = url
        self._timeout = timeout_s
        limits = httpx.Limits(
            max_connections=max(1, connections), max_keepalive_connections=max(1, connections)
        )
        self._client = httpx.AsyncClient(timeout=timeout_s, limits=limits, trust_env=False)

    async def run(self, request: AgentInput, session: ToolSession) -> Trajectory:
        """POST one trial; HTTP errors and bad bodies become a failed trajectory."""
        try:
            response = await self._client.post(self.url, json=request.model_dump(mode="json"))
        except httpx.ConnectError as exc:
            raise AgentUnavailable(
                f"http agent {self.url} is not reachable ({exc}); is the agent server running?"
            ) from exc
        except httpx.TimeoutException:
            return _failed(f"agent timed out after {self._timeout:g} s")
        except httpx.HTTPError as exc:
            return _failed(f"agent request failed: {type(exc).__name__}: {exc}")
        if response.status_code != 200:
            return _failed(f"agent answered HTTP {response.status_code}: {response.text[:300]}")
        try:
            return coerce_trajectory(response.json())
        except (json.JSONDecodeError, ValueError) as exc:
            return _failed(f"agent answered something that is not a trajectory: {exc}")

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._client.aclose()


class CmdAgent:
    """``cmd:COMMAND``: one process per trial; input JSON on stdin, trajectory JSON on stdout.

    The process gets a scrubbed environment (:func:`agent_environment`): the allow-listed
    variables, those named by ``pass_env``, and the tool server URL in ``CASEWORK_TOOL_SERVER``
    (also in the input). Never the pseudonym key or the workbench URL.
    """

    needs_tool_server = True

    def __init__(
        self,
        spec: str,
        argv: list[str],
        *,
        cwd: Path,
        timeout_s: float,
        pass_env: Sequence[str] = (),
    ) -> None:
        self.spec = spec
        self.argv = argv
        self.cwd = cwd
        self._timeout = timeout_s
        self._pass_env = tuple(pass_env)

    async def run(self, request: AgentInput, session: ToolSession) -> Trajectory:
        """Start the command, feed it the input, parse its output."""
        env = agent_environment(os.environ, request.tool_server, self._pass_env)
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv,
                cwd=self.cwd,
                env=env,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except (FileNotFoundError, PermissionError) as exc:
            raise AgentUnavailable(f"cmd agent '{self.argv[0]}' cannot be started: {exc}") from exc
        payload = request.model_dump_json().encode("utf-8")
        try:
            out, err = await asyncio.wait_for(proc.communicate(payload), self._timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            return _failed(f"agent timed out after {self._timeout:g} s")
        if proc.returncode != 0:
            tail = err.decode("utf-8", "replace").strip()[-300:]
            return _failed(f"agent exited with code {proc.returncode}: {tail}")
        return _parse_stdout(out.decode("utf-8", "replace"))

    async def aclose(self) -> None:
        """Nothing to release (one process per trial)."""


def _parse_stdout(text: str) -> Trajectory:
    candidates = [text.strip()]
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) > 1:
        candidates.append(lines[-1])  # tolerate log lines printed before the trajectory
    error = "no output"
    for candidate in candidates:
        try:
            return coerce_trajectory(parse_json(candidate))
        except ValueError as exc:  # BadJSON, or a JSON value that is not a trajectory
            error = str(exc)
    return _failed(f"agent printed something that is not a trajectory: {error}")


def _import_callable(target: str, root: Path) -> Callable[..., Any]:
    if os.getcwd() not in sys.path:  # an agent module beside where the user runs casework
        sys.path.insert(0, os.getcwd())
    if ":" not in target:
        raise UsageError(
            f"expected python:pkg.module:callable. Got 'python:{target}'.", param="agent"
        )
    obj = load_object(target, root=root, where="agent", error=UsageError)
    if not callable(obj):
        raise UsageError(f"'python:{target}' is not callable.", param="agent")
    fn: Callable[..., Any] = obj
    return fn


def load_agent(
    spec: str,
    *,
    root: Path,
    timeout_s: float = 300.0,
    concurrency: int = 16,
    pass_env: Sequence[str] = (),
) -> Agent:
    """Build the adapter a spec names.

    Args:
        spec: ``python:pkg.module:callable``, ``http:URL``, ``cmd:COMMAND`` or ``adk:URL/APP``.
        root: Project root (on ``sys.path`` for Python agents; working folder of commands).
        timeout_s: Seconds one trial may take.
        concurrency: Trials in flight at once (sizes thread and connection pools).
        pass_env: Environment variables a `cmd:` agent gets besides the allow-list
            (`[agent] pass_env`).

    Raises:
        UsageError: The spec has no known scheme, or names nothing importable or runnable.
    """
    if spec.startswith(("http://", "https://")):
        return HttpAgent(spec, spec, timeout_s=timeout_s, connections=concurrency)
    scheme, sep, rest = spec.partition(":")
    if not sep or not rest.strip():
        raise UsageError(
            f"expected python:pkg.module:callable, http:URL, cmd:COMMAND or adk:URL/APP. Got '{spec}'.",
            param="agent",
        )
    if scheme == "python":
        fn = _import_callable(rest, root)
        return PythonAgent(spec, fn, timeout_s=timeout_s, threads=concurrency)
    if scheme == "http":
        url = rest if rest.startswith(("http://", "https://")) else f"http://{rest}"
        return HttpAgent(spec, url, timeout_s=timeout_s, connections=concurrency)
    if scheme == "cmd":
        try:
            argv = shlex.split(rest)
        except ValueError as exc:
            raise UsageError(f"cannot split command '{rest}': {exc}.", param="agent") from exc
        return CmdAgent(spec, argv, cwd=root, timeout_s=timeout_s, pass_env=pass_env)
    if scheme == "adk":
        return AdkAgent(spec, timeout_s=timeout_s, connections=concurrency)
    raise UsageError(
        f"unknown scheme '{scheme}'; use python:, http:, cmd: or adk:. Got '{spec}'.",
        param="agent",
    )
