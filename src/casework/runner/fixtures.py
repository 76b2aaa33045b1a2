"""Fixture tools: one :class:`ToolSession` per trial serves a case's canned tool responses.

It records every call, applies the matching fixture's JSON Patch effects to a private copy of the
data state, and answers a call no fixture matches with a clear tool error (recorded; the trial
goes on). Python agents call it in-process through :class:`Tools`, a facade holding no reference
to the session; others over loopback HTTP.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import jsonpatch
import orjson
from jsonpointer import JsonPointer, JsonPointerException

from casework.errors import CaseworkError
from casework.grading.matchers import deep_subset
from casework.schema import AgentTool, JsonPatchOp, ToolFixture, TrajectoryToolCall

__all__ = [
    "FixtureBook",
    "ToolError",
    "ToolReply",
    "ToolSession",
    "Tools",
    "catalogue_from",
    "clone",
    "fast_clone",
    "substitute_args",
]


class ToolError(CaseworkError):
    """A tool call failed (no fixture, a canned error, a failed effect); raised to Python agents."""


@dataclass(frozen=True)
class ToolReply:
    """What one tool call returned: a result, or an error message."""

    result: Any = None
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        """The wire form: ``{"result": ...}`` or ``{"error": "..."}``."""
        return {"error": self.error} if self.error is not None else {"result": self.result}


def clone(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists, scalars), several times faster than deepcopy."""
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clone(v) for v in value]
    return value


def fast_clone(value: Any) -> Any:
    """A deep copy of a JSON value through orjson (about a third faster on large states).

    Values orjson cannot write (non-string keys, ints past 64 bits) are copied by :func:`clone`.
    """
    try:
        return orjson.loads(orjson.dumps(value))
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return clone(value)


def substitute_args(value: Any, arguments: Mapping[str, Any]) -> Any:
    """Replace every string that is exactly ``${args.NAME}`` by the call's argument ``NAME``.

    Raises:
        KeyError: The call has no argument ``NAME``.
    """
    if isinstance(value, str) and value.startswith("${args.") and value.endswith("}"):
        name = value[len("${args.") : -1]
        if name not in arguments:
            raise KeyError(name)
        return clone(arguments[name])
    if isinstance(value, dict):
        return {k: substitute_args(v, arguments) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute_args(v, arguments) for v in value]
    return value


def _takes_args(value: Any) -> bool:
    """Whether :func:`substitute_args` would replace anything in ``value``."""
    if isinstance(value, str):
        return value.startswith("${args.") and value.endswith("}")
    if isinstance(value, dict):
        return any(_takes_args(v) for v in value.values())
    if isinstance(value, list):
        return any(_takes_args(v) for v in value)
    return False


@dataclass(frozen=True)
class _Effect:
    """One effect op with what every call would otherwise work out again (read-only)."""

    op: JsonPatchOp
    kind: type[jsonpatch.PatchOperation]
    pointer: JsonPointer | None
    """The parsed path when it takes no argument and parses (else parsed per call, as before)."""
    value_args: bool


def _effect(op: JsonPatchOp) -> _Effect:
    pointer = None
    if not _takes_args(op.path):
        try:
            pointer = JsonPointer(op.path)
        except JsonPointerException:
            pointer = None  # reported by the call that applies it, as before
    return _Effect(op, jsonpatch.JsonPatch.operations[op.op], pointer, _takes_args(op.value))


@dataclass(frozen=True)
class _Fixture:
    fixture: ToolFixture
    effects: tuple[_Effect, ...]
    response_args: bool
    strings: tuple[tuple[str, str], ...] | None
    """The `match` when every value is a string: where :func:`deep_subset` is plain equality."""

    def matches(self, args: Mapping[str, Any]) -> bool:
        """``deep_subset(match, args)``."""
        if self.strings is None:
            return deep_subset(self.fixture.match, args)
        return all(key in args and value == args[key] for key, value in self.strings)


def _compile(fixture: ToolFixture) -> _Fixture:
    match = fixture.match
    strings = tuple(match.items()) if all(isinstance(v, str) for v in match.values()) else None
    effects = tuple(map(_effect, fixture.effects))
    return _Fixture(fixture, effects, _takes_args(fixture.response), strings)


