"""Atomic file writes: a temp file, fsync, then rename over the target.

A crash mid-write leaves either the old file or the new one, never half of either. The new file
keeps the mode of the file it replaces (else the umask default); ``mode`` is for secrets only.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import IO

__all__ = ["atomic_write_bytes", "atomic_write_text", "atomic_writer", "temp_name"]


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
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_name(path, tmp_dir)
    keep: int | None = mode
    if keep is None:
        with contextlib.suppress(FileNotFoundError):
            keep = path.stat().st_mode & 0o7777
    # 0o666 lets the kernel apply the umask to a new file; an explicit mode is set below.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if mode is not None else 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            if keep is not None and hasattr(os, "fchmod"):  # fchmod: POSIX only before 3.13
                os.fchmod(handle.fileno(), keep)
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


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
