"""Errors of trace readers never print the customer data of a malformed line (issue 12 item 2)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casework.errors import InputErrors
from casework.mining.generic import parse_mapping, read_generic
from casework.mining.otlp import read_spans
from tests.mining.otlp_examples import envelope, span

# Planted PII in the variety people write it, built independently of the detectors' patterns.
_SEPARATORS = st.sampled_from([" ", "-", ".", "", " - ", "/"])


@st.composite
def phones(draw: st.DrawFn) -> str:
    area = draw(st.integers(200, 999))
    exchange = draw(st.integers(200, 999))
    line = draw(st.integers(0, 9999))
    sep = draw(_SEPARATORS)
    style = draw(st.sampled_from(["plain", "paren", "intl", "intl-paren", "uk"]))
    if style == "paren":
        return f"({area}) {exchange}{sep}{line:04d}"
    if style == "intl":
        return f"+1{sep or ' '}{area}{sep}{exchange}{sep}{line:04d}"
    if style == "intl-paren":
        return f"+1 ({area}) {exchange}-{line:04d}"
    if style == "uk":
        return f"+44 {draw(st.integers(20, 79))} {draw(st.integers(1000, 9999))} {line:04d}"
    return f"{area}{sep}{exchange}{sep}{line:04d}"


emails = st.emails().filter(lambda e: '"' not in e and "\\" not in e)
filler = st.text(st.characters(codec="utf-8", exclude_characters='"\\\n\r'), max_size=20)


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


def _assert_no_pii(message: str, email: str, phone: str) -> None:
    assert email.casefold() not in message.casefold()
    assert "@" not in message
    assert _digits(phone) not in _digits(message)


def _generic_lines(email: str, phone: str, pad: str) -> list[str]:
    text = f"{pad} write to {email} or call {phone}"
    good = {"role": "user", "content": text}
    return [
        # Invalid JSON: the line is cut off after the customer's message.
        json.dumps({"session_id": "s1", "messages": [good]})[:-2],
        # Wrong types: the PII sits in a value the error quotes.
        json.dumps({"session_id": "s2", "messages": text}),
        json.dumps({"session_id": "s3", "messages": [{"role": email, "content": phone}]}),
        json.dumps({"session_id": "s4", "messages": [good], "escalated": text}),
        json.dumps({"session_id": "s5", "messages": [good], "state": [email, phone]}),
        json.dumps({"session_id": "s6", "messages": [{"role": "user", "tool_calls": [text]}]}),
    ]


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(email=emails, phone=phones(), pad=filler)
def test_generic_reader_errors_hide_planted_pii(
    tmp_path: Path, email: str, phone: str, pad: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(_generic_lines(email, phone, pad)) + "\n", encoding="utf-8")
    with pytest.raises(InputErrors) as info:
        read_generic([path], parse_mapping([]), {path: "t.jsonl"})
    message = str(info.value)
    assert len(info.value.problems) == 6
    _assert_no_pii(message, email, phone)
    # The place is still named, so the user can find the line.
    assert message.splitlines()[0].startswith("t.jsonl:1: invalid JSON")


def _otlp_lines(email: str, phone: str, pad: str) -> list[str]:
    text = f"{pad} write to {email} or call {phone}"
    good = span("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7", "chat", 0, {"x": text})
    bad_id = dict(good, traceId=email)
    bad_span_id = dict(good, spanId=phone)
    bad_attrs = dict(good, attributes=text)
    bad_status = dict(good, status=[email, phone])
    bad_events = dict(good, events={"note": text})
    lines: list[Any] = [
        json.dumps(envelope([good]))[:-3],
        envelope([bad_id]),
        envelope([bad_span_id]),
        envelope([bad_attrs]),
        envelope([bad_status]),
        envelope([bad_events]),
        {"resourceSpans": [text]},
        {"resourceSpans": [{"scopeSpans": [{"spans": [text]}]}]},
    ]
    return [line if isinstance(line, str) else json.dumps(line) for line in lines]


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(email=emails, phone=phones(), pad=filler)
def test_otlp_reader_errors_hide_planted_pii(
    tmp_path: Path, email: str, phone: str, pad: str
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(_otlp_lines(email, phone, pad)) + "\n", encoding="utf-8")
    with pytest.raises(InputErrors) as info:
        read_spans([path], {path: "t.jsonl"})
    message = str(info.value)
    assert len(info.value.problems) == 8
    _assert_no_pii(message, email, phone)
    assert message.splitlines()[0].startswith("t.jsonl:1: invalid JSON")


def test_error_still_quotes_what_is_not_personal(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(
        json.dumps({"session_id": "s", "messages": [{"role": "narrator"}]}) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(InputErrors) as info:
        read_generic([path], parse_mapping([]), {path: "t.jsonl"})
    assert str(info.value).endswith("Got 'narrator'.")
