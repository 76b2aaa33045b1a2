"""Atomic file writes: a temp file, fsync, then rename over the target.

A crash mid-write leaves either the old file or the new one, never half of either. The new file
keeps the mode of the file it replaces (else the umask default); ``mode`` is for secrets only.
A file inside a casework project is staged in the project's git-ignored ``.casework/tmp/``
(same filesystem, so the rename stays atomic), never beside its target; each temp file is locked
while written, and :func:`clean_temps` (run by every command) removes those a killed process left.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = [
    "PROJECT_TMP",
    "DirectFile",
    "atomic_direct_writer",
    "atomic_write_bytes",
    "atomic_write_text",
    "atomic_writer",
    "clean_temps",
    "temp_name",
]

#: Where temp files of writes inside a project wait, relative to its root (git-ignored).
PROJECT_TMP = Path(".casework") / "tmp"
_MARKER = "casework.toml"
#: A temp file younger than this is left alone even unlocked: its writer may be about to lock it.
_FRESH_S = 60.0
#: Without file locks (no ``fcntl``), a temp file is taken as abandoned after this long.
_STALE_S = 24 * 3600.0


def _project_tmp(folder: Path) -> Path | None:
    """``.casework/tmp`` of the project holding ``folder`` (the nearest ``casework.toml`` above)."""
    here = folder.absolute()
    for candidate in (here, *here.parents):
        if (candidate / _MARKER).is_file():
            return candidate / PROJECT_TMP
    return None


def temp_name(path: Path, tmp_dir: Path | None = None) -> Path:
    """A fresh temp path for writing ``path``: ``.<name>.<random>.tmp``.

    The temp file goes in ``tmp_dir``, else in the ``.casework/tmp`` of the project holding
    ``path``, else beside ``path``; a folder on another filesystem than ``path`` is passed over
    (a rename across filesystems is not atomic).
    """
    folder = path.parent
    chosen = tmp_dir if tmp_dir is not None else _project_tmp(folder)
    if chosen is not None:
        chosen.mkdir(parents=True, exist_ok=True)
        if chosen.stat().st_dev == folder.stat().st_dev:
            folder = chosen
    return folder / f".{path.name}.{secrets.token_hex(6)}.tmp"


def _lock(fd: int, *, wait: bool) -> bool:
    """Take the exclusive lock of ``fd``; whether it is held (``False``: another holds it).

    A lock dies with its process, even one killed with SIGKILL: a temp file nobody holds is one
    whose writer is gone. Where there are no file locks (no ``fcntl``), nothing is held.
    """
    try:
        import fcntl  # POSIX only
    except ImportError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
    except OSError:
        return False
    return True


def clean_temps(folder: Path, *, now: float | None = None, written: bool = False) -> list[Path]:
    """Remove the temp files under ``folder`` whose writer is gone (killed mid-write).

    A temp file is removed when no process holds its lock and it is older than a minute (a
    writer locks its file right after creating it). Where there are no file locks, a temp file
    is removed once a day old. Never raises for a file that vanished or cannot be removed.

    Args:
        folder: A project's ``.casework/tmp`` (searched recursively); missing is fine.
        now: The time to compare ages against (default: the clock).
        written: Also remove a fresh one that holds bytes and no lock: a writer locks its file
            before writing any, so it is a dead writer's (for erasure, which must not leave a
            killed run's copy of what it removes for that minute).

    Returns:
        The files removed.
    """
    removed: list[Path] = []
    if not folder.is_dir():
        return removed
    clock = time.time() if now is None else now
    for temp in folder.rglob("*.tmp"):
        with contextlib.suppress(OSError):
            stat = temp.lstat()
            age = clock - stat.st_mtime
            if age < _FRESH_S and not (written and stat.st_size > 0):
                continue
            fd = os.open(temp, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            try:
                if _lock(fd, wait=False) or age > _STALE_S:
                    temp.unlink()
                    removed.append(temp)
            finally:
                os.close(fd)
    return removed


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
        tmp_dir: Where to put the temp file; by default the ``.casework/tmp`` of the project
            holding ``path``, else beside ``path`` (see :func:`temp_name`).
    """
    with _atomic_fd(path, mode, tmp_dir) as fd, os.fdopen(fd, "wb", closefd=False) as handle:
        yield handle
        handle.flush()


@contextlib.contextmanager
def _atomic_fd(path: Path, mode: int | None, tmp_dir: Path | None) -> Iterator[int]:
    """A temp file's descriptor for ``path``; on clean exit fsynced, renamed over it and closed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path, tmp_dir)
    keep: int | None = mode
    if keep is None:
        with contextlib.suppress(FileNotFoundError):
            keep = path.stat().st_mode & 0o7777
    # 0o666 lets the kernel apply the umask to a new file; an explicit mode is set below.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if mode is not None else 0o666)
    closed = False
    try:
        # Held until the rename: a cleaner then never takes a live writer's file for a dead one's.
        locked = _lock(fd, wait=True)
        if keep is not None and hasattr(os, "fchmod"):  # fchmod: POSIX only before 3.13
            os.fchmod(fd, keep)
        yield fd
        os.fsync(fd)
        if not locked:  # where files are not locked, an open file may not be renamed (Windows)
            os.close(fd)
            closed = True
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    finally:
        if not closed:
            os.close(fd)


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
