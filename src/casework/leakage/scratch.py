"""Scratch folders of a streamed leakage scan: under the project's `.casework/tmp/leakage/`, locked.

A scan writes its signatures' band keys, shingle sets and candidate pairs to one folder, holds an
exclusive lock on the folder's ``lock`` file while it works, and removes the folder when it ends.
A scan killed mid-way (even by SIGKILL) leaves a folder whose lock nobody holds: the next scan
removes it before it starts. Entry points: :func:`scratch_folder`, :func:`clean_scratch`.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["LOCK_NAME", "clean_scratch", "scratch_folder"]

LOCK_NAME = "lock"
"""File inside a scratch folder whose lock its scan holds while it runs."""

#: A folder younger than this is left alone even unlocked: its scan may be about to lock it.
_FRESH_S = 60.0


def _try_lock(fd: int) -> bool:
    """Take ``fd``'s exclusive lock without waiting; whether it was free."""
    try:
        import fcntl  # POSIX only
    except ImportError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def clean_scratch(root: Path, *, now: float | None = None) -> list[Path]:
    """Remove the scratch folders under ``root`` that no running scan holds.

    A folder is removed when its lock file is free (its scan ended or was killed) and the folder
    is older than a minute, or when it has no lock file and is older than a minute (killed before
    it locked). Never raises for a folder that vanished or cannot be removed.

    Args:
        root: The scratch root (``.casework/tmp/leakage``); missing is fine.
        now: The time to compare ages against (default: the clock).

    Returns:
        The folders removed.
    """
    removed: list[Path] = []
    if not root.is_dir():
        return removed
    clock = time.time() if now is None else now
    for folder in sorted(root.iterdir()):
        with contextlib.suppress(OSError):
            if not folder.is_dir() or folder.is_symlink():
                continue
            if clock - folder.lstat().st_mtime < _FRESH_S:
                continue
            lock = folder / LOCK_NAME
            if lock.exists():
                fd = os.open(lock, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
                try:
                    if not _try_lock(fd):
                        continue
                    shutil.rmtree(folder)
                finally:
                    os.close(fd)
            else:
                shutil.rmtree(folder)
            removed.append(folder)
    return removed


@contextlib.contextmanager
def scratch_folder(root: Path) -> Iterator[Path]:
    """A fresh locked folder under ``root`` for one scan; removed when the block ends.

    Folders that killed scans left under ``root`` are removed first (:func:`clean_scratch`).
    """
    clean_scratch(root)
    root.mkdir(parents=True, exist_ok=True)
    folder = root / f"scan-{os.getpid()}-{secrets.token_hex(4)}"
    folder.mkdir()
    fd = os.open(folder / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _try_lock(fd)
        yield folder
    finally:
        os.close(fd)
        shutil.rmtree(folder, ignore_errors=True)