class FixtureBook:
    """A case's fixtures read once for all its trials: by tool, effect paths parsed.

    Read-only and shared by the trials of a case; each :class:`ToolSession` keeps its own state
    and record of calls.

    Args:
        fixtures: The case's fixtures.
    """

    def __init__(self, fixtures: Sequence[ToolFixture]) -> None:
        self.fixtures = tuple(fixtures)
        self._by_tool: dict[str, list[_Fixture]] = {}
        for f in self.fixtures:
            self._by_tool.setdefault(f.tool, []).append(_compile(f))

    def candidates(self, name: str) -> Sequence[_Fixture]:
        """The fixtures of tool ``name``, in case order."""
        return self._by_tool.get(name, ())


class _NotPlain(Exception):
    """A value holds something other than dicts, lists, strings, numbers, booleans and None."""


def _plain_copy(value: Any) -> Any:
    """What ``copy.deepcopy`` gives for a plain JSON value (string keys), in a fraction of its time.

    Raises:
        _NotPlain: Anything else is in it (deepcopy alone knows how to copy that).
    """
    kind = type(value)
    if kind is dict:
        out = {}
        for key, item in value.items():
            if type(key) is not str:
                raise _NotPlain
            out[key] = _plain_copy(item)
        return out
    if kind is list:
        return [_plain_copy(item) for item in value]
    if value is None or kind is str or kind is int or kind is float or kind is bool:
        return value
    raise _NotPlain


class _Add:
    """An `add` to a parsed path: the common effect (append to a list, set a member).

    Where every step of the path is a member of a dict, and the last one a dict's member or a
    list's ``-``, it writes a copy of the value as jsonpatch's `add` does; anything else (list
    indices, a missing member, other containers or values) goes to jsonpatch itself.
    """

    __slots__ = ("body", "kind", "parts")

    def __init__(self, kind: type[jsonpatch.PatchOperation], body: dict[str, Any]) -> None:
        self.kind = kind
        self.body = body
        self.parts: list[str] = body["path"].parts

    def apply(self, doc: Any) -> Any:
        try:
            value = _plain_copy(self.body["value"])
        except _NotPlain:
            return self.kind(self.body).apply(doc)
        node = doc
        for part in self.parts[:-1]:
            if type(node) is not dict or part not in node:
                return self.kind(self.body).apply(doc)
            node = node[part]
        last = self.parts[-1]
        if type(node) is dict:
            node[last] = value
        elif type(node) is list and last == "-":
            node.append(value)
        else:
            return self.kind(self.body).apply(doc)
        return doc


def _patch(
    effects: Sequence[_Effect], arguments: Mapping[str, Any]
) -> list[jsonpatch.PatchOperation | _Add]:
    """The effect ops of one call, every one checked before any applies (as `JsonPatch` does).

    Raises:
        KeyError: An op names an argument the call lacks (before any op is built).
        jsonpatch.JsonPatchException: An op is malformed.
        jsonpatch.JsonPointerException: A path is not a JSON Pointer.
    """
    bodies = []
    for effect in effects:
        op = effect.op
        path = substitute_args(op.path, arguments) if effect.pointer is None else effect.pointer
        body: dict[str, Any] = {"op": op.op, "path": path}
        if op.op in ("add", "replace", "test"):
            # jsonpatch copies the value it writes, so an op without arguments passes its own.
            body["value"] = substitute_args(op.value, arguments) if effect.value_args else op.value
        if op.from_ is not None:
            body["from"] = op.from_
        bodies.append((effect, body))
    return [
        _Add(effect.kind, body)
        if effect.op.op == "add" and effect.pointer is not None and effect.pointer.parts
        else effect.kind(body)
        for effect, body in bodies
    ]


