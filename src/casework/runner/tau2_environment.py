"""τ²-bench's own domain environments as tool environments, so imported τ² domains run with no code.

:class:`AirlineEnvironment`, :class:`RetailEnvironment` and :class:`TelecomEnvironment` wrap the
environments of the installed ``tau2`` package (the ``conformance`` extra): a trial's state is
validated into the domain's database (and telecom's user device), every call goes to τ²'s own
tool function followed by τ²'s ``sync_tools``, and ``state()`` dumps only the fields that are set,
so the state read back equals the one it came from and a state diff holds only what the tools
changed. The user's own tools (telecom's phone) are served by :meth:`Tau2DomainEnvironment.user_call`.
Entry points: the environment classes, :func:`tau2_initialised` (a task's initialization applied
as τ² applies it) and :func:`tau2_golden_state` (every golden action, the user's included).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pydantic_core import to_jsonable_python

from casework.grading.tau2_state import tau2_environment, tau2_module, tau2_state
from casework.runner.fixtures import ToolError, fast_clone

__all__ = [
    "AirlineEnvironment",
    "RetailEnvironment",
    "Tau2DomainEnvironment",
    "TelecomEnvironment",
    "tau2_golden_state",
    "tau2_initialised",
]


def _declarations(toolkit: Any) -> list[dict[str, Any]]:
    out = []
    for name, declared in sorted(toolkit.get_tools().items()):
        function = declared.openai_schema["function"]
        out.append(
            {
                "name": name,
                "description": function.get("description", ""),
                "parameters": function.get("parameters", {"type": "object"}),
            }
        )
    return out


class Tau2DomainEnvironment:
    """One τ² domain's own environment over a trial's copy of its database.

    Subclasses name the domain (:attr:`domain`); instances are made without arguments, one
    per trial (the runner's environment protocol).
    """

    domain: str = ""

    def __init__(self) -> None:
        self._env: Any = None

    def tools(self) -> list[dict[str, Any]]:
        """τ²'s declarations of the domain's agent tools (its OpenAI schemas), sorted by name."""
        if self._env is not None:
            return _declarations(self._env.tools)
        return _declarations(_toolkit(self.domain, "tools"))

    def user_tools(self) -> list[dict[str, Any]]:
        """τ²'s declarations of the user's own tools (telecom's phone); empty for other domains."""
        if self._env is not None:
            return _declarations(self._env.user_tools) if self._env.user_tools else []
        if self.domain != "telecom":
            return []
        return _declarations(_toolkit(self.domain, "user_tools"))

    def reset(self, initial_state: dict[str, Any]) -> None:
        """Build τ²'s environment of the domain over the trial's state.

        Raises:
            UsageError: The state is not a database of this domain.
        """
        self._env = tau2_environment(self.domain, initial_state)

    def _call(self, name: str, args: dict[str, Any], requestor: str, sync: bool = True) -> Any:
        if self._env is None:
            raise ToolError("the environment has no state (reset was not called)")
        toolkit = self._env.tools if requestor == "assistant" else self._env.user_tools
        if toolkit is None or not toolkit.has_tool(name):
            raise ToolError(f"Tool '{name}' not found.")
        try:
            result = self._env.make_tool_call(name, requestor=requestor, **args)
            if sync:
                self._env.sync_tools()
        except Exception as exc:  # τ²'s tools signal refusals by raising; the caller reads them
            raise ToolError(str(exc) or type(exc).__name__) from None
        return to_jsonable_python(result)

    def call(self, name: str, args: dict[str, Any]) -> Any:
        """Answer the agent's call with τ²'s own tool; an exception it raises is the tool's error.

        Raises:
            ToolError: No such tool, bad arguments, or the tool refused (τ²'s message).
        """
        return self._call(name, args, "assistant")

    def user_call(self, name: str, args: dict[str, Any]) -> Any:
        """Answer the simulated user's call with τ²'s own user tool (telecom's phone).

        Raises:
            ToolError: No such tool, bad arguments, or the tool refused (τ²'s message).
        """
        return self._call(name, args, "user")

    def initialise(self, initial_state: Mapping[str, Any] | None) -> None:
        """Apply a τ² task's ``initial_state`` as τ²'s ``set_state`` does before a trial.

        The agent's data is already in the state (the import's ``state_patch``); the user's data
        updates the device and each initialization action runs on its side's toolkit.

        Raises:
            ToolError: An initialization action failed (τ² stops such a task too).
        """
        if self._env is None or not initial_state:
            return
        data = initial_state.get("initialization_data") or {}
        user_data = data.get("user_data") if isinstance(data, Mapping) else None
        try:
            if user_data and self._env.user_tools is not None:
                self._env.user_tools.update_db(user_data)
            for action in initial_state.get("initialization_actions") or []:
                call = _function_call(action)
                self._env.run_env_function_call(call)
            self._env.sync_tools()
        except Exception as exc:  # τ²'s own functions raise on a task they cannot set up
            raise ToolError(f"initialization failed: {exc}") from None

    def state(self) -> dict[str, Any]:
        """The databases' set fields: the state as read, plus exactly what the tools changed."""
        return tau2_state(self._env) if self._env is not None else {}


def _toolkit(domain: str, which: str) -> Any:
    # An environment over τ²'s published data: only its declarations are read.
    env = tau2_module(f"tau2.domains.{domain}.environment").get_environment()
    return getattr(env, which)


def _function_call(action: Any) -> Any:
    return tau2_module("tau2.data_model.tasks").EnvFunctionCall.model_validate(action)


class AirlineEnvironment(Tau2DomainEnvironment):
    """τ²-bench's airline environment (``tau2.domains.airline``)."""

    domain = "airline"


class RetailEnvironment(Tau2DomainEnvironment):
    """τ²-bench's retail environment (``tau2.domains.retail``)."""

    domain = "retail"


class TelecomEnvironment(Tau2DomainEnvironment):
    """τ²-bench's telecom environment: the agent's tools and the user's phone."""

    domain = "telecom"


def tau2_initialised(
    make: Callable[[], Tau2DomainEnvironment],
    state: dict[str, Any],
    initial_state: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The state a τ² task's trial starts from: ``state`` with its initialization applied.

    Raises:
        ToolError: An initialization action failed.
    """
    env = make()
    env.reset(fast_clone(state))  # τ²'s models keep the dicts they read: a copy of our own
    env.initialise(initial_state)
    return env.state()


def tau2_golden_state(
    make: Callable[[], Tau2DomainEnvironment],
    state: dict[str, Any],
    actions: Sequence[Mapping[str, Any]],
) -> tuple[dict[str, Any], list[tuple[int, str]]]:
    """The state τ²'s evaluator compares with: every golden action replayed by its requestor.

    As τ² does, an action that fails is skipped (returned as ``(index, error)``), never a stop,
    and the actions run without τ²'s ``sync_tools`` between them (its evaluator calls the tools
    directly).
    """
    env = make()
    env.reset(fast_clone(state))  # τ²'s models keep the dicts they read: a copy of our own
    failed: list[tuple[int, str]] = []
    for i, action in enumerate(actions):
        args = dict(action.get("arguments") or {})
        try:
            requestor = "user" if action.get("requestor") == "user" else "assistant"
            env._call(str(action["name"]), args, requestor, sync=False)
        except ToolError as exc:
            failed.append((i, str(exc)))
    return env.state(), failed
