"""OTLP JSON trace and log exports: batches of `resourceSpans` (and `resourceLogs`) as :class:`Span` values.

Entry point: :func:`read_spans`. A file holds one `ExportTraceServiceRequest` object, a list of
them, or one per line (the collector's file exporter); a trace may be split across batches and
files. Trace and span ids are accepted in hex (the OTLP/JSON rule) or base64 (protobuf JSON), and
keys in lowerCamelCase (OTLP/JSON) or as the proto field names (protobuf's JSON printer with
``preserving_proto_field_name``).

GenAI instrumentations may emit message content as log events instead of span attributes (the
GenAI conventions' `event_only` mode): an `ExportLogsServiceRequest` (`resourceLogs`) is read too,
and each `gen_ai.*` event record becomes an event of the span it names (`traceId`/`spanId`), or a
span of its own when no file read holds that span.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from casework.decoding import BadJSON, decode_utf8, parse_json
from casework.errors import InputError, InputErrors, Problem
from casework.mining.quoting import quoted

__all__ = ["Span", "SpanEvent", "attribute_value", "normalise_id", "read_spans"]

_HEX = re.compile(r"^[0-9a-fA-F]+\Z")


@dataclass(frozen=True)
class SpanEvent:
    """A span event: its name and decoded attributes."""

    name: str
    time_ns: int
    attributes: dict[str, Any]


@dataclass(frozen=True)
class Span:
    """One span, attributes decoded to plain JSON values.

    Attributes:
        trace_id: Trace id, lower-case hex.
        span_id: Span id, lower-case hex.
        parent_id: Parent span id (hex), or ``None`` for a root.
        name: Span name.
        start_ns: Start time, ns since the epoch.
        end_ns: End time, ns since the epoch.
        attributes: Span attributes.
        resource: Resource attributes of its batch.
        events: Span events.
        error: The span status is ERROR.
        status_message: Status message, if any.
        origin: Where it was read (`traces.json:2`).
    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    resource: dict[str, Any] = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    error: bool = False
    status_message: str = ""
    origin: str = ""


def normalise_id(value: Any, size: int) -> str | None:
    """A trace (16 bytes) or span (8 bytes) id as lower-case hex, from hex or base64.

    ``None`` when it is neither, has the wrong length, or is the invalid all-zero id. A ``0x``
    prefix is read as hex only when what follows is hex of the right length: a base64 id may
    itself begin with the characters ``0x``.

    >>> normalise_id("S/kvNXezTaajzpKdDg5HNg==", 16)
    '4bf92f3577b34da6a3ce929d0e0e4736'
    """
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    for candidate in (text[2:], text) if text[:2] in ("0x", "0X") else (text,):
        if len(candidate) == size * 2 and _HEX.match(candidate):
            return None if set(candidate) == {"0"} else candidate.lower()
    raw = _base64(text)
    if raw is None or len(raw) != size:
        return None
    hexed = raw.hex()
    return None if set(hexed) == {"0"} else hexed


_URLSAFE = str.maketrans("-_", "+/")


def _base64(text: str) -> bytes | None:
    padded = text + "=" * (-len(text) % 4)
    try:
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        pass
    try:
        return base64.b64decode(padded.translate(_URLSAFE), validate=True)
    except (binascii.Error, ValueError):
        return None


def _double(value: Any) -> Any:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return value
    # Non-finite doubles have no JSON form: keep what the trace wrote ("NaN", "Infinity").
    return number if math.isfinite(number) else str(value)


def _values(container: Any) -> list[Any]:
    values = container.get("values") if isinstance(container, Mapping) else None
    return values if isinstance(values, list) else []


def attribute_value(value: Any) -> Any:
    """Decode an OTLP `AnyValue` (`stringValue`, `intValue`, `arrayValue`, `kvlistValue`...).

    The proto field names (`string_value`…, what protobuf's JSON printer writes with
    ``preserving_proto_field_name``) are read too. A value of the wrong JSON type is kept as it
    is rather than failing the whole file.
    """
    if not isinstance(value, Mapping):
        return value
    for camel, snake in _ANY_VALUE_KEYS:
        if camel in value or snake in value:
            return _any_value(camel, _key(value, camel, snake))
    return None


#: The ``AnyValue`` fields: JSON name and proto field name.
_ANY_VALUE_KEYS = (
    ("stringValue", "string_value"),
    ("boolValue", "bool_value"),
    ("intValue", "int_value"),
    ("doubleValue", "double_value"),
    ("arrayValue", "array_value"),
    ("kvlistValue", "kvlist_value"),
    ("bytesValue", "bytes_value"),
)


