"""A batch's canonical check reads each line's marks once, and decides as the full check does.

:func:`canonical_records` answers "is this line canonical?" from the marks it made of the line
while validating it (no second pass over pydantic's JSON) when they show no number pydantic
may spell otherwise. Its answer must be today's: ``None`` exactly when the line is
``json.dumps`` of the record's dump, else that line. Checked on the example's first case with
numbers of every risky spelling (and look-alikes in strings) put in its free-form state.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casework.dataset import dump_record
from casework.dataset.jsonl import canonical_fix, canonical_records, valid_record
from casework.decoding import parse_json
from casework.schema import Case, LabelRecord

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "refunds" / "datasets" / "refunds"
CASE = json.loads((EXAMPLE / "cases.jsonl").read_bytes().splitlines()[0])
LABEL = (EXAMPLE / "labels.jsonl").read_bytes().splitlines()[0]

#: Numbers and strings around the spellings :func:`_numbers_risky` looks for.
VALUES: list[Any] = [
    1e-07,
    1e16,
    1.5e20,
    -2.5e-300,
    0.00001,
    0.0001,
    1e-05,
    12345678901234567,
    1234567890123456789,
    123456789012345678901,
    0.1,
    -0.0,
    100.0,
    "0e5,",
    "3E-7]",
    "x1e+16}",
    "00000000000000000",
    "0.00001",
    "a,0e-07",
]


def _line(value: Any, *, ascii_only: bool = False, compact: bool = False) -> bytes:
    case = json.loads(json.dumps(CASE))
    case["situation"]["state"]["zz"] = value
    separators = (",", ":") if compact else None
    return json.dumps(case, ensure_ascii=ascii_only, separators=separators).encode()


def _today(line: bytes, model: type[Any] = Case) -> bytes | None:
    """Today's answer: ``None`` when ``line`` is the canonical line of its record, else that."""
    record = valid_record(line, model)
    assert record is not None
    canonical = json.dumps(dump_record(record), ensure_ascii=False).encode()
    return None if canonical == line else canonical


def _check(lines: list[bytes], model: type[Any] = Case) -> None:
    found = canonical_records(lines, model)
    assert found is not None
    for line, (record, fixed) in zip(lines, found, strict=True):
        # The record is the strict decoder's (orjson reads an integer past 64 bits as a float).
        assert record == model.model_validate(parse_json(line.decode().removesuffix("\r")))
        assert fixed == _today(line, model), line[-200:]
        assert fixed == canonical_fix(record, line)


def test_risky_spellings_are_told_as_the_full_check_tells_them() -> None:
    lines = [_line(v) for v in VALUES]
    lines += [_line(v, ascii_only=True) for v in VALUES]
    lines += [_line(v, compact=True) for v in VALUES]
    lines += [_line([v, {"k": v}]) for v in VALUES]
    lines.append(_line(VALUES))
    # Spelt as pydantic spells them, which the standard library does not: not canonical.
    for python, pydantic in [(b"1e-07", b"1e-7"), (b"1e+16", b"1e16"), (b"1e-05", b"0.00001")]:
        lines += [line.replace(python, pydantic) for line in lines if python in line]
    lines.append(_line(1e-07) + b"\r")
    # Some of these are canonical as written and some not: both answers are exercised.
    answers = [_today(line) for line in lines]
    assert any(a is None for a in answers)
    assert any(a is not None for a in answers)
    _check(lines)


def test_labels_canonical_and_not() -> None:
    label = json.loads(LABEL)
    moved = {k: label[k] for k in reversed(list(label))}
    lines = [LABEL, json.dumps(moved).encode(), json.dumps(label, separators=(",", ":")).encode()]
    _check(lines, LabelRecord)


@given(
    st.lists(
        st.one_of(
            st.floats(allow_nan=False, allow_infinity=False),
            st.integers(min_value=-(10**25), max_value=10**25),
            st.text(alphabet="0123456789eE.+-,]} ", max_size=12),
        ),
        max_size=4,
    )
)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_random_numbers_are_told_as_the_full_check_tells_them(values: list[Any]) -> None:
    _check([_line(values), _line(values, compact=True)])