class ToolSession:
    """The fixture tools of one trial: fresh state, a record of every call. Thread-safe.

    Args:
        fixtures: The case's fixtures, or their :class:`FixtureBook` (built once per case).
        state: The case's initial data state (never touched: an effect writes to a copy).
        catalogue: Tools shown to the agent (declared tools).
    """

    def __init__(
        self,
        fixtures: Sequence[ToolFixture] | FixtureBook,
        state: Mapping[str, Any],
        catalogue: Sequence[AgentTool] = (),
        *,
        environment: _Environment | None = None,
    ) -> None:
        self._book = fixtures if isinstance(fixtures, FixtureBook) else FixtureBook(fixtures)
        self.initial_state: dict[str, Any] = dict(state)  # read-only
        # An environment owns and mutates its state: it gets a copy made by orjson (faster on
        # large states). Fixtures never write in place: each effect patches a fresh clone and
        # replaces `self.state`, so a trial that writes nothing copies nothing (a deep copy
        # here was most of a session's cost on a large state).
        self.state: dict[str, Any] = (
            fast_clone(dict(state)) if environment is not None else dict(state)
        )
        self.catalogue = list(catalogue)
        self.calls: list[TrajectoryToolCall] = []
        self._lock = threading.Lock()
        # A tool environment (casework.runner.environment) answers instead of the fixtures; it
        # owns the trial's copy of the state from here on.
        self._environment = environment
        if environment is not None:
            environment.reset(self.state)

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolReply:
        """Serve one call: the most specific matching fixture wins (most `match` keys, then first).

        A call no fixture answers gets an error reply naming why; it is recorded like any call.
        """
        args = dict(arguments or {})
        with self._lock:
            if self._environment is not None:
                reply, applied = self._serve_environment(self._environment, name, args), 0
            else:
                reply, applied = self._serve(name, args)
            self.calls.append(
                TrajectoryToolCall(
                    name=name,
                    arguments=clone(args),
                    result=clone(reply.result) if reply.error is None else None,
                    error=reply.error,
                    effects_applied=applied,
                )
            )
            return reply

    def _serve(self, name: str, args: dict[str, Any]) -> tuple[ToolReply, int]:
        candidates = self._book.candidates(name)
        if not candidates:
            return ToolReply(error=f"no fixture for tool '{name}' in this case"), 0
        matching = [f for f in candidates if f.matches(args)]
        if not matching:
            return ToolReply(
                error=f"no fixture of tool '{name}' matches arguments {_short(args)}"
            ), 0
        # max keeps the first on ties
        chosen = (
            max(matching, key=lambda f: len(f.fixture.match)) if len(matching) > 1 else matching[0]
        )
        fixture = chosen.fixture
        if fixture.error is not None:
            return ToolReply(error=fixture.error), 0
        applied = 0
        if chosen.effects:
            try:
                ops = _patch(chosen.effects, args)
                # Patch a clone in place: a failing op leaves self.state untouched (and our clone
                # is much cheaper than jsonpatch's own deepcopy). In order, as JsonPatch.apply.
                state: Any = clone(self.state)
                for op in ops:
                    state = op.apply(state)
                self.state = state
                applied = len(chosen.effects)
            except KeyError as exc:
                return ToolReply(error=f"tool '{name}' needs argument '{exc.args[0]}'"), 0
            except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
                return ToolReply(error=f"tool '{name}' could not apply its effect: {exc}"), 0
        if not chosen.response_args:
            return ToolReply(result=clone(fixture.response)), applied
        try:
            result = substitute_args(fixture.response, args)  # rebuilds every container it walks
        except KeyError as exc:
            return ToolReply(error=f"tool '{name}' needs argument '{exc.args[0]}'"), applied
        return ToolReply(result=result), applied

    @staticmethod
    def _serve_environment(env: _Environment, name: str, args: dict[str, Any]) -> ToolReply:
        try:
            # Copies both ways: neither side keeps a handle on the other's objects.
            result = env.call(name, clone(args))
        except ToolError as exc:
            return ToolReply(error=str(exc))
        except Exception as exc:  # a bug in the environment is the agent's tool error, recorded
            return ToolReply(error=f"tool '{name}' failed: {type(exc).__name__}: {exc}")
        return ToolReply(result=clone(result))

    def user_tools(self) -> list[dict[str, Any]]:
        """The simulated user's own tools (telecom's phone): the environment's ``user_tools()``."""
        declared = getattr(self._environment, "user_tools", None)
        return list(declared()) if callable(declared) else []

    def user_call(
        self, name: str, arguments: Mapping[str, Any] | None = None
    ) -> TrajectoryToolCall:
        """Serve one call of the simulated user's own tools.

        The caller records it: not an agent's call, it rides on the user's message.
        """
        args = dict(arguments or {})
        serve = getattr(self._environment, "user_call", None)
        with self._lock:
            if not callable(serve):
                reply = ToolReply(error="the user has no tools of their own in this case")
            else:
                try:
                    reply = ToolReply(result=clone(serve(name, clone(args))))
                except ToolError as exc:
                    reply = ToolReply(error=str(exc))
                except Exception as exc:  # a bug in the environment is the call's error
                    reply = ToolReply(error=f"tool '{name}' failed: {type(exc).__name__}: {exc}")
        return TrajectoryToolCall(
            name=name,
            arguments=clone(args),
            result=reply.result if reply.error is None else None,
            error=reply.error,
        )

    def snapshot(self) -> tuple[list[TrajectoryToolCall], dict[str, Any]]:
        """The calls so far and the current state (effects replace the state, never mutate it)."""
        with self._lock:
            if self._environment is not None:
                return list(self.calls), self._environment.state()
            return list(self.calls), self.state


