"""Lines of a file read back in file order take a few large reads, not a system call a line."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from casework.dataset._lines import Changed, scan_file
from tests.dataset.preads import counted_preads


def _file(tmp_path: Path) -> Path:
    rng = random.Random(4)
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b"".join(b"x" * rng.randrange(1, 9000) + b"\n" for _ in range(2000)))
    return path


def test_lines_read_in_order_are_read_ahead(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _file(tmp_path)
    source, spans, _, _ = scan_file(path, lambda chunk: None)
    data = path.read_bytes()
    calls = counted_preads(monkeypatch)
    with source.reader() as read:
        got = [bytes(read(o, n)) for o, n in spans]
    assert got == [data[o : o + n] for o, n in spans]
    # Before: 2,000 reads (one a line); now one a megabyte (about 9 MB here).
    assert len(calls) <= len(data) // (1 << 20) + 2, len(calls)


def test_lines_out_of_order_are_read_exactly(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _file(tmp_path)
    source, spans, _, _ = scan_file(path, lambda chunk: None)
    data = path.read_bytes()
    order = list(range(len(spans)))
    random.Random(2).shuffle(order)
    calls = counted_preads(monkeypatch)
    with source.reader() as read:
        got = [bytes(read(*spans[i])) for i in order]
    assert got == [data[spans[i][0] : spans[i][0] + spans[i][1]] for i in order]
    assert sum(n for _, n in calls) < 2 * len(
        data
    )  # no block read ahead for lines asked for at random


def test_a_file_cut_short_is_found_reading_ahead(tmp_path: Path) -> None:
    path = _file(tmp_path)
    source, spans, _, _ = scan_file(path, lambda chunk: None)
    os.truncate(path, spans[-3][0])
    with source.reader() as read, pytest.raises(Changed):
        for o, n in spans:
            read(o, n)
