"""Atomic file writes: a temp file, fsync, then rename over the target.

A crash mid-write leaves either the old file or the new one, never half of either. The new file
keeps the mode of the file it replaces (else the umask default); ``mode`` is for secrets only.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = [
    "DirectFile",
    "atomic_direct_writer",
    "atomic_write_bytes",
    "atomic_write_text",
    "atomic_writer",
    "temp_name",
]


def temp_name(path: Path, tmp_dir: Path | None = None) -> Path:
    """A fresh temp path for writing ``path``: ``.<name>.<random>.tmp`` in ``tmp_dir`` or beside it.

    ``tmp_dir`` is used only when it is on the same filesystem as ``path`` (a rename across
    filesystems is not atomic).
    """
    folder = path.parent
    if tmp_dir is not None:
        tmp_dir.mkdir(parents=True, exist_ok=True)
        if tmp_dir.stat().st_dev == folder.stat().st_dev:
            folder = tmp_dir
    return folder / f".{path.name}.{secrets.token_hex(6)}.tmp"


@contextlib.contextmanager
def atomic_writer(
    path: Path, *, mode: int | None = None, tmp_dir: Path | None = None
) -> Iterator[IO[bytes]]:
    """Open a temp file for ``path``; on clean exit it replaces ``path`` atomically.

    On an exception the temp file is removed and ``path`` is untouched.

    Args:
        path: The file to write.
        mode: Permission bits to force (``0o600`` for secrets); by default the file keeps the mode
            of the file it replaces, else the process umask applies (as for any new file).
        tmp_dir: Where to put the temp file (e.g. a git-ignored folder); beside ``path`` when
            omitted or on another filesystem.
    """
    with _atomic_fd(path, mode, tmp_dir) as fd, os.fdopen(fd, "wb", closefd=False) as handle:
        yield handle
        handle.flush()


@contextlib.contextmanager
def _atomic_fd(path: Path, mode: int | None, tmp_dir: Path | None) -> Iterator[int]:
    """A temp file's descriptor for ``path``; on clean exit fsynced, closed and renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path, tmp_dir)
    keep: int | None = mode
    if keep is None:
        with contextlib.suppress(FileNotFoundError):
            keep = path.stat().st_mode & 0o7777
    # 0o666 lets the kernel apply the umask to a new file; an explicit mode is set below.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if mode is not None else 0o666)
    try:
        try:
            if keep is not None and hasattr(os, "fchmod"):  # fchmod: POSIX only before 3.13
                os.fchmod(fd, keep)
            yield fd
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


#: Bytes a :class:`DirectFile` gathers before each write: a multiple of every block size a
#: filesystem asks direct writes to be aligned to (512 B to 64 KiB).
_DIRECT_BLOCK = 1 << 22
_ALIGN = 1 << 16


class DirectFile:
    """A write-only file that bypasses the page cache where the system allows it (Linux ``O_DIRECT``).

    For large files written once and seldom read soon (the version store's packs): written
    through the page cache, each 4 KiB page is a fresh page the kernel must find and fill, and
    then evicts something more useful. On this project's 2-core VM a 563 MB pack took 1.6 s
    through the cache and 0.25 s written directly (both fsynced). Data is gathered into an
    aligned buffer and written a block at a time; the last partial block is written through the
    cache. A filesystem that refuses direct writes (older tmpfs, some network or FUSE mounts)
    gets ordinary ones, and so does every system without ``O_DIRECT``.
    """

    def __init__(self, fd: int) -> None:
        """Wrap ``fd`` (open for writing at offset 0); it stays the caller's to close."""
        self._fd = fd
        self._buffer = mmap.mmap(-1, _DIRECT_BLOCK)  # page-aligned, as direct writes need
        self._view = memoryview(self._buffer)
        self._used = 0
        self._direct = _set_direct(fd, on=True)

    def write(self, data: bytes | memoryview) -> int:
        """Append ``data``; returns its length (all of it is taken)."""
        given = memoryview(data).cast("B")
        total = len(given)
        while given:
            n = min(len(given), _DIRECT_BLOCK - self._used)
            self._view[self._used : self._used + n] = given[:n]
            self._used += n
            given = given[n:]
            if self._used == _DIRECT_BLOCK:
                self._write_out()
        return total

    def flush(self) -> None:
        """Write everything gathered so far (the file may then take only ordinary writes)."""
        self._write_out()

    def release(self) -> None:
        """Free the buffer, dropping what was not flushed (the descriptor stays open)."""
        self._view.release()
        # A slice still held (by an exception's traceback) keeps the mapping until it goes.
        with contextlib.suppress(BufferError):
            self._buffer.close()

    def _write_out(self) -> None:
        """Write the gathered bytes: whole blocks directly while the file takes them, the rest as usual."""
        done, end = 0, self._used
        while done < end:
            stop = end
            if self._direct:
                stop = done + (end - done) // _ALIGN * _ALIGN
                if stop == done:  # a partial block (the end of the file): through the cache
                    self._direct = _set_direct(self._fd, on=False)
                    stop = end
            try:
                done += os.write(self._fd, self._view[done:stop])
            except OSError as exc:
                if not (self._direct and exc.errno == errno.EINVAL):
                    raise
                # Refused (an unaligned offset after a short write, or a filesystem that
                # takes the flag but not the write): the rest goes through the cache.
                self._direct = _set_direct(self._fd, on=False)
        self._used = 0


def _set_direct(fd: int, *, on: bool) -> bool:
    """Turn direct writes of ``fd`` on or off; whether they are on now."""
    flag = getattr(os, "O_DIRECT", 0)
    if not flag:
        return False
    try:
        import fcntl  # POSIX only

        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags | flag if on else flags & ~flag)
    except (ImportError, OSError):
        return False
    return on


@contextlib.contextmanager
def atomic_direct_writer(path: Path, *, tmp_dir: Path | None = None) -> Iterator[DirectFile]:
    """:func:`atomic_writer` for a large file written once and seldom read soon (see :class:`DirectFile`)."""
    with _atomic_fd(path, None, tmp_dir) as fd:
        handle = DirectFile(fd)
        try:
            yield handle
            handle.flush()
        finally:
            handle.release()


def atomic_write_bytes(
    path: Path, data: bytes, *, mode: int | None = None, tmp_dir: Path | None = None
) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_writer` for ``mode``, ``tmp_dir``)."""
    with atomic_writer(path, mode=mode, tmp_dir=tmp_dir) as handle:
        handle.write(data)


def atomic_write_text(
    path: Path, text: str, *, mode: int | None = None, tmp_dir: Path | None = None
) -> None:
    """Write UTF-8 ``text`` to ``path`` atomically (see :func:`atomic_writer`)."""
    atomic_write_bytes(path, text.encode("utf-8"), mode=mode, tmp_dir=tmp_dir)
