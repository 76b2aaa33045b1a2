"""Programmatic oracles: a registered Python check over (state before, state after, trajectory).

A case whose oracle has class `programmatic` names its check in ``oracle.check``: a name
registered with :func:`register_check`, an entry point of the group ``casework.checks``, or
``pkg.module:function``. This is how a benchmark's own scoring functions (AgentDojo's utility and
security checks) are carried as they are rather than re-implemented. Entry points:
:func:`register_check`, :func:`resolve_check` (what `casework dataset check` calls), the
grader ``programmatic`` that :func:`casework.grading.grade.grade` runs for such cases, and
:func:`register_environment` / :func:`check_environment`: a check whose cases need a tool
environment (the benchmark's own tools) brings it, so `casework run` serves them with no
configuration.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol

from casework.errors import CaseworkError
from casework.grading.graders import GradeContext, register_grader
from casework.grading.verdict import CheckResult
from casework.plugins import load_object
from casework.schema import Oracle, Trajectory

__all__ = [
    "CHECKS",
    "CHECK_ENTRY_POINTS",
    "BroughtEnvironment",
    "CheckLoadError",
    "CheckOutcome",
    "ProgrammaticCheck",
    "check_environment",
    "register_check",
    "register_environment",
    "resolve_check",
]

#: Entry-point group through which installed packages offer checks by name.
CHECK_ENTRY_POINTS = "casework.checks"

# Only importable names: a case file may name a module and an attribute, never a path or code.
_DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


@dataclass(frozen=True)
class CheckOutcome:
    """What a programmatic check decided.

    Attributes:
        passed: Whether the trajectory is correct by the check.
        reason: Why, in a sentence a person can check against the trajectory.
    """

    passed: bool
    reason: str


class ProgrammaticCheck(Protocol):
    """A check over one trial: the state before, the state after, what the agent did."""

    def __call__(
        self,
        before: Mapping[str, Any],
        after: Mapping[str, Any],
        trajectory: Trajectory,
        params: Mapping[str, Any],
    ) -> CheckOutcome:
        """Decide the trial.

        Args:
            before: The case's initial state (the trial's state before the agent acted).
            after: The state when the trial ended.
            trajectory: The agent's messages and tool calls.
            params: The oracle's ``check_params``.
        """
        ...


class CheckLoadError(CaseworkError):
    """A check a case names cannot be found or imported."""


CHECKS: dict[str, ProgrammaticCheck] = {}
"""Checks registered in this process, by name."""

_RESOLVED: dict[str, ProgrammaticCheck] = {}


def register_check(name: str) -> Callable[[ProgrammaticCheck], ProgrammaticCheck]:
    """Decorator registering a check under ``name`` (a case names it as ``oracle.check``)."""

    def decorate(fn: ProgrammaticCheck) -> ProgrammaticCheck:
        CHECKS[name] = fn
        return fn

    return decorate


def resolve_check(ref: str, *, root: Path | None = None) -> ProgrammaticCheck:
    """The check ``ref`` names: registered, an entry point, or ``pkg.module:function``.

    Args:
        ref: The oracle's ``check``.
        root: Put on ``sys.path`` first for a dotted path, so a project's own module imports
            (default: the working directory).

    Raises:
        CheckLoadError: Nothing by that name, a module that fails to import (whatever it
            raised), or an attribute that is not callable.
    """
    if ref in CHECKS:
        return CHECKS[ref]
    if ref in _RESOLVED:
        return _RESOLVED[ref]
    found: Any
    named = entry_points(group=CHECK_ENTRY_POINTS, name=ref)
    if named:
        (point, *_) = tuple(named)
        try:
            found = point.load()
        except Exception as exc:  # third-party code: any failure is the case's problem
            raise CheckLoadError(
                f"check '{ref}' (entry point {point.value}) fails to import: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
    elif _DOTTED.match(ref):
        try:
            found = load_object(
                ref, root=root or Path.cwd(), where="oracle.check", error=CaseworkError
            )
        except CaseworkError as exc:
            raise CheckLoadError(f"check '{ref}' cannot be loaded: {exc}") from exc
        except Exception as exc:  # a module that raises while importing
            raise CheckLoadError(
                f"check '{ref}' fails to import: {type(exc).__name__}: {exc}"
            ) from exc
    else:
        known = ", ".join(sorted(CHECKS)) or "none"
        raise CheckLoadError(
            f"no check named '{ref}' (registered: {known}; or give an entry point of "
            f"'{CHECK_ENTRY_POINTS}' or pkg.module:function)"
        )
    if not callable(found):
        raise CheckLoadError(f"check '{ref}' is not callable")
    check: ProgrammaticCheck = found
    _RESOLVED[ref] = check
    return check


@register_grader("programmatic")
def programmatic(ctx: GradeContext) -> CheckResult | None:
    """The case's programmatic oracle: its named check decides pass or fail.

    A check that cannot be loaded, raises, or returns something other than a
    :class:`CheckOutcome` leaves the trial undetermined (the gate fails closed on it).
    """
    oracle = ctx.case.oracle
    if oracle.class_ != "programmatic" or oracle.check is None:
        return None
    name = "programmatic"
    try:
        check = resolve_check(oracle.check)
    except CheckLoadError as exc:
        return CheckResult(name=name, status="undetermined", evidence=str(exc))
    try:
        # Typed as object: user code may return anything, and anything else is reported.
        outcome: object = check(
            ctx.initial_state, ctx.final_state, ctx.trajectory, dict(oracle.check_params or {})
        )
    except Exception as exc:  # the check's own bug must not stop the run: the trial stays open
        return CheckResult(
            name=name,
            status="undetermined",
            evidence=f"check '{oracle.check}' raised {type(exc).__name__}: {exc}",
        )
    if not isinstance(outcome, CheckOutcome):
        return CheckResult(
            name=name,
            status="undetermined",
            evidence=f"check '{oracle.check}' returned {type(outcome).__name__}, "
            "not a CheckOutcome",
        )
    return CheckResult(
        name=name,
        status="pass" if outcome.passed else "fail",
        evidence=f"{oracle.check}: {outcome.reason}",
    )


@dataclass(frozen=True)
class BroughtEnvironment:
    """The tool environment a check brings for its cases.

    Attributes:
        name: What serves the cases, as a run reports it (``pkg.module:Class`` and its
            arguments); cases with equal names share one environment.
        make: Makes a fresh environment for one trial (the runner's environment protocol:
            ``tools()``, ``reset(state)``, ``call(name, args)``, ``state()``).
    """

    name: str
    make: Callable[[], object]


EnvironmentProvider = Callable[[Mapping[str, Any]], BroughtEnvironment | None]
"""Given an oracle's ``check_params``, the environment that serves the case (or ``None``)."""

_ENVIRONMENTS: dict[str, EnvironmentProvider] = {}


def register_environment(check: str) -> Callable[[EnvironmentProvider], EnvironmentProvider]:
    """Decorator: the provider of the tool environment that serves the cases of ``check``.

    Register it in the module that defines the check: resolving the check imports that module,
    so the provider is known wherever the check is.
    """

    def decorate(fn: EnvironmentProvider) -> EnvironmentProvider:
        _ENVIRONMENTS[check] = fn
        return fn

    return decorate


def check_environment(oracle: Oracle) -> BroughtEnvironment | None:
    """The tool environment a programmatic oracle's check brings for its case, if any.

    ``None`` for any other oracle, a check that does not load (grading reports that), or a
    check that brings no environment for these ``check_params``.
    """
    if oracle.class_ != "programmatic" or oracle.check is None:
        return None
    try:
        resolve_check(oracle.check)  # imports the check's module, which registers its provider
    except CheckLoadError:
        return None
    provider = _ENVIRONMENTS.get(oracle.check)
    return None if provider is None else provider(dict(oracle.check_params or {}))
