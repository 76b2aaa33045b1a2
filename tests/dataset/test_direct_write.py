"""Packs are written past the page cache (`atomic_direct_writer`): same bytes, same atomicity.

The writer gathers data into an aligned buffer and writes whole blocks with ``O_DIRECT`` where
the filesystem takes it; everything else (the last partial block, a refused or short write, a
system without the flag) goes through the cache. Each path must leave exactly the bytes given.
"""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import casework.atomic as atomic
from casework.atomic import atomic_direct_writer

BLOCK = atomic._DIRECT_BLOCK
DIRECT = getattr(os, "O_DIRECT", 0)

# Piece sizes around the buffer's and the alignment's edges, and ordinary ones.
_SIZES = st.one_of(
    st.integers(0, 5000),
    st.sampled_from([BLOCK - 1, BLOCK, BLOCK + 1, atomic._ALIGN - 1, atomic._ALIGN, 4096]),
    st.integers(BLOCK, 2 * BLOCK + 70_000),
)


def _pieces(sizes: list[int]) -> list[bytes]:
    return [bytes([(i * 31 + n) % 251]) * n for i, n in enumerate(sizes)]


def _write(path: Path, pieces: list[bytes]) -> None:
    with atomic_direct_writer(path, tmp_dir=path.parent / "tmp") as out:
        for piece in pieces:
            assert out.write(piece) == len(piece)


def _no_temp_left(folder: Path) -> bool:
    return not [p for p in folder.rglob("*.tmp")]


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(sizes=st.lists(_SIZES, max_size=6))
def test_the_file_holds_exactly_the_bytes_written(tmp_path: Path, sizes: list[int]) -> None:
    path = tmp_path / "a.pack"
    pieces = _pieces(sizes)
    _write(path, pieces)
    assert path.read_bytes() == b"".join(pieces)
    assert _no_temp_left(tmp_path)


def _recording_writes(
    monkeypatch: pytest.MonkeyPatch, fault: Callable[[int, int, bool], int | None] | None = None
) -> list[tuple[int, bool]]:
    """Record (length, direct?) of each write the writer makes; ``fault`` may refuse or shorten one."""
    real = os.write
    seen: list[tuple[int, bool]] = []

    def write(fd: int, data: bytes | memoryview) -> int:
        direct = bool(DIRECT and fcntl.fcntl(fd, fcntl.F_GETFL) & DIRECT)
        if fault is not None:
            verdict = fault(len(seen), len(data), direct)
            if verdict is not None:
                if verdict < 0:
                    seen.append((len(data), direct))
                    raise OSError(-verdict, os.strerror(-verdict))
                data = memoryview(data)[:verdict]
        seen.append((len(data), direct))
        return real(fd, data)

    monkeypatch.setattr(os, "write", write)  # the one `casework.atomic` calls
    return seen


def _takes_direct_writes(folder: Path) -> bool:
    if not DIRECT:
        return False
    fd = os.open(folder / "probe", os.O_WRONLY | os.O_CREAT)
    try:
        return atomic._set_direct(fd, on=True)
    finally:
        os.close(fd)
        os.unlink(folder / "probe")


def test_whole_blocks_go_direct_and_the_tail_through_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not _takes_direct_writes(tmp_path):
        pytest.skip("this filesystem takes no direct writes (the cached path is tested below)")
    data = bytes(range(256)) * ((2 * BLOCK + 100_000) // 256)
    seen = _recording_writes(monkeypatch)
    _write(tmp_path / "a.pack", [data])
    assert (tmp_path / "a.pack").read_bytes() == data
    direct = [n for n, d in seen if d]
    assert sum(direct) == len(data) // atomic._ALIGN * atomic._ALIGN  # all but the tail
    assert [d for _, d in seen] == [True] * (len(seen) - 1) + [False]


def test_a_filesystem_refusing_direct_writes_gets_ordinary_ones(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The flag is taken, the first direct write refused (EINVAL): nothing lost, nothing twice.
    seen = _recording_writes(monkeypatch, lambda i, n, direct: -errno.EINVAL if direct else None)
    pieces = _pieces([BLOCK + 5, 3, BLOCK * 2])
    _write(tmp_path / "a.pack", pieces)
    assert (tmp_path / "a.pack").read_bytes() == b"".join(pieces)
    assert not any(d for _, d in seen[1:])


def test_no_direct_flag_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic, "_set_direct", lambda fd, *, on: False)
    pieces = _pieces([BLOCK + 5, 0, 17, BLOCK])
    _write(tmp_path / "a.pack", pieces)
    assert (tmp_path / "a.pack").read_bytes() == b"".join(pieces)


@pytest.mark.parametrize("short", [4096 * 3, 1000])
def test_a_short_write_is_completed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, short: int
) -> None:
    # The second write takes only part of what it was given (aligned, or not: the rest then
    # goes through the cache).
    _recording_writes(monkeypatch, lambda i, n, direct: short if i == 1 else None)
    pieces = _pieces([BLOCK * 3 + 11])
    _write(tmp_path / "a.pack", pieces)
    assert (tmp_path / "a.pack").read_bytes() == b"".join(pieces)


def test_a_failing_write_leaves_the_old_file_and_no_temp(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "a.pack"
    path.write_bytes(b"old")
    _recording_writes(monkeypatch, lambda i, n, direct: -errno.ENOSPC if i == 1 else None)
    with pytest.raises(OSError, match="No space"):
        _write(path, _pieces([BLOCK * 3]))
    assert path.read_bytes() == b"old"
    assert _no_temp_left(tmp_path)


def test_an_error_in_the_block_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "a.pack"
    path.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_direct_writer(path, tmp_dir=tmp_path / "tmp") as out:
        out.write(b"x" * (BLOCK + 1))
        raise RuntimeError("stop")
    assert path.read_bytes() == b"old"
    assert _no_temp_left(tmp_path)
