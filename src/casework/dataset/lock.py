"""Serialised releases: one advisory lock file per dataset, held from reading it to appending.

Every command that releases a dataset reads and releases it inside :func:`dataset_lock`, so two
processes never release from the same parent. Taking the lock first completes an interrupted
release (:mod:`casework.dataset._journal`) and fingerprints the dataset's files;
:func:`check_unchanged` refuses a release when they changed meanwhile (a writer that ignores the
lock: a hand edit, a `git checkout`). The lock is reentrant within one thread.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import xxhash

from casework.dataset._journal import pending, recover
from casework.dataset.versions import (
    CASES_FILE,
    LABELS_FILE,
    VERSIONS_FILE,
    read_chunks,
    read_versions,
)
from casework.errors import ReleaseConflict, UsageError
from casework.project import Project
from casework.schema import VersionRecord

if TYPE_CHECKING:
    from filelock import FileLock

__all__ = [
    "LOCK_TIMEOUT_ENV",
    "check_unchanged",
    "dataset_lock",
    "dataset_versions",
    "fingerprint_of",
    "fingerprint_of_digests",
    "held_fingerprint",
    "lock_path",
    "note_written",
    "settle",
]

#: Environment variable: seconds to wait for another process's release lock (default 60).
LOCK_TIMEOUT_ENV = "CASEWORK_LOCK_TIMEOUT"
_DEFAULT_TIMEOUT = 60.0


@dataclass
class _Held:
    lock: FileLock
    depth: int
    fingerprint: str


class _Registry(threading.local):
    def __init__(self) -> None:
        self.held: dict[Path, _Held] = {}


_registry = _Registry()


def lock_path(project: Project, name: str) -> Path:
    """The lock file of one dataset: `.casework/locks/<name>.lock` (git-ignored)."""
    project.dataset_dir(name)  # validates the name
    return project.state_dir / "locks" / f"{name}.lock"


def _timeout() -> float:
    raw = os.environ.get(LOCK_TIMEOUT_ENV)
    if raw is None:
        return _DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value >= 0:
        raise UsageError(
            f"{LOCK_TIMEOUT_ENV}: expected a number of seconds (0 or more). Got '{raw}'."
        )
    return value


def _fingerprint(folder: Path, known: Mapping[str, bytes] | None = None) -> str:
    """The fingerprint of the dataset's files in ``folder``, each read but those ``known``.

    ``known``: the XXH3-128 digest of a file's bytes, by file name (a file just written).
    """
    digests: list[bytes | None] = []
    for name in _FILES:
        if known is not None and name in known:
            digests.append(known[name])
            continue
        path = folder / name
        if not path.exists():
            digests.append(None)
            continue
        digest = xxhash.xxh3_128()
        for chunk in read_chunks(path):
            digest.update(chunk)
        digests.append(digest.digest())
    return fingerprint_of_digests(*digests)


_FILES = (CASES_FILE, LABELS_FILE, VERSIONS_FILE)


def fingerprint_of(cases: bytes | None, labels: bytes | None, versions: bytes | None) -> str:
    """The fingerprint the lock takes of a dataset whose files hold these bytes (``None``: absent)."""
    return fingerprint_of_digests(
        *(
            None if data is None else xxhash.xxh3_128_digest(data)
            for data in (cases, labels, versions)
        )
    )


def fingerprint_of_digests(
    cases: bytes | None, labels: bytes | None, versions: bytes | None
) -> str:
    """:func:`fingerprint_of` from each file's XXH3-128 digest (``None``: absent).

    The fingerprint is a hash of the three files' digests (it detects edits, not attacks: fast
    over a large dataset), so a digest taken of a file's bytes as they were read for something
    else (a first release's scan of its cases) or written (the journal's) serves it: at 1M
    cases each pass over the files read 6.5 GB.
    """
    digest = xxhash.xxh3_128()
    for name, part in zip(_FILES, (cases, labels, versions), strict=True):
        digest.update(name.encode() + (b"\0\0" if part is None else b"\0\1" + part))
    return digest.hexdigest()


def held_fingerprint(project: Project, name: str) -> str:
    """The fingerprint of the dataset's files when this thread took its lock (or last wrote them)."""
    return _held(project, name).fingerprint


