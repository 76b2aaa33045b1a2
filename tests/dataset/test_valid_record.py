"""One line validated alone accepts exactly what the whole-file reader accepts of it.

The first release validates each line alone (:func:`valid_record`) instead of joining a batch
of lines into a file for :func:`parse_records` and splitting it again; any line refused goes to
the full path, which reports it. Compared here on the example's published lines and hostile
variants of them (hypothesis mutations and known edges).
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from casework.dataset.jsonl import parse_records, valid_record
from casework.errors import InputErrors
from casework.schema import Case, LabelRecord

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "refunds" / "datasets" / "refunds"
CASE = (EXAMPLE / "cases.jsonl").read_bytes().splitlines()[0]
LABEL = (EXAMPLE / "labels.jsonl").read_bytes().splitlines()[0]


def _as_file(line: bytes, model: type[BaseModel]) -> BaseModel | None:
    """What parse_records makes of ``line`` as the second line of a file (``None``: refused)."""
    try:
        first = CASE if model is Case else LABEL
        records = parse_records(first + b"\n" + line + b"\n", model, shown="f").records
    except InputErrors:
        return None
    return records[1] if len(records) == 2 else None


EDGES = [
    b"",
    b"   ",
    b"\xef\xbb\xbf" + LABEL,
    LABEL + b"\r",
    LABEL[:-1],
    b"[1, 2]",
    b'"text"',
    LABEL.replace(b'"first"', b'"third"'),
    LABEL.replace(b"}", b', "extra": 1}', 1),
    LABEL.replace(b'"2026', b'"\\ud800', 1),
    LABEL.replace(b"lab-", b"lab-\xff", 1),
    LABEL.replace(b"}", b', "n": 12345678901234567890123}', 1),
    LABEL.replace(b"}", b', "n": NaN}', 1),
    b'{"a": ' + b"[" * 600 + b"]" * 600 + b"}",
]


def test_known_edges_are_accepted_as_the_file_reader_accepts_them() -> None:
    for line in [LABEL, *EDGES]:
        assert valid_record(line, LabelRecord) == _as_file(line, LabelRecord), line[:80]
    assert valid_record(CASE, Case) == _as_file(CASE, Case) is not None


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    at=st.integers(0, len(LABEL)),
    cut=st.integers(0, 4),
    insert=st.binary(max_size=6) | st.sampled_from([b'"', b"\\", b"\\u0000", b"1e400", b"{", b","]),
)
def test_mutated_labels_are_accepted_as_the_file_reader_accepts_them(
    at: int, cut: int, insert: bytes
) -> None:
    line = (LABEL[:at] + insert + LABEL[at + cut :]).replace(b"\n", b" ")
    assert valid_record(line, LabelRecord) == _as_file(line, LabelRecord)
