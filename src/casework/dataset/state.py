"""Shared base states: a case's ``state_ref`` file plus its ``state_patch``, and state diffs.

A case may run on a state file shared by many cases (JSON object, or SQLite read as
``{table: [row, ...]}``) plus a JSON Patch of its own differences. Entry points:
:func:`initial_state` (what a trial starts from), :func:`state_ref_findings` (what `casework
check` reports), :func:`state_diff` and :func:`apply_diff` (what run logs keep instead of the
final state, and how it is rebuilt).
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonpatch

from casework.decoding import load_json
from casework.errors import CaseworkError, InputError, UsageError, format_got
from casework.schema import Case, JsonPatchOp, StateRef

__all__ = [
    "MAX_PATCH_OPS_ENV",
    "MAX_PATCH_VALUES_ENV",
    "SQLITE_SUFFIXES",
    "PatchLimits",
    "StateRefError",
    "apply_diff",
    "apply_shared",
    "initial_state",
    "load_state_ref",
    "state_diff",
    "state_ref_findings",
]

#: File suffixes read as SQLite databases; anything else is read as a JSON object.
SQLITE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


class StateRefError(InputError):
    """A ``state_ref`` that cannot be used: outside the project, missing, changed, unreadable."""


#: Environment variable: most operations one case's `state_patch` may hold (default 10,000).
MAX_PATCH_OPS_ENV = "CASEWORK_MAX_PATCH_OPS"
#: Environment variable: most values one case's `state_patch` may add to its base state
#: (default 1,000,000; every object, list and scalar counts one).
MAX_PATCH_VALUES_ENV = "CASEWORK_MAX_PATCH_VALUES"


@dataclass(frozen=True)
class PatchLimits:
    """How much work one case's ``state_patch`` may make.

    A patch of a few lines can copy the state into itself again and again, doubling it with each
    op: 25 such ops would need gigabytes. The values a patch adds are counted before each op
    applies (a `copy` counts the values it copies), so the state after every op stays within
    its base plus ``max_values``.

    Attributes:
        max_ops: Most operations in one patch.
        max_values: Most values the patch may add to its base state, all ops together.
    """

    max_ops: int = 10_000
    max_values: int = 1_000_000

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> PatchLimits:
        """The limits from ``CASEWORK_MAX_PATCH_OPS`` and ``CASEWORK_MAX_PATCH_VALUES``.

        Raises:
            UsageError: A variable is not a positive whole number.
        """
        env = os.environ if environ is None else environ
        values = {"max_ops": cls.max_ops, "max_values": cls.max_values}
        for name, key in ((MAX_PATCH_OPS_ENV, "max_ops"), (MAX_PATCH_VALUES_ENV, "max_values")):
            raw = env.get(name)
            if raw is None:
                continue
            if not raw.strip().isdigit() or int(raw) < 1:
                raise UsageError(f"{name}: expected a whole number of 1 or more. Got '{raw}'.")
            values[key] = int(raw)
        return cls(**values)


@dataclass(frozen=True)
class _Loaded:
    digest: str
    state: dict[str, Any]


_CACHE: dict[tuple[str, int, int], _Loaded] = {}
_LOCK = threading.Lock()


def _resolve(root: Path, ref: StateRef, where: str) -> Path:
    base = root.resolve()
    try:
        # Links are followed: a link out of the project is refused too.
        path = (base / ref.path).resolve()
    except (OSError, ValueError) as exc:  # a NUL byte, a name too long: refused by the OS
        raise StateRefError(where, None, "situation.state_ref.path", str(exc), ref.path) from None
    if os.path.commonpath([str(base), str(path)]) != str(base):
        raise StateRefError(where, None, "situation.state_ref.path", "leaves the project", ref.path)
    return path


def _read_sqlite(path: Path) -> dict[str, Any]:
    uri = f"{path.as_uri()}?mode=ro"
    with sqlite3.connect(uri, uri=True) as db:
        db.row_factory = sqlite3.Row
        tables = [
            r[0]
            for r in db.execute(
                "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
                "ORDER BY name"
            )
        ]
        return {
            t: [dict(row) for row in db.execute(f'SELECT * FROM "{t}" ORDER BY rowid')]
            for t in tables
        }


def load_state_ref(root: Path, ref: StateRef, *, where: str = "cases.jsonl") -> dict[str, Any]:
    """The content of a state file, checked against its pinned sha256 (cached; do not mutate).

    Args:
        root: Project root; the file must lie inside it.
        ref: The case's ``state_ref``.
        where: The file the reference was read from, for messages.

    Raises:
        StateRefError: The path leaves the project, the file is missing or unreadable, its
            sha256 differs from the pin (the message gives the current one), or it is not a
            JSON object.
    """
    path = _resolve(root, ref, where)
    field = "situation.state_ref"
    try:
        info = path.stat()
    except OSError:
        raise StateRefError(where, None, f"{field}.path", "file not found", ref.path) from None
    key = (str(path), info.st_mtime_ns, info.st_size)
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is None:
        data = path.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        try:
            if path.suffix.lower() in SQLITE_SUFFIXES:
                state: Any = _read_sqlite(path)
            else:
                state = load_json(data, ref.path)
        except (sqlite3.Error, CaseworkError) as exc:
            raise StateRefError(
                where, None, f"{field}.path", f"unreadable: {exc}", ref.path
            ) from None
        if not isinstance(state, dict):
            raise StateRefError(
                where, None, f"{field}.path", "must hold a JSON object", type(state).__name__
            )
        hit = _Loaded(digest, state)
        with _LOCK:
            _CACHE[key] = hit
    if hit.digest != ref.sha256:
        raise StateRefError(
            where,
            None,
            f"{field}.sha256",
            f"{ref.path} changed since the case pinned it; its sha256 is now {hit.digest} "
            "(update the pin: a new dataset version)",
            ref.sha256,
        )
    return hit.state


def _ops(patch: Sequence[JsonPatchOp]) -> list[dict[str, Any]]:
    return [op.model_dump(mode="json", by_alias=True, exclude_none=True) for op in patch]


def initial_state(
    root: Path, case: Case, *, where: str = "cases.jsonl", limits: PatchLimits | None = None
) -> dict[str, Any]:
    """The state a trial of ``case`` starts from: ``state_ref`` + ``state_patch``, else ``state``.

    The result may share unpatched parts with the cached file content: treat it as read-only
    (the runner hands each trial its own copy).

    Args:
        root: Project root.
        case: The case.
        where: The file the case was read from, for messages.
        limits: How much work the patch may make (default: :meth:`PatchLimits.from_env`).

    Raises:
        StateRefError: The reference is unusable, or the patch does not apply or passes
            ``limits`` (naming its op).
    """
    situation = case.situation
    if situation.state_ref is None:
        return situation.state
    base = load_state_ref(root, situation.state_ref, where=where)
    if not situation.state_patch:
        return base
    return _patch_base(base, situation.state_patch, where, limits or PatchLimits.from_env())


def _patch_base(
    base: dict[str, Any], patch: Sequence[JsonPatchOp], where: str, limits: PatchLimits
) -> dict[str, Any]:
    if len(patch) > limits.max_ops:
        raise StateRefError(
            where,
            None,
            "situation.state_patch",
            f"holds {len(patch)} operations; at most {limits.max_ops:,} are applied "
            f"(raise the bound with {MAX_PATCH_OPS_ENV})",
        )
    state = dict(base)
    copied: set[str] = set()
    budget = limits.max_values
    for index, op in enumerate(_ops(patch)):
        field = f"situation.state_patch[{index}]"
        # Copy only the branches the op changes (a move changes its source too), each once.
        for pointer in (op["path"], op.get("from", "") if op["op"] == "move" else ""):
            top = pointer.split("/")[1] if pointer.count("/") else ""
            if top in state and top not in copied:
                state[top] = _copy(state[top])
                copied.add(top)
        budget -= _added(state, op, budget + 1)
        if budget < 0:
            raise StateRefError(
                where,
                None,
                field,
                f"the patch adds more than {limits.max_values:,} values to the state "
                f"(raise the bound with {MAX_PATCH_VALUES_ENV})",
                {k: v for k, v in op.items() if k != "value"},
            )
        try:
            state = jsonpatch.JsonPatch([op]).apply(state, in_place=True)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
            raise StateRefError(where, None, field, f"does not apply: {exc}", op["path"]) from None
    if not isinstance(state, dict):
        raise StateRefError(where, None, "situation.state_patch", "must leave a JSON object", state)
    return state


def _added(state: Any, op: Mapping[str, Any], limit: int) -> int:
    """Values ``op`` adds to ``state`` (an upper bound: what it removes is not subtracted)."""
    if op["op"] in ("add", "replace"):
        return _values(op.get("value"), limit)
    if op["op"] == "copy":
        try:
            source = jsonpatch.JsonPointer(op.get("from", "")).resolve(state)
        except jsonpatch.JsonPointerException:
            return 0  # the op does not apply: jsonpatch says so, located
        return _values(source, limit)
    return 0


def _values(value: Any, limit: int) -> int:
    """Objects, lists and scalars in ``value``, counted up to ``limit`` (then ``limit``)."""
    count = 0
    stack = [value]
    while stack and count < limit:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return min(count, limit)


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def state_ref_findings(root: Path, case: Case) -> list[tuple[str, str]]:
    """What is wrong with a case's shared state, as ``(field, message)`` pairs (empty: usable)."""
    if case.situation.state_ref is None:
        return []
    try:
        initial_state(root, case)
    except StateRefError as exc:
        p = exc.problem
        got = f". Got {format_got(p.got)}" if p.has_got else ""
        return [(p.field or "situation.state_ref", f"{p.message.rstrip('.')}{got}")]
    return []


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def state_diff(before: Any, after: Any, path: str = "") -> list[dict[str, Any]]:
    """A JSON Patch turning ``before`` into ``after``: objects key by key, other values whole.

    Shared (identical) sub-objects are skipped without a walk, so the cost follows the changes.
    """
    if before is after or (type(before) is type(after) and before == after):
        return []  # equality is checked in C; only differing branches are walked below
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        ops: list[dict[str, Any]] = []
        for key in before:
            sub = f"{path}/{_escape(str(key))}"
            if key not in after:
                ops.append({"op": "remove", "path": sub})
            else:
                ops.extend(state_diff(before[key], after[key], sub))
        for key in after:
            if key not in before:
                ops.append(
                    {"op": "add", "path": f"{path}/{_escape(str(key))}", "value": after[key]}
                )
        return ops
    return [{"op": "replace", "path": path, "value": after}]