def _any_value(kind: str, raw: Any) -> Any:
    if kind == "boolValue":
        return bool(raw)
    if kind == "intValue":
        if isinstance(raw, int | str | float) and not isinstance(raw, bool):
            try:
                return int(raw)
            except (ValueError, OverflowError):  # not a number, NaN, infinity
                return raw
        return raw
    if kind == "doubleValue":
        return _double(raw)
    if kind == "arrayValue":
        return [attribute_value(v) for v in _values(raw)]
    if kind == "kvlistValue":
        return attributes(_values(raw))
    return raw


def attributes(items: Any) -> dict[str, Any]:
    """Decode a list of OTLP `KeyValue`s (a plain JSON object is accepted as it is)."""
    if isinstance(items, Mapping):
        return dict(items)
    out: dict[str, Any] = {}
    for kv in items if isinstance(items, list) else []:
        if isinstance(kv, Mapping) and isinstance(kv.get("key"), str):
            out[kv["key"]] = attribute_value(kv.get("value"))
    return out


#: Latest timestamp accepted, ns since the epoch (the int64 range OTLP uses).
_MAX_NS = 2**63 - 1


class _Where:
    """Collects the type problems of one batch, located by field path; values quoted scrubbed."""

    def __init__(self, problems: list[Problem], shown: str, line: int | None) -> None:
        self.problems = problems
        self.shown = shown
        self.line = line

    def bad(self, field: str, message: str, got: Any) -> None:
        self.problems.append(Problem(self.shown, self.line, field, message, quoted(got), True))

    def obj(self, value: Any, field: str, *, optional: bool = True) -> Mapping[str, Any] | None:
        """``value`` if it is a JSON object (``{}`` when absent and ``optional``), else a problem."""
        if value is None and optional:
            return {}
        if isinstance(value, Mapping):
            return value
        self.bad(field, "must be a JSON object", value)
        return None

    def items(self, value: Any, field: str) -> list[Any] | None:
        """``value`` if it is a JSON list (``[]`` when absent), else a problem."""
        if value is None:
            return []
        if isinstance(value, list):
            return value
        self.bad(field, "must be a JSON list", value)
        return None

    def attrs(self, value: Any, field: str) -> dict[str, Any] | None:
        """Decoded attributes (a list of key/value objects, or an object), else a problem."""
        if value is None or isinstance(value, list | Mapping):
            return attributes(value)
        self.bad(field, "must be a JSON list of attributes", value)
        return None

    def time(self, value: Any, field: str) -> int:
        """Nanoseconds since the epoch (0 when absent or unreadable, as before)."""
        if isinstance(value, bool) or not isinstance(value, int | str | float):
            return 0
        try:
            number = int(value)
        except (ValueError, OverflowError):
            return 0
        if not 0 <= number <= _MAX_NS:
            self.bad(field, "must be nanoseconds since the epoch (0 to 2^63-1)", value)
            return 0
        return number


def _key(mapping: Mapping[str, Any], camel: str, snake: str) -> Any:
    return mapping.get(camel, mapping.get(snake))


def _events(w: _Where, sp: Mapping[str, Any], where: str) -> tuple[SpanEvent, ...] | None:
    events = w.items(sp.get("events"), f"{where}.events")
    if events is None:
        return None
    out = []
    for i, e in enumerate(events):
        ev = w.obj(e, f"{where}.events.{i}", optional=False)
        attrs = (
            None if ev is None else w.attrs(ev.get("attributes"), f"{where}.events.{i}.attributes")
        )
        if ev is None or attrs is None:
            return None
        name = ev.get("name")
        out.append(
            SpanEvent(
                name if isinstance(name, str) else "",
                w.time(
                    _key(ev, "timeUnixNano", "time_unix_nano"), f"{where}.events.{i}.timeUnixNano"
                ),
                attrs,
            )
        )
    return tuple(out)