class _Environment(Protocol):
    """The part of :class:`casework.runner.Environment` a session drives (defined there)."""

    def reset(self, initial_state: dict[str, Any]) -> None: ...

    def call(self, name: str, args: dict[str, Any]) -> Any: ...

    def state(self) -> dict[str, Any]: ...


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


#: The session behind each :class:`Tools` facade. Kept here rather than on the facade, so nothing
#: reachable from the object an agent receives (its attributes, methods, closures) leads to the
#: fixtures, the state or the record of calls.
_SESSIONS: weakref.WeakKeyDictionary[Tools, ToolSession] = weakref.WeakKeyDictionary()


class Tools:
    """What an in-process Python agent gets to call tools: ``tools.call("get_order", id="o1")``.

    Only the tool calls and the catalogue: the facade keeps no handle to the session, so the
    agent cannot read the case's fixtures, its initial or current state, or the calls recorded.

    Args:
        session: The trial's tool session.
    """

    __slots__ = ("__weakref__", "_catalogue", "_dumped")

    def __init__(self, session: ToolSession) -> None:
        # Dumped when first read: most agents never read it, and a dump per trial was a tenth
        # of a fixture trial's tool cost. The tools themselves lead nowhere near the session.
        self._catalogue = tuple(session.catalogue)
        self._dumped: tuple[dict[str, Any], ...] | None = None
        _SESSIONS[self] = session

    def _dump(self) -> tuple[dict[str, Any], ...]:
        if self._dumped is None:
            self._dumped = tuple(t.model_dump(mode="json") for t in self._catalogue)
        return self._dumped

    @property
    def catalogue(self) -> list[AgentTool]:
        """The tools the agent may call (declared tools; fresh copies)."""
        return [AgentTool.model_validate(t) for t in self._dump()]

    def names(self) -> list[str]:
        """Names of the tools the agent may call."""
        return [str(t["name"]) for t in self._dump()]

    def call(self, name: str, arguments: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """Call a tool and return its result.

        Raises:
            ToolError: The tool failed; the message is what an HTTP agent would get as ``error``.
        """
        reply = self.try_call(name, arguments, **kwargs)
        if reply.error is not None:
            raise ToolError(reply.error)
        return reply.result

    def try_call(
        self, name: str, arguments: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> ToolReply:
        """Call a tool and return its reply (result or error) without raising."""
        return _SESSIONS[self].call(name, {**(arguments or {}), **kwargs})


def catalogue_from(
    names: Iterable[str], declared: Mapping[str, Any] | None = None
) -> list[AgentTool]:
    """Tool catalogue for agents: declared tools when known, else bare names."""
    out = []
    for name in sorted(set(names)):
        decl = (declared or {}).get(name)
        if decl is not None:
            out.append(
                AgentTool(
                    name=name,
                    description=getattr(decl, "description", ""),
                    parameters=dict(getattr(decl, "parameters", {}) or {}),
                )
            )
        else:
            out.append(AgentTool(name=name))
    return out