def apply_diff(state: Mapping[str, Any], diff: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``state`` with a :func:`state_diff` applied (``state`` itself is not changed)."""
    result = jsonpatch.JsonPatch([dict(op) for op in diff]).apply(_copy(dict(state)), in_place=True)
    out: dict[str, Any] = result
    return out


def apply_shared(state: Mapping[str, Any], diff: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """:func:`apply_diff` without copying what the diff leaves alone (read-only result).

    Only the objects on the path of each op are copied (once each); everything else is shared
    with ``state``, so a diff of a few keys over a large state costs a few shallow copies. Ops
    that :func:`state_diff` does not make (`move`, `copy`, `test`, list indices) fall back to
    :func:`apply_diff`.
    """
    root: dict[str, Any] = dict(state)
    copied = {id(root)}
    for op in diff:
        tokens = [t.replace("~1", "/").replace("~0", "~") for t in str(op["path"]).split("/")[1:]]
        if op["op"] not in ("add", "replace", "remove") or not tokens:
            return apply_diff(state, diff)
        node: Any = root
        for token in tokens[:-1]:
            child = node.get(token) if isinstance(node, dict) else None
            if not isinstance(child, dict):
                return apply_diff(state, diff)
            if id(child) not in copied:
                child = dict(child)
                copied.add(id(child))
                node[token] = child
            node = child
        if not isinstance(node, dict):
            return apply_diff(state, diff)
        if op["op"] == "remove":
            node.pop(tokens[-1], None)
        else:
            node[tokens[-1]] = op["value"]
    return root
