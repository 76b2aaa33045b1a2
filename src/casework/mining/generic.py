"""The generic trace format (JSONL or JSON, documented in `docs/formats.md`) and `--map`.

Entry points: :func:`parse_mapping` (``DST=SRC.PATH`` options) and :func:`read_generic`, which
turns each conversation record into a :class:`RawConversation`, reporting every bad record.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from casework.decoding import BadJSON, decode_utf8, parse_json
from casework.errors import InputError, InputErrors, Problem, UsageError
from casework.mining.conversation import (
    RawConversation,
    RawMessage,
    RawToolCall,
    as_arguments,
    maybe_json,
    normalise_role,
)
from casework.mining.quoting import quoted

__all__ = ["DESTINATIONS", "FieldMap", "parse_mapping", "read_generic", "resolve_path"]

_MISSING = object()

#: Destination fields `--map` accepts, with the source path each reads by default.
DESTINATIONS: Mapping[str, tuple[str, ...]] = {
    "session_id": ("session_id", "session", "conversation_id", "thread_id"),
    "messages": ("messages", "conversation", "turns"),
    "feedback": ("feedback",),
    "escalated": ("escalated",),
    "abandoned": ("abandoned",),
    "fixtures": ("fixtures",),
    "state": ("state",),
    "slice": ("slice",),
    "trace_id": ("trace_id",),
    "started_at": ("started_at", "timestamp"),
    "metadata": (),
    "message.role": ("role", "speaker", "author"),
    "message.content": ("content", "text"),
    "message.tool_calls": ("tool_calls",),
    "message.tool_call_id": ("tool_call_id",),
    "message.name": ("name",),
    "message.error": ("error",),
    "message.feedback": ("feedback",),
    "tool_call.name": ("name", "function.name", "tool"),
    "tool_call.arguments": ("arguments", "function.arguments", "args", "input"),
    "tool_call.id": ("id", "call_id"),
    "tool_call.result": ("result", "output"),
    "tool_call.error": ("error",),
}
_ALIASES = {
    "session": "session_id",
    "conversation": "messages",
    "turns": "messages",
    "trace": "trace_id",
    "customer": "metadata",
    "role": "message.role",
    "content": "message.content",
    "text": "message.content",
}


@dataclass(frozen=True)
class FieldMap:
    """Where each destination field is read from: the user's `--map` first, then the defaults."""

    paths: Mapping[str, tuple[str, ...]]

    def get(self, record: Any, dst: str) -> Any:
        """The first source path of ``dst`` present in ``record`` (a sentinel when none is)."""
        for path in self.paths[dst]:
            value = resolve_path(record, path)
            if value is not _MISSING:
                return value
        return _MISSING


def parse_mapping(specs: Sequence[str]) -> FieldMap:
    """Parse ``--map DST=SRC.PATH`` options (a user path replaces the defaults of ``DST``).

    Raises:
        UsageError: A spec is not ``DST=SRC`` or names an unknown destination.
    """
    paths = {k: tuple(v) for k, v in DESTINATIONS.items()}
    for spec in specs:
        dst, sep, src = spec.partition("=")
        dst, src = dst.strip(), src.strip()
        if not sep or not dst or not src:
            raise UsageError(
                f"'{spec}': expected DST=SRC.PATH (e.g. session_id=meta.sid).", param="map"
            )
        dst = _ALIASES.get(dst, dst)
        if dst not in DESTINATIONS:
            raise UsageError(
                f"'{spec}': unknown destination '{dst}'; use one of: {', '.join(DESTINATIONS)}.",
                param="map",
            )
        paths[dst] = (src,)
    return FieldMap(paths)


def resolve_path(record: Any, path: str) -> Any:
    """Follow a dotted path (`meta.session_id`, `items.0.id`) through objects and lists."""
    value = record
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            return _MISSING
    return value


class _Bad(Exception):
    def __init__(self, field: str, message: str, got: Any = _MISSING) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.got = got


def _content(value: Any) -> Any:
    """Text of a message: a string, or the text parts of a list of parts, or JSON as is."""
    if value is _MISSING or value is None:
        return ""
    if isinstance(value, list) and all(isinstance(p, Mapping) for p in value):
        texts = [p.get("text", p.get("content")) for p in value]
        if all(isinstance(t, str) for t in texts):
            return "\n".join(str(t) for t in texts)
    return value


