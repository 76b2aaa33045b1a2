"""The line store takes a release's lines in the order of their files, read a block at a time.

The staged files are written in the release's (id-sorted) order and read their lines by
position; the store's pack may hold lines in any order (its index places each), so it reads
the files front to back. Before, both read by position, a line at a time: two reads of every
line of a file out of order (or a shared read and a lock), 2M reads at 1M cases.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest

from casework.dataset import _lines
from casework.dataset._incremental import NewCases
from casework.dataset._lines import Changed, by_offset, scan_file
from casework.dataset.store import release
from casework.dataset.versions import CASES_FILE, LABELS_FILE
from casework.project import load_project
from tests.dataset.preads import counted_preads
from tests.dataset.test_release_identity import _generator


def _new_cases(path: Path, lines: list[bytes]) -> NewCases:
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    source, spans, hashes, _ = scan_file(path, lambda _chunk: None)
    order = sorted(range(len(lines)), key=lambda i: lines[i])  # out of file order
    return NewCases(
        source,
        [spans[i] for i in order],
        [str(i) for i in order],
        [hashes[i] for i in order],
        [],
        canonical=False,
    )


def test_lines_asked_for_in_file_order_take_a_read_a_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_lines, "_AHEAD", 4096)
    rng = random.Random(7)
    lines = [
        b'{"id": "%d", "pad": "%s"}' % (rng.randrange(10**6), b"x" * (i % 90)) for i in range(1000)
    ]
    new = _new_cases(tmp_path / "cases.jsonl", lines)
    size = (tmp_path / "cases.jsonl").stat().st_size
    order = new.file_order()
    assert sorted(order) == list(range(len(lines)))
    assert [new.spans[i][0] for i in order] == sorted(o for o, _ in new.spans)
    calls = counted_preads(monkeypatch)
    with new.lines() as line:
        got = {i: bytes(line(i)) for i in order}
    assert [got[i] for i in range(len(lines))] == sorted(lines)
    assert len(calls) <= size // 4096 + 2, len(calls)
    # The same lines asked for in the release's order: one read each.
    calls.clear()
    with new.lines() as line:
        assert [bytes(line(i)) for i in range(len(lines))] == sorted(lines)
    assert len(calls) == len(lines)


def test_a_line_changed_on_disk_is_caught_in_file_order_too(tmp_path: Path) -> None:
    lines = [b'{"id": "%d"}' % (i * 37 % 101) for i in range(101)]
    path = tmp_path / "cases.jsonl"
    new = _new_cases(path, lines)
    data = bytearray(path.read_bytes())
    data[new.spans[50][0] + 2] = ord("X")  # same length, other bytes
    path.write_bytes(bytes(data))
    with new.lines() as line, pytest.raises(Changed):
        for i in new.file_order():
            line(i)


def test_by_offset_orders_positions_by_offset_ties_by_position() -> None:
    assert by_offset([30, 10, 20, 10]) == [1, 3, 2, 0]
    assert by_offset([]) == []


def _pack_rows(state: Path) -> list[bytes]:
    """The store's lines in the order the pack holds them (one pack after a first release)."""
    (pack,) = (state / "versions" / "objects").glob("*.pack")
    rows = [r.split() for r in pack.with_suffix(".idx").read_bytes().splitlines()]
    data = pack.read_bytes()
    return [data[int(o) : int(o) + int(n)] for _, o, n in sorted(rows, key=lambda r: int(r[1]))]


def test_a_first_release_stores_its_files_lines_in_their_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both files shuffled (canonical lines out of order): the pack follows each file."""
    monkeypatch.setattr("casework.dataset._incremental.PARALLEL_MIN_ROW_BYTES", 0)
    monkeypatch.setattr("casework.dataset._incremental.parallel_workers", lambda: 2)
    cases = _generator().make_project(tmp_path, 60, seed=2)
    folder = cases.parent
    for file in (CASES_FILE, LABELS_FILE):
        lines = (folder / file).read_bytes().splitlines()
        random.Random(1).shuffle(lines)
        (folder / file).write_bytes(b"".join(line + b"\n" for line in lines))
    case_lines = (folder / CASES_FILE).read_bytes().splitlines()
    ids = [json.loads(line)["id"] for line in case_lines]
    assert ids != sorted(ids)  # the generator's order is not the release's

    project = load_project(tmp_path)
    record = release(project, "refunds", None, "first", now=datetime(2026, 12, 6, tzinfo=UTC))
    assert record is not None
    stored = _pack_rows(tmp_path / ".casework")
    released_labels = (folder / LABELS_FILE).read_bytes().splitlines()
    # Every case line stands as it was (canonical): in the file's order, then the labels.
    assert stored[: len(case_lines)] == case_lines
    assert sorted(stored[len(case_lines) :]) == sorted(released_labels)
    assert (folder / CASES_FILE).read_bytes().splitlines() == [
        case_lines[i] for i in sorted(range(len(ids)), key=ids.__getitem__)
    ]