def _span(
    w: _Where, sp: Mapping[str, Any], where: str, resource: dict[str, Any], origin: str
) -> Span | None:
    trace_id = normalise_id(_key(sp, "traceId", "trace_id"), 16)
    span_id = normalise_id(_key(sp, "spanId", "span_id"), 8)
    if trace_id is None or span_id is None:
        bad = "traceId" if trace_id is None else "spanId"
        w.bad(f"{where}.{bad}", "must be a hex or base64 id of the right length", sp.get(bad))
        return None
    status = w.obj(sp.get("status"), f"{where}.status")
    attrs = w.attrs(sp.get("attributes"), f"{where}.attributes")
    events = _events(w, sp, where)
    if status is None or attrs is None or events is None:
        return None
    name = sp.get("name")
    message = status.get("message")
    return Span(
        trace_id=trace_id,
        span_id=span_id,
        parent_id=normalise_id(_key(sp, "parentSpanId", "parent_span_id"), 8),
        name=name if isinstance(name, str) else "",
        start_ns=w.time(
            _key(sp, "startTimeUnixNano", "start_time_unix_nano"), f"{where}.startTimeUnixNano"
        ),
        end_ns=w.time(
            _key(sp, "endTimeUnixNano", "end_time_unix_nano"), f"{where}.endTimeUnixNano"
        ),
        attributes=attrs,
        resource=resource,
        events=events,
        error=status.get("code") in (2, "2", "STATUS_CODE_ERROR", "ERROR"),
        status_message=message if isinstance(message, str) else "",
        origin=origin,
    )


def _log_events(
    w: _Where, resource_logs: list[Any]
) -> Iterator[tuple[str, str, SpanEvent, dict[str, Any]]]:
    """`(trace id, span id, event, resource)` of every `gen_ai.*` event record of a log export."""
    for r, item in enumerate(resource_logs):
        rl = w.obj(item, f"resourceLogs.{r}", optional=False)
        res = None if rl is None else w.obj(rl.get("resource"), f"resourceLogs.{r}.resource")
        if rl is None or res is None:
            continue
        resource = w.attrs(res.get("attributes"), f"resourceLogs.{r}.resource.attributes")
        scopes = w.items(_key(rl, "scopeLogs", "scope_logs"), f"resourceLogs.{r}.scopeLogs")
        if resource is None or scopes is None:
            continue
        for s, scope in enumerate(scopes):
            sl = w.obj(scope, f"resourceLogs.{r}.scopeLogs.{s}", optional=False)
            records = (
                None
                if sl is None
                else w.items(
                    _key(sl, "logRecords", "log_records"),
                    f"resourceLogs.{r}.scopeLogs.{s}.logRecords",
                )
            )
            for k, raw in enumerate(records or []):
                where = f"resourceLogs.{r}.scopeLogs.{s}.logRecords.{k}"
                rec = w.obj(raw, where, optional=False)
                attrs = (
                    None if rec is None else w.attrs(rec.get("attributes"), f"{where}.attributes")
                )
                if rec is None or attrs is None:
                    continue
                name = _key(rec, "eventName", "event_name") or attrs.get("event.name")
                if not isinstance(name, str) or not name.startswith("gen_ai."):
                    continue
                trace_id = normalise_id(_key(rec, "traceId", "trace_id"), 16)
                span_id = normalise_id(_key(rec, "spanId", "span_id"), 8)
                if trace_id is None or span_id is None:
                    w.bad(
                        f"{where}.spanId",
                        "a GenAI event record must name its trace and span (hex or base64 ids)",
                        rec.get("spanId"),
                    )
                    continue
                body = (
                    attribute_value(rec.get("body"))
                    if isinstance(rec.get("body"), Mapping)
                    else None
                )
                if isinstance(body, Mapping):
                    attrs = {**{str(k): v for k, v in body.items()}, **attrs}
                time_ns = w.time(
                    _key(rec, "timeUnixNano", "time_unix_nano")
                    or _key(rec, "observedTimeUnixNano", "observed_time_unix_nano"),
                    f"{where}.timeUnixNano",
                )
                yield trace_id, span_id, SpanEvent(name, time_ns, attrs), resource


def _with_log_events(
    spans: list[Span], events: list[tuple[str, str, SpanEvent, dict[str, Any]]], origins: list[str]
) -> list[Span]:
    """Spans with the log events that name them; an event whose span was not read becomes one."""
    index = {(s.trace_id, s.span_id): i for i, s in enumerate(spans)}
    out = list(spans)
    for (trace_id, span_id, event, resource), origin in zip(events, origins, strict=True):
        at = index.get((trace_id, span_id))
        if at is not None:
            out[at] = replace(out[at], events=(*out[at].events, event))
            continue
        index[(trace_id, span_id)] = len(out)
        out.append(
            Span(
                trace_id=trace_id,
                span_id=span_id,
                parent_id=None,
                name=str(event.attributes.get("gen_ai.operation.name", event.name)),
                start_ns=event.time_ns,
                end_ns=event.time_ns,
                attributes={
                    k: v for k, v in event.attributes.items() if k == "gen_ai.operation.name"
                },
                resource=resource,
                events=(event,),
                origin=origin,
            )
        )
    return out