def _tool_call(raw: Any, fields: FieldMap, where: str) -> RawToolCall:
    if not isinstance(raw, Mapping):
        raise _Bad(where, "tool call must be an object", raw)
    name = fields.get(raw, "tool_call.name")
    if not isinstance(name, str) or not name:
        raise _Bad(f"{where}.name", "tool call needs a name", name)
    args = fields.get(raw, "tool_call.arguments")
    call_id = fields.get(raw, "tool_call.id")
    result = fields.get(raw, "tool_call.result")
    error = fields.get(raw, "tool_call.error")
    return RawToolCall(
        name=name,
        arguments=as_arguments(None if args is _MISSING else args),
        id=None if call_id is _MISSING or call_id is None else str(call_id),
        result=None if result is _MISSING else maybe_json(result),
        error=None if error is _MISSING or not error else str(error),
    )


def _message(raw: Any, fields: FieldMap, where: str) -> RawMessage:
    if not isinstance(raw, Mapping):
        raise _Bad(where, "message must be an object", raw)
    role_raw = fields.get(raw, "message.role")
    role = normalise_role(role_raw)
    if role is None:
        raise _Bad(
            f"{where}.role",
            "role must be user, assistant, system or tool (or human, customer, ai, bot, agent, "
            "model, developer, function)",
            None if role_raw is _MISSING else role_raw,
        )
    calls_raw = fields.get(raw, "message.tool_calls")
    calls: list[RawToolCall] = []
    if calls_raw is not _MISSING and calls_raw is not None:
        if not isinstance(calls_raw, list):
            raise _Bad(f"{where}.tool_calls", "must be a list of tool calls", calls_raw)
        calls = [_tool_call(c, fields, f"{where}.tool_calls.{i}") for i, c in enumerate(calls_raw)]
    error = fields.get(raw, "message.error")
    if error is _MISSING and raw.get("is_error") is True:
        error = "tool error"
    call_id = fields.get(raw, "message.tool_call_id")
    name = fields.get(raw, "message.name")
    feedback = fields.get(raw, "message.feedback")
    return RawMessage(
        role=role,
        content=_content(fields.get(raw, "message.content")),
        tool_calls=tuple(calls),
        tool_call_id=None if call_id is _MISSING or call_id is None else str(call_id),
        name=name if isinstance(name, str) else None,
        error=None if error is _MISSING or not error else str(error),
        feedback=None if feedback is _MISSING else feedback,
    )


def _flag(value: Any, field: str) -> bool:
    if value is _MISSING or value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "yes", "1", "false", "no", "0"):
        return value.lower() in ("true", "yes", "1")
    raise _Bad(field, "must be true or false", value)


def _started(value: Any) -> datetime | None:
    if value is _MISSING or value is None:
        return None
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise _Bad("started_at", "must be an ISO 8601 date-time", value) from exc
    raise _Bad("started_at", "must be an ISO 8601 date-time", value)


