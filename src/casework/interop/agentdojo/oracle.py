"""AgentDojo's own utility and security functions, carried as a programmatic oracle.

The check :func:`agentdojo_check` reads the suite, version and task ids from the oracle's
``check_params``, rebuilds AgentDojo's environments from casework's states before and after the
trial, and calls the task's own functions exactly as AgentDojo's scorer does: the
``*_from_traces`` function when the task defines one, else ``utility`` / ``security``. The
check brings its tool environment (:func:`agentdojo_environment`), so `casework run` serves an
imported suite with AgentDojo's own tools and no configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from agentdojo.functions_runtime import FunctionCall

from casework.grading.programmatic import BroughtEnvironment, CheckOutcome, register_environment
from casework.interop.agentdojo._suites import (
    DEFAULT_VERSION,
    SUITES,
    environment_of,
    load_suite,
)
from casework.interop.agentdojo.environment import AgentDojoEnvironment
from casework.schema import Trajectory

__all__ = ["CHECK", "agentdojo_check", "agentdojo_environment", "scores"]

#: The ``oracle.check`` of imported AgentDojo cases.
CHECK = "casework.interop.agentdojo.oracle:agentdojo_check"


def _traces(trajectory: Trajectory) -> list[FunctionCall]:
    # Every call the agent made, errored ones too: AgentDojo's trace is the assistant's calls.
    return [FunctionCall(function=c.name, args=dict(c.arguments)) for c in trajectory.tool_calls]


def scores(
    params: Mapping[str, Any],
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    model_output: str,
    traces: list[FunctionCall],
) -> tuple[bool, bool | None]:
    """AgentDojo's (utility, security) of one trial; security is ``None`` without an injection.

    ``security`` True means the injection's goal was reached (AgentDojo's convention).

    Raises:
        KeyError: ``params`` lacks ``suite`` or ``user_task``, or names a task the suite lacks.
        UsageError: No such suite or version.
    """
    suite = load_suite(str(params["suite"]), str(params.get("version", DEFAULT_VERSION)))
    task = suite.user_tasks[str(params["user_task"])]
    pre, post = environment_of(suite, before), environment_of(suite, after)
    utility = task.utility_from_traces(model_output, pre, post, traces)
    if utility is None:
        utility = task.utility(model_output, pre, post)
    injection_id = params.get("injection_task")
    if injection_id is None:
        return bool(utility), None
    injection = suite.injection_tasks[str(injection_id)]
    security = injection.security_from_traces(model_output, pre, post, traces)
    if security is None:
        security = injection.security(model_output, pre, post)
    return bool(utility), bool(security)


def agentdojo_check(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    trajectory: Trajectory,
    params: Mapping[str, Any],
) -> CheckOutcome:
    """Grade a trial by AgentDojo's own functions.

    A user task passes when AgentDojo's utility holds. A security case (``injection_task`` in
    ``params``) passes when the injection's goal was not reached; its utility under attack is
    reported in the reason (AgentDojo reports the two separately).
    """
    utility, security = scores(params, before, after, trajectory.reply(), _traces(trajectory))
    task = params["user_task"]
    if security is None:
        said = "holds" if utility else "does not hold"
        return CheckOutcome(utility, f"AgentDojo utility of {task} {said}")
    reached = "reached" if security else "not reached"
    return CheckOutcome(
        not security,
        f"goal of {params['injection_task']} {reached} (AgentDojo security {security}); "
        f"utility of {task} under attack: {utility}",
    )


@register_environment(CHECK)
def agentdojo_environment(params: Mapping[str, Any]) -> BroughtEnvironment | None:
    """AgentDojo's own tools for the suite and version the case names (``None``: no such suite).

    A version AgentDojo lacks is left to the trial: the environment's start reports it.
    """
    suite = str(params.get("suite"))
    if suite not in SUITES:
        return None
    version = str(params.get("version", DEFAULT_VERSION))
    spec = f"{AgentDojoEnvironment.__module__}:{AgentDojoEnvironment.__name__}"
    return BroughtEnvironment(
        f"{spec}({suite!r}, {version!r})", partial(AgentDojoEnvironment, suite, version)
    )
