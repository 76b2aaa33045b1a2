"""AgentDojo's suites as installed: finding a suite, and its environment as a JSON state.

An AgentDojo environment is a pydantic model; casework holds it as the JSON object its
``model_dump(mode="json")`` gives, and reads it back with the suite's own environment type.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentdojo.functions_runtime import TaskEnvironment
from agentdojo.task_suite.load_suites import get_suites
from agentdojo.task_suite.task_suite import TaskSuite
from pydantic import BaseModel, TypeAdapter

from casework.errors import UsageError

#: The benchmark version AgentDojo's own `benchmark` script runs by default.
DEFAULT_VERSION = "v1.2.2"

#: AgentDojo's four suites.
SUITES: tuple[str, ...] = ("workspace", "travel", "banking", "slack")


def load_suite(name: str, version: str = DEFAULT_VERSION) -> TaskSuite[Any]:
    """The installed AgentDojo suite ``name`` at benchmark ``version``.

    Raises:
        UsageError: No such version, or no such suite in it.
    """
    suites = get_suites(version)
    if not suites:
        raise UsageError(f"AgentDojo has no benchmark version '{version}'.", param="version")
    if name not in suites:
        known = ", ".join(sorted(suites))
        raise UsageError(
            f"AgentDojo {version} has no suite '{name}' (suites: {known}).", param="suite"
        )
    return suites[name]


def state_of(environment: TaskEnvironment) -> dict[str, Any]:
    """An environment as casework's JSON state."""
    state: dict[str, Any] = environment.model_dump(mode="json")
    return state


def environment_of(suite: TaskSuite[Any], state: Mapping[str, Any]) -> Any:
    """A JSON state read back as the suite's environment, exactly as it was dumped.

    The suite's own pydantic type validates it; fields its validators rebuild from others (an
    inbox's ``emails`` from ``initial_emails``) are then set back to the state's values, or a
    trial's sent emails would vanish between the state after and AgentDojo's functions.
    """
    environment = suite.environment_type.model_validate(dict(state))
    _restore(environment, state)
    return environment


def _restore(model: BaseModel, data: Mapping[str, Any]) -> None:
    for name, field in type(model).model_fields.items():
        if name not in data:
            continue
        value, wanted = getattr(model, name), data[name]
        if isinstance(value, BaseModel) and isinstance(wanted, Mapping):
            _restore(value, wanted)
            continue
        adapter: TypeAdapter[Any] = TypeAdapter(
            Any if field.annotation is None else field.annotation
        )
        if adapter.dump_python(value, mode="json") != wanted:
            # Set without the model's validators: they are what rewrote the field.
            object.__setattr__(model, name, adapter.validate_python(wanted))
