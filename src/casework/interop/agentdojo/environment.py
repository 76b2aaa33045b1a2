"""A tool environment running an AgentDojo suite's own tools, so `casework run` needs no glue.

An imported slice gets it with no configuration: the cases' programmatic oracle
(:mod:`casework.interop.agentdojo.oracle`) brings :class:`AgentDojoEnvironment` for its suite
and version. Naming a class in `casework.toml` overrides that, e.g.
``environments = { workspace = "casework.interop.agentdojo.environment:Workspace" }``.
Each trial's state is the suite's environment as JSON; calls run through AgentDojo's
``FunctionsRuntime`` (its argument validation, its errors) and results come back as JSON.
"""

from __future__ import annotations

from typing import Any, ClassVar

from agentdojo.functions_runtime import FunctionsRuntime
from agentdojo.task_suite.task_suite import TaskSuite
from pydantic_core import to_jsonable_python

from casework.interop.agentdojo._suites import (
    DEFAULT_VERSION,
    environment_of,
    load_suite,
    state_of,
)
from casework.runner.fixtures import ToolError

__all__ = ["AgentDojoEnvironment", "Banking", "Slack", "Travel", "Workspace", "declarations"]


def declarations(suite: TaskSuite[Any]) -> list[dict[str, Any]]:
    """The suite's tools in the `agent/tools.json` format (AgentDojo's own argument schemas)."""
    out = []
    for fn in sorted(suite.tools, key=lambda f: f.name):
        schema = fn.parameters.model_json_schema()
        schema.pop("title", None)
        for prop in schema.get("properties", {}).values():
            prop.pop("title", None)
        out.append({"name": fn.name, "description": fn.description, "parameters": schema})
    return out


class AgentDojoEnvironment:
    """One AgentDojo suite's tools over the trial's state.

    Made with the suite and version, or without arguments from a subclass that names them
    (the form `casework.toml` can name).
    """

    suite_name: ClassVar[str] = ""
    version: ClassVar[str] = DEFAULT_VERSION

    def __init__(self, suite: str | None = None, version: str | None = None) -> None:
        self._suite = load_suite(suite or self.suite_name, version or self.version)
        self._runtime = FunctionsRuntime(self._suite.tools)
        self._env: Any = None

    def tools(self) -> list[dict[str, Any]]:
        """The suite's tools."""
        return declarations(self._suite)

    def reset(self, initial_state: dict[str, Any]) -> None:
        """Read the trial's state as the suite's environment."""
        self._env = environment_of(self._suite, initial_state)

    def call(self, name: str, args: dict[str, Any]) -> Any:
        """Run AgentDojo's tool; its error (bad arguments, a failed lookup) is the tool's error."""
        result, error = self._runtime.run_function(self._env, name, args)
        if error is not None:
            raise ToolError(error)
        return to_jsonable_python(result)

    def state(self) -> dict[str, Any]:
        """The environment as JSON."""
        return state_of(self._env)


class Workspace(AgentDojoEnvironment):
    """AgentDojo's workspace suite (email, calendar, cloud drive)."""

    suite_name = "workspace"


class Travel(AgentDojoEnvironment):
    """AgentDojo's travel suite (hotels, restaurants, car rental, flights)."""

    suite_name = "travel"


class Banking(AgentDojoEnvironment):
    """AgentDojo's banking suite (account, transactions, scheduled payments)."""

    suite_name = "banking"


class Slack(AgentDojoEnvironment):
    """AgentDojo's slack suite (channels, messages, web pages)."""

    suite_name = "slack"
