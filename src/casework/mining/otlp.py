"""OTLP JSON trace exports: batches of `resourceSpans`, read into plain :class:`Span` values.

Entry point: :func:`read_spans`. A file holds one `ExportTraceServiceRequest` object, a list of
them, or one per line (the collector's file exporter); a trace may be split across batches and
files. Trace and span ids are accepted in hex (the OTLP/JSON rule) or base64 (protobuf JSON).
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from casework.errors import InputErrors, Problem

__all__ = ["Span", "SpanEvent", "attribute_value", "normalise_id", "read_spans"]

_HEX = re.compile(r"^[0-9a-fA-F]+$")


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

    ``None`` when it is neither, has the wrong length, or is the invalid all-zero id.

    >>> normalise_id("S/kvNXezTaajzpKdDg5HNg==", 16)
    '4bf92f3577b34da6a3ce929d0e0e4736'
    """
    if not isinstance(value, str) or not value:
        return None
    text = value.strip()
    if text.startswith("0x"):
        text = text[2:]
    if len(text) == size * 2 and _HEX.match(text):
        return None if set(text) == {"0"} else text.lower()
    try:
        raw = base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
    except (binascii.Error, ValueError):
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except (binascii.Error, ValueError):
            return None
    if len(raw) != size:
        return None
    hexed = raw.hex()
    return None if set(hexed) == {"0"} else hexed


def attribute_value(value: Any) -> Any:
    """Decode an OTLP `AnyValue` (`stringValue`, `intValue`, `arrayValue`, `kvlistValue`...)."""
    if not isinstance(value, Mapping):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "arrayValue" in value:
        return [attribute_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return attributes((value["kvlistValue"] or {}).get("values", []))
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def attributes(items: Any) -> dict[str, Any]:
    """Decode a list of OTLP `KeyValue`s (a plain JSON object is accepted as it is)."""
    if isinstance(items, Mapping):
        return dict(items)
    out: dict[str, Any] = {}
    for kv in items or []:
        if isinstance(kv, Mapping) and isinstance(kv.get("key"), str):
            out[kv["key"]] = attribute_value(kv.get("value"))
    return out


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _spans_of(
    batch: Any, origin: str, problems: list[Problem], shown: str, line: int | None
) -> Iterator[Span]:
    resource_spans = (
        batch.get("resourceSpans", batch.get("resource_spans"))
        if isinstance(batch, Mapping)
        else None
    )
    if not isinstance(resource_spans, list):
        problems.append(
            Problem(
                shown,
                line,
                "resourceSpans",
                "not an OTLP JSON trace export (no resourceSpans list)",
            )
        )
        return
    for r, rs in enumerate(resource_spans):
        resource = attributes(((rs or {}).get("resource") or {}).get("attributes", []))
        scopes = (rs or {}).get("scopeSpans", (rs or {}).get("scope_spans", []))
        for s, ss in enumerate(scopes or []):
            for k, sp in enumerate((ss or {}).get("spans", []) or []):
                where = f"resourceSpans.{r}.scopeSpans.{s}.spans.{k}"
                trace_id = normalise_id(sp.get("traceId", sp.get("trace_id")), 16)
                span_id = normalise_id(sp.get("spanId", sp.get("span_id")), 8)
                if trace_id is None or span_id is None:
                    bad = "traceId" if trace_id is None else "spanId"
                    problems.append(
                        Problem(
                            shown,
                            line,
                            f"{where}.{bad}",
                            "must be a hex or base64 id of the right length",
                            sp.get(bad),
                            has_got=True,
                        )
                    )
                    continue
                status = sp.get("status") or {}
                code = status.get("code")
                yield Span(
                    trace_id=trace_id,
                    span_id=span_id,
                    parent_id=normalise_id(sp.get("parentSpanId", sp.get("parent_span_id")), 8),
                    name=str(sp.get("name", "")),
                    start_ns=_int(sp.get("startTimeUnixNano")),
                    end_ns=_int(sp.get("endTimeUnixNano")),
                    attributes=attributes(sp.get("attributes", [])),
                    resource=resource,
                    events=tuple(
                        SpanEvent(
                            str(e.get("name", "")),
                            _int(e.get("timeUnixNano")),
                            attributes(e.get("attributes", [])),
                        )
                        for e in sp.get("events", []) or []
                        if isinstance(e, Mapping)
                    ),
                    error=code in (2, "2", "STATUS_CODE_ERROR", "ERROR"),
                    status_message=str(status.get("message", "") or ""),
                    origin=origin,
                )


def read_spans(paths: Sequence[Path], shown: Mapping[Path, str] | None = None) -> list[Span]:
    """Every span of the OTLP JSON files, in file order (a trace may span several batches).

    Raises:
        InputErrors: A file or batch is not OTLP JSON, or an id is malformed (all reported).
    """
    problems: list[Problem] = []
    spans: list[Span] = []
    for path in paths:
        name = (shown or {}).get(path, str(path))
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as exc:
            problems.append(Problem(name, None, None, f"not UTF-8 text (byte {exc.start + 1})"))
            continue
        batches: list[tuple[Any, int | None]] = []
        try:
            data = json.loads(text)
            items = data if isinstance(data, list) else [data]
            batches = [(b, None) for b in items]
        except json.JSONDecodeError:
            for lineno, line in enumerate(text.splitlines(), start=1):
                if not line.strip():
                    continue
                try:
                    batches.append((json.loads(line), lineno))
                except json.JSONDecodeError as exc:
                    problems.append(
                        Problem(
                            name,
                            lineno,
                            None,
                            f"invalid JSON: {exc.msg} at column {exc.colno}",
                            line,
                            has_got=True,
                        )
                    )
        for batch, number in batches:
            origin = f"{name}:{number}" if number else name
            spans.extend(_spans_of(batch, origin, problems, name, number))
    InputErrors.raise_if_any(problems)
    return spans