@contextlib.contextmanager
def dataset_lock(project: Project, name: str, *, timeout: float | None = None) -> Iterator[None]:
    """Hold the release lock of ``name``: read the dataset and release it inside this block.

    Args:
        project: The project.
        name: Dataset name (validated).
        timeout: Seconds to wait for another holder; default `CASEWORK_LOCK_TIMEOUT` or 60.

    Raises:
        ReleaseConflict: Another process held the lock for longer than the timeout, or an
            interrupted release cannot be completed.
    """
    path = lock_path(project, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    key = path.resolve()
    held = _registry.held.get(key)
    if held is not None:
        held.depth += 1
        try:
            yield
        finally:
            held.depth -= 1
        return
    # Imported here: filelock takes ~50 ms to import and `casework dataset versions` needs it only when an
    # interrupted release waits (issue 13: start-up under 0.3 s).
    from filelock import FileLock, Timeout

    wait = _timeout() if timeout is None else timeout
    lock = FileLock(str(path))
    try:
        lock.acquire(timeout=wait)
    except Timeout:
        raise ReleaseConflict(
            f"{project.relative(project.dataset_dir(name))}: another casework command is releasing "
            f"dataset '{name}' and has held its lock ({project.relative(path)}) for more than "
            f"{wait:g} s; nothing was written. Run this command again when it has finished (or "
            f"set {LOCK_TIMEOUT_ENV} to wait longer)."
        ) from None
    try:
        recover(project, name)
        _registry.held[key] = _Held(lock, 1, _fingerprint(project.dataset_dir(name)))
        yield
    finally:
        _registry.held.pop(key, None)
        lock.release()


def _held(project: Project, name: str) -> _Held:
    held = _registry.held.get(lock_path(project, name).resolve())
    if held is None:  # a programming error: releases happen inside dataset_lock
        raise RuntimeError(f"dataset '{name}' is not locked by this thread")
    return held


def check_unchanged(project: Project, name: str) -> None:
    """Refuse to release when the dataset's files changed since the lock was taken.

    Raises:
        ReleaseConflict: `cases.jsonl`, `labels.jsonl` or `versions.jsonl` changed underneath.
    """
    if _fingerprint(project.dataset_dir(name)) != _held(project, name).fingerprint:
        raise ReleaseConflict(
            f"{project.relative(project.dataset_dir(name))}: {CASES_FILE}, {LABELS_FILE} or "
            f"{VERSIONS_FILE} changed while this command was preparing its release (written by "
            "something that does not take casework's release lock); nothing was written. Run the "
            "command again to release from the files as they are now."
        )


def note_written(project: Project, name: str, known: Mapping[str, bytes] | None = None) -> None:
    """Record the lock holder's own release, so a second release in the same block may follow.

    ``known``: the XXH3-128 digests of files it wrote, by file name (the others are read).
    """
    _held(project, name).fingerprint = _fingerprint(project.dataset_dir(name), known)


def settle(project: Project, name: str) -> None:
    """Complete an interrupted release of ``name`` before reading it (no-op when none waits)."""
    if pending(project, name) and lock_path(project, name).resolve() not in _registry.held:
        with dataset_lock(project, name):
            pass


def dataset_versions(project: Project, name: str) -> list[VersionRecord]:
    """The release log of ``name``, oldest first, after completing any interrupted release.

    Here, beside :func:`settle`, so that `casework dataset versions` imports no more than it uses.
    """
    folder = project.dataset_dir(name)
    settle(project, name)
    return read_versions(folder, f"{project.relative(folder)}/{VERSIONS_FILE}")