def conversation_from_record(record: Any, fields: FieldMap, origin: str) -> RawConversation:
    """One generic-format record as a conversation.

    Raises:
        _Bad: A field is missing or malformed (caught by :func:`read_generic` and located).
    """
    if not isinstance(record, Mapping):
        raise _Bad("", "a conversation must be a JSON object", record)
    session = fields.get(record, "session_id")
    if session is _MISSING or session is None or session == "":
        raise _Bad(fields.paths["session_id"][0], "field required (the production session id)")
    if not isinstance(session, str | int):
        raise _Bad(fields.paths["session_id"][0], "must be a string", session)
    raw_messages = fields.get(record, "messages")
    messages_path = fields.paths["messages"][0]
    if raw_messages is _MISSING:
        raise _Bad(messages_path, "field required (the list of messages)")
    if not isinstance(raw_messages, list):
        raise _Bad(messages_path, "must be a list of messages", raw_messages)
    messages = tuple(
        _message(m, fields, f"{messages_path}.{i}") for i, m in enumerate(raw_messages)
    )
    feedback = fields.get(record, "feedback")
    fixtures = fields.get(record, "fixtures")
    if fixtures is _MISSING or fixtures is None:
        fixtures = []
    if not isinstance(fixtures, list) or not all(isinstance(f, Mapping) for f in fixtures):
        raise _Bad(fields.paths["fixtures"][0], "must be a list of fixture objects", fixtures)
    for i, f in enumerate(fixtures):
        if not isinstance(f.get("tool", f.get("name")), str):
            raise _Bad(f"{fields.paths['fixtures'][0]}.{i}.tool", "field required (the tool name)")
    state = fields.get(record, "state")
    if state is _MISSING or state is None:
        state = {}
    if not isinstance(state, Mapping):
        raise _Bad(fields.paths["state"][0], "must be a JSON object", state)
    slice_ = fields.get(record, "slice")
    trace = fields.get(record, "trace_id")
    metadata = fields.get(record, "metadata")
    meta = {k: v for k, v in record.items() if k != messages_path.split(".")[0]}
    if metadata is not _MISSING:
        meta["metadata"] = metadata
    return RawConversation(
        session_id=str(session),
        messages=messages,
        origin=origin,
        trace_id=None if trace is _MISSING or trace is None else str(trace),
        feedback=() if feedback is _MISSING or feedback is None else (feedback,),
        escalated=_flag(fields.get(record, "escalated"), "escalated"),
        abandoned=_flag(fields.get(record, "abandoned"), "abandoned"),
        fixtures=tuple(dict(f) for f in fixtures),
        state=dict(state),
        metadata=meta,
        slice=slice_ if isinstance(slice_, str) and slice_ else None,
        started_at=_started(fields.get(record, "started_at")),
    )


@dataclass(frozen=True)
class _Record:
    value: Any
    origin: str
    line: int | None
    prefix: str
    error: str | None = None


def _records(path: Path, shown: str) -> Iterator[_Record]:
    """Every conversation record of a file (or a record carrying the reason it is unreadable).

    Raises:
        InputError: The file is not UTF-8 text.
    """
    text = decode_utf8(path.read_bytes(), shown)
    if path.suffix in (".jsonl", ".ndjson"):
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                yield _Record(parse_json(line), f"{shown}:{number}", number, "")
            except BadJSON as exc:
                yield _Record(line, f"{shown}:{number}", number, "", exc.message)
        return
    try:
        data = parse_json(text)
    except BadJSON as exc:
        yield _Record(None, shown, exc.lineno, "", exc.message)
        return
    if isinstance(data, Mapping) and isinstance(data.get("conversations"), list):
        items, prefix = data["conversations"], "conversations."
    elif isinstance(data, list):
        items, prefix = data, ""
    else:
        items, prefix = [data], None
    for i, item in enumerate(items):
        field = "" if prefix is None else f"{prefix}{i}"
        yield _Record(item, f"{shown}#{field or 0}", None, field)


def read_generic(
    paths: Sequence[Path], fields: FieldMap, shown: Mapping[Path, str] | None = None
) -> list[RawConversation]:
    """Read conversations in the generic format from JSONL (one per line) or JSON files.

    A JSON file holds one conversation, a list of them, or ``{"conversations": [...]}``.

    Values quoted in messages are scrubbed of PII (a malformed record still holds customer data).

    Raises:
        InputErrors: Every bad record, located (``traces.jsonl:3: messages.2.role: ...``).
    """
    problems: list[Problem] = []
    out: list[RawConversation] = []
    for path in paths:
        name = (shown or {}).get(path, str(path))
        try:
            records = list(_records(path, name))
        except InputError as exc:
            problems.append(exc.problem)
            continue
        for rec in records:
            if rec.error is not None:
                got = quoted(rec.value) if isinstance(rec.value, str) else None
                problems.append(
                    Problem(name, rec.line, None, rec.error, got, has_got=got is not None)
                )
                continue
            try:
                out.append(conversation_from_record(rec.value, fields, rec.origin))
            except _Bad as bad:
                field = ".".join(p for p in (rec.prefix, bad.field) if p) or None
                got = None if bad.got is _MISSING else quoted(bad.got)
                problems.append(
                    Problem(
                        name, rec.line, field, bad.message, got, has_got=bad.got is not _MISSING
                    )
                )
    InputErrors.raise_if_any(problems)
    return out