def _spans_of(
    batch: Any,
    origin: str,
    problems: list[Problem],
    shown: str,
    line: int | None,
    log_events: list[tuple[tuple[str, str, SpanEvent, dict[str, Any]], str]] | None = None,
) -> Iterator[Span]:
    w = _Where(problems, shown, line)
    resource_spans = (
        _key(batch, "resourceSpans", "resource_spans") if isinstance(batch, Mapping) else None
    )
    resource_logs = (
        _key(batch, "resourceLogs", "resource_logs") if isinstance(batch, Mapping) else None
    )
    if resource_spans is None and isinstance(resource_logs, list) and log_events is not None:
        log_events.extend((e, origin) for e in _log_events(w, resource_logs))
        return
    if not isinstance(resource_spans, list):
        problems.append(
            Problem(
                shown,
                line,
                "resourceSpans",
                "not an OTLP JSON trace or log export (no resourceSpans or resourceLogs list)",
            )
        )
        return
    for r, item in enumerate(resource_spans):
        rs = w.obj(item, f"resourceSpans.{r}", optional=False)
        res = None if rs is None else w.obj(rs.get("resource"), f"resourceSpans.{r}.resource")
        if rs is None or res is None:
            continue
        resource = w.attrs(res.get("attributes"), f"resourceSpans.{r}.resource.attributes")
        scopes = w.items(_key(rs, "scopeSpans", "scope_spans"), f"resourceSpans.{r}.scopeSpans")
        if resource is None or scopes is None:
            continue
        for s, scope in enumerate(scopes):
            ss = w.obj(scope, f"resourceSpans.{r}.scopeSpans.{s}", optional=False)
            spans = (
                None
                if ss is None
                else w.items(ss.get("spans"), f"resourceSpans.{r}.scopeSpans.{s}.spans")
            )
            for k, raw in enumerate(spans or []):
                where = f"resourceSpans.{r}.scopeSpans.{s}.spans.{k}"
                sp = w.obj(raw, where, optional=False)
                span = None if sp is None else _span(w, sp, where, resource, origin)
                if span is not None:
                    yield span


def read_spans(paths: Sequence[Path], shown: Mapping[Path, str] | None = None) -> list[Span]:
    """Every span of the OTLP JSON files, in file order (a trace may span several batches).

    Log exports among the files add their `gen_ai.*` event records to the spans they name (see
    the module docstring). Values quoted in messages are scrubbed of PII (a malformed line still
    holds customer data).

    Raises:
        InputErrors: A file or batch is not OTLP JSON, a field has the wrong JSON type, or an id
            is malformed (all reported).
    """
    problems: list[Problem] = []
    spans: list[Span] = []
    log_events: list[tuple[tuple[str, str, SpanEvent, dict[str, Any]], str]] = []
    for path in paths:
        name = (shown or {}).get(path, str(path))
        try:
            text = decode_utf8(path.read_bytes(), name)
        except InputError as exc:
            problems.append(exc.problem)
            continue
        for batch, number in _batches(text, name, problems):
            origin = f"{name}:{number}" if number else name
            spans.extend(_spans_of(batch, origin, problems, name, number, log_events))
    InputErrors.raise_if_any(problems)
    if log_events:
        spans = _with_log_events(spans, [e for e, _ in log_events], [o for _, o in log_events])
    return spans


def _batches(text: str, name: str, problems: list[Problem]) -> list[tuple[Any, int | None]]:
    """The export requests of a file: one JSON value (a list means several), or one per line."""
    try:
        data = parse_json(text)
    except BadJSON as whole:
        if not whole.message.startswith("invalid JSON"):
            problems.append(Problem(name, whole.lineno, None, whole.message))
            return []
    else:
        return [(b, None) for b in (data if isinstance(data, list) else [data])]
    batches: list[tuple[Any, int | None]] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            batches.append((parse_json(line), lineno))
        except BadJSON as exc:
            problems.append(Problem(name, lineno, None, exc.message, quoted(line), has_got=True))
    return batches
