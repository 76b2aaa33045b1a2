"""Tool environments: declared tools implemented over a state object, one instance per trial.

An environment is a class named ``pkg.module:Class`` in `casework.toml` (`[run] environment`, or
per slice `[run] environments`), instantiated without arguments. It implements
:class:`Environment`: ``tools()`` declares its tools in the `agent/tools.json` format,
``reset(initial_state)`` takes the trial's private copy of the state, ``call(name, args)``
answers a call (raising :class:`~casework.runner.ToolError` for a tool error) and ``state()``
returns the current state. :class:`ToolEnvironment` is a small base class whose ``@tool`` methods
become tools; :class:`FixtureEnvironment` is the cases' static fixtures as an environment.
Entry points: :func:`load_environment`, :func:`replay_golden`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from casework.dataset.state import apply_diff, initial_state
from casework.dataset.tools import parse_tool_declarations
from casework.errors import CaseworkError, ConfigError, UsageError
from casework.plugins import load_object
from casework.runner.fixtures import ToolError, ToolSession, clone, fast_clone
from casework.schema import AgentTool, Case, GoldenAction, ToolFixture, Trajectory

__all__ = [
    "Environment",
    "EnvironmentFactory",
    "FixtureEnvironment",
    "GoldenActionError",
    "GoldenReplay",
    "ToolEnvironment",
    "environment_catalogue",
    "final_state_of",
    "load_environment",
    "replay_golden",
    "tool",
]


@runtime_checkable
class Environment(Protocol):
    """What `casework run` needs of a tool environment (one instance per trial)."""

    def tools(self) -> Sequence[Mapping[str, Any]]:
        """The tools it serves: ``{"name", "description", "parameters"}`` (JSON Schema) each."""
        ...

    def reset(self, initial_state: dict[str, Any]) -> None:
        """Start a trial from ``initial_state`` (the trial's own copy: it may be mutated)."""
        ...

    def call(self, name: str, args: dict[str, Any]) -> Any:
        """Answer one tool call with a JSON result.

        Raises:
            ToolError: The call fails; the message is what the agent sees as ``error``.
        """
        ...

    def state(self) -> dict[str, Any]:
        """The current state (a JSON object), read when the trial ends."""
        ...


EnvironmentFactory = Callable[[], Environment]
"""Makes a fresh environment for one trial (or one golden replay)."""

_F = TypeVar("_F", bound=Callable[..., Any])


def tool(description: str = "", parameters: Mapping[str, Any] | None = None) -> Callable[[_F], _F]:
    """Mark a :class:`ToolEnvironment` method as a tool named after the method.

    Args:
        description: What the tool does, as the agent reads it.
        parameters: JSON Schema of its arguments (default: an object with the method's keyword
            parameters, each of any type, those without a default required).
    """

    def mark(fn: _F) -> _F:
        fn.__casework_tool__ = (description, dict(parameters) if parameters else None)  # type: ignore[attr-defined]
        return fn

    return mark


def _default_schema(fn: Callable[..., Any]) -> dict[str, Any]:
    params = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
    return {
        "type": "object",
        "properties": {p.name: {} for p in params},
        "required": [p.name for p in params if p.default is inspect.Parameter.empty],
    }


class ToolEnvironment:
    """Base class: each method marked ``@tool`` is a tool; ``self.data`` is the trial's state.

    Example:
        >>> class Counter(ToolEnvironment):
        ...     @tool("Add one to the counter and return it.")
        ...     def bump(self) -> int:
        ...         self.data["n"] = self.data.get("n", 0) + 1
        ...         return int(self.data["n"])
        >>> env = Counter()
        >>> env.reset({"n": 1})
        >>> env.call("bump", {})
        2
    """

    def __init__(self) -> None:
        self.data: dict[str, Any] = {}

    @classmethod
    def _tool_methods(cls) -> dict[str, Callable[..., Any]]:
        return {
            name: fn
            for name, fn in inspect.getmembers(cls, inspect.isfunction)
            if hasattr(fn, "__casework_tool__")
        }

    def tools(self) -> list[dict[str, Any]]:
        """Declarations of the ``@tool`` methods, sorted by name."""
        out = []
        for name, fn in sorted(self._tool_methods().items()):
            description, parameters = getattr(fn, "__casework_tool__")  # noqa: B009
            out.append(
                {
                    "name": name,
                    "description": description,
                    "parameters": parameters or _default_schema(fn),
                }
            )
        return out

    def reset(self, initial_state: dict[str, Any]) -> None:
        """Take the trial's copy of the state."""
        self.data = initial_state

    def call(self, name: str, args: dict[str, Any]) -> Any:
        """Call the ``@tool`` method ``name`` with ``args`` as keyword arguments."""
        fn = self._tool_methods().get(name)
        if fn is None:
            raise ToolError(f"no tool '{name}' in this environment")
        try:
            inspect.signature(fn).bind(self, **args)
        except TypeError as exc:
            raise ToolError(f"tool '{name}': bad arguments: {exc}") from None
        return fn(self, **args)

    def state(self) -> dict[str, Any]:
        """The current state."""
        return self.data


class FixtureEnvironment:
    """A case's static fixtures as an environment (what golden replay uses without one).

    Args:
        fixtures: The case's fixtures.
        catalogue: Tools to declare (default: the tools the fixtures answer).
    """

    def __init__(
        self, fixtures: Sequence[ToolFixture], catalogue: Sequence[AgentTool] = ()
    ) -> None:
        self._fixtures = list(fixtures)
        self._catalogue = list(catalogue) or [
            AgentTool(name=n) for n in sorted({f.tool for f in fixtures})
        ]
        self._session = ToolSession(self._fixtures, {})

    def tools(self) -> list[dict[str, Any]]:
        """The catalogue as declarations."""
        return [t.model_dump(mode="json") for t in self._catalogue]

    def reset(self, initial_state: dict[str, Any]) -> None:
        """Start from ``initial_state`` with no calls recorded."""
        self._session = ToolSession(self._fixtures, {})
        self._session.state = initial_state

    def call(self, name: str, args: dict[str, Any]) -> Any:
        """Serve the call from the fixtures exactly as a run does."""
        reply = self._session.call(name, args)
        if reply.error is not None:
            raise ToolError(reply.error)
        return reply.result

    def state(self) -> dict[str, Any]:
        """The state after the fixtures' effects."""
        return self._session.state


def load_environment(
    spec: str, root: Path, *, where: str = "run.environment"
) -> EnvironmentFactory:
    """The environment class named ``pkg.module:Class``, checked to look like an environment.

    Raises:
        ConfigError: It does not import, is not a class, or lacks ``tools``, ``reset``, ``call``
            or ``state``.
    """
    cls = load_object(spec, root=root, where=where)
    missing = [
        m for m in ("tools", "reset", "call", "state") if not callable(getattr(cls, m, None))
    ]
    if not isinstance(cls, type) or missing:
        what = f"lacks {', '.join(missing)}" if missing else "is not a class"
        raise ConfigError("casework.toml", None, where, f"{spec} {what} (see docs/agents.md)")
    factory: EnvironmentFactory = cls
    return factory


def environment_catalogue(factory: EnvironmentFactory, spec: str) -> list[AgentTool]:
    """The tools an environment declares, as the agent gets them.

    Raises:
        InputErrors: The declarations are malformed.
        UsageError: The environment fails while declaring them.
    """
    try:
        declared = factory().tools()
    except Exception as exc:  # user code: reported, never a traceback
        raise UsageError(f"environment {spec} could not declare its tools: {exc}") from exc
    decls = parse_tool_declarations(declared, f"environment {spec}")
    return [
        AgentTool(name=d.name, description=d.description, parameters=d.parameters)
        for d in decls.values()
    ]


class GoldenActionError(CaseworkError):
    """A golden action that cannot be replayed: the case's oracle data is wrong."""


@dataclass(frozen=True)
class GoldenReplay:
    """What replaying a case's golden actions on a fresh copy of its initial state gave.

    Attributes:
        state: The golden final state.
        skipped: Indices of optional actions that failed and were skipped.
        failed: Required actions that failed and were skipped (``skip_failures``): index and
            the tool's error each.
    """

    state: dict[str, Any]
    skipped: tuple[int, ...] = field(default=())
    failed: tuple[tuple[int, str], ...] = field(default=())


def replay_golden(
    factory: EnvironmentFactory,
    initial_state: Mapping[str, Any],
    actions: Sequence[GoldenAction],
    *,
    case_id: str = "",
    skip_failures: bool = False,
) -> GoldenReplay:
    """Replay ``actions`` in a fresh environment on a copy of ``initial_state``.

    An optional action that fails is skipped. A required one that fails is an error of the
    case, or, with ``skip_failures``, is skipped and listed in ``failed`` (what τ²-bench's
    evaluator does: it logs the failed golden action and goes on).

    Raises:
        GoldenActionError: A required action fails (its index, tool and error are named) and
            ``skip_failures`` is off.
    """
    env = factory()
    env.reset(fast_clone(dict(initial_state)))
    skipped: list[int] = []
    failed: list[tuple[int, str]] = []
    for index, action in enumerate(actions):
        try:
            env.call(action.name, clone(dict(action.arguments)))
        except Exception as exc:  # a ToolError or a bug in the environment: neither is the agent's
            if action.optional:
                skipped.append(index)
                continue
            if skip_failures:
                failed.append((index, str(exc) or type(exc).__name__))
                continue
            raise GoldenActionError(
                f"case {case_id}: oracle.golden_actions[{index}] ({action.name}) failed on "
                f"replay: {exc}"
            ) from None
    return GoldenReplay(env.state(), tuple(skipped), tuple(failed))


def final_state_of(root: Path, case: Case, trajectory: Trajectory) -> dict[str, Any]:
    """A recorded trial's final state: its ``final_state``, or the initial state + ``state_diff``.

    The initial state is the case's ``state_ref`` file with its ``state_patch`` (or its inline
    ``state``), so a run log that keeps only diffs still gives every final state back.

    Raises:
        StateRefError: The case's shared state is unusable (moved, or changed under its pin).
    """
    if trajectory.state_diff is None:
        return dict(trajectory.final_state or initial_state(root, case))
    return apply_diff(initial_state(root, case), trajectory.state_diff)
