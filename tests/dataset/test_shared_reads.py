"""Two readers of a release's lines (the store and the staged file) read each line from disk once."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from casework.dataset import _lines
from casework.dataset._incremental import NewCases
from casework.dataset._lines import Changed, SharedReads, scan_file
from tests.dataset.preads import counted_preads


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


def test_two_readers_read_each_line_from_disk_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines = [b'{"id": "%d", "pad": "%s"}' % (i * 7919 % 1000, b"x" * (i % 50)) for i in range(1000)]
    new = _new_cases(tmp_path / "cases.jsonl", lines)
    expected = [new.spans[i] for i in range(len(lines))]
    calls = counted_preads(monkeypatch)
    got: dict[str, list[bytes]] = {}
    both = threading.Barrier(2)

    def read(who: str) -> None:
        with new.lines() as line:
            both.wait()  # both open before either reads
            got[who] = [bytes(line(i)) for i in range(len(lines))]
            both.wait()  # neither closes (which drops what is kept) while the other reads

    threads = [threading.Thread(target=read, args=(w,)) for w in ("store", "stage")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wanted = [lines[int(new.ids[i])] for i in range(len(lines))]
    assert got["store"] == wanted and got["stage"] == wanted
    # Each line read once: a reader asking for a line the other is reading waits for it.
    assert len(calls) == len(lines), len(calls)
    assert {o for o, _ in expected} == {o for o, _ in calls}
    assert not new._shared._kept  # nothing held once both are done

    # One reader alone keeps nothing (and reads every line).
    calls.clear()
    with new.lines() as line:
        assert [bytes(line(i)) for i in range(len(lines))] == wanted
        assert not new._shared._kept
    assert len(calls) == len(lines)


def test_a_kept_line_was_checked_and_a_changed_file_is_still_caught(tmp_path: Path) -> None:
    lines = [b'{"id": "%d"}' % i for i in range(100)]
    path = tmp_path / "cases.jsonl"
    new = _new_cases(path, lines)
    with new.lines() as first, new.lines() as second:
        assert bytes(first(0)) == bytes(second(0))
        data = bytearray(path.read_bytes())
        at = new.spans[1][0]
        data[at + 2] = ord("X")  # same length, other bytes
        path.write_bytes(bytes(data))
        with pytest.raises(Changed):
            first(1)
        with pytest.raises(Changed):
            second(1)  # nothing was kept for it: read, and refused, too


def test_memory_held_for_a_reader_behind_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_lines, "_KEPT_BYTES", 1000)
    shared = SharedReads()
    with shared.open(), shared.open():
        for i in range(100):
            shared.keep(i, b"x" * 100)
        assert shared._bytes <= 1000 and len(shared._kept) == 10
        assert shared.take(0) is None  # dropped first: its reader reads it again
        assert shared.take(99) == b"x" * 100
    assert not shared._kept and shared._bytes == 0
