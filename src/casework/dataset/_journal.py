"""All-or-nothing releases: the files of one release are staged, committed by one journal, applied.

A release writes its new files' content to the staging folder (cases and labels are already in
the version cache), then the journal ``.casework/journal/<dataset>.json`` naming every target
with its hash before and after (the commit point), then replaces each target, then deletes the
journal. The next command that locks the dataset finds an unfinished journal and completes it;
staging without a journal is an aborted release and is dropped. Entry points: :func:`commit` (or
:func:`stage` then :func:`finish`), :func:`recover`, :func:`pending`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import xxhash
from pydantic import BaseModel, ConfigDict, ValidationError

from casework.atomic import atomic_write_bytes, atomic_writer
from casework.errors import ReleaseConflict
from casework.project import Project

__all__ = [
    "FileContent",
    "Staged",
    "commit",
    "finish",
    "pending",
    "read_journal",
    "recover",
    "stage",
    "tmp_dir",
    "written_digests",
]


_HashKind = Literal["sha256", "xxh3-128"]


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built when used

    path: str
    """Target, relative to the project root."""
    before: str | None
    """Hash of the target before the release (``None``: it did not exist)."""
    after: str
    """Hash of the new content."""
    staged: str
    """Where the new content waits, relative to the project root."""


class _Journal(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)  # built when used

    schema_version: Literal[1] = 1
    dataset: str
    hash: _HashKind = "sha256"
    """How ``before`` and ``after`` were computed (journals written before 2026-12-05 name none:
    sha256)."""
    entries: list[_Entry]


#: The hash new journals use. It tells which of two states a file is in after a crash (as it
#: was, or as staged), or that it is in neither: it detects edits and damage, not attacks (as
#: the release lock's fingerprint does), so XXH3-128 serves at 20 GB/s where sha256 took about
#: 1 s a GB (a first release of 1M cases hashed 12.6 GB for its journal).
_JOURNAL_HASH: _HashKind = "xxh3-128"


def _hasher(kind: _HashKind) -> Any:
    return xxhash.xxh3_128() if kind == "xxh3-128" else hashlib.sha256()


def _hash_of(data: bytes, kind: _HashKind = _JOURNAL_HASH) -> str:
    hasher = _hasher(kind)
    hasher.update(data)
    return str(hasher.hexdigest())


def _journal_dir(project: Project) -> Path:
    return project.state_dir / "journal"


def _journal_file(project: Project, name: str) -> Path:
    return _journal_dir(project) / f"{name}.json"


def _staging(project: Project, name: str) -> Path:
    return _journal_dir(project) / name


def tmp_dir(project: Project, name: str) -> Path:
    """Temp files of one dataset's writes: under `.casework/` (git-ignored), cleaned on lock."""
    return project.state_dir / "tmp" / name


_CHUNK = 1 << 24  # files are hashed and copied in chunks: a 563 MB cases file is never held


def _digest(path: Path, kind: _HashKind = _JOURNAL_HASH) -> str | None:
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return None
    digest = _hasher(kind)
    with handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return str(digest.hexdigest())


def _copy_checked(source: Path, target: Path, after: str, tmp: Path, kind: _HashKind) -> bool:
    """Replace ``target`` atomically by ``source`` (missing: empty) if its ``kind`` hash is ``after``.

    The file is hashed and copied chunk by chunk in one pass; ``False`` (``target`` untouched)
    when the hash differs.
    """
    digest = _hasher(kind)
    try:
        with atomic_writer(target, tmp_dir=tmp) as out:
            with contextlib.suppress(FileNotFoundError), source.open("rb") as handle:
                while chunk := handle.read(_CHUNK):
                    digest.update(chunk)
                    out.write(chunk)
            if digest.hexdigest() != after:
                raise _Damaged
    except _Damaged:
        return False
    return True


def _move_fresh(source: Path, target: Path, staging: Path) -> bool:
    """Rename a file this commit has just staged (and hashed) onto ``target``, keeping its mode.

    Renaming spares copying and hashing the file again (at 100k cases 563 MB, about 2 s of a
    first release). ``False`` (nothing done) when ``source`` is not in ``staging`` or the rename
    crosses filesystems: the caller copies then.
    """
    if not source.is_relative_to(staging.resolve()):
        return False
    with contextlib.suppress(FileNotFoundError):
        os.chmod(source, target.stat().st_mode & 0o7777)  # as an atomic write keeps it
    try:
        os.replace(source, target)
    except OSError:
        return False
    return True


class _Damaged(Exception):
    """The staged content does not have the hash the journal names (the temp file is dropped)."""


def _stored(project: Project, path: Path) -> str:
    """A path as the journal keeps it: relative to the project root when inside it."""
    resolved = path.resolve()
    root = project.root.resolve()
    return resolved.relative_to(root).as_posix() if resolved.is_relative_to(root) else str(resolved)


def _inside(project: Project, stored: str) -> Path:
    """The path a journal entry names, refused unless it is in the project or its datasets."""
    try:
        path = (project.root.resolve() / stored).resolve()
    except (ValueError, OSError) as exc:  # a NUL byte; a link loop
        raise ReleaseConflict(f"release journal names a path that cannot be: {stored!r}") from exc
    roots = (project.root.resolve(), project.datasets_dir.resolve())
    if not any(path.is_relative_to(r) for r in roots):
        raise ReleaseConflict(f"release journal names a file outside the project: {stored}")
    return path


def pending(project: Project, name: str) -> bool:
    """An interrupted release of ``name`` waits to be completed or dropped (or its temp files)."""
    temps = tmp_dir(project, name)
    return (
        _journal_file(project, name).exists()
        or _staging(project, name).exists()
        or (temps.is_dir() and any(temps.iterdir()))
    )


#: A file's new content: its bytes, or a function giving them piece by piece (written as they come).
FileContent = bytes | Callable[[], Iterable[bytes | memoryview]]


def _stage(source: Path, data: FileContent, tmp: Path) -> str:
    """Write ``data`` to ``source`` atomically; its hash (hashed as written)."""
    if isinstance(data, bytes):
        atomic_write_bytes(source, data, tmp_dir=tmp)
        return _hash_of(data)
    digest = _hasher(_JOURNAL_HASH)
    with atomic_writer(source, tmp_dir=tmp) as out:
        for piece in data():
            digest.update(piece)
            out.write(piece)
    return str(digest.hexdigest())


def commit(
    project: Project, name: str, files: Mapping[Path, FileContent], staged: Mapping[Path, Path]
) -> None:
    """Write every file of one release so that a crash leaves all old or (after recovery) all new.

    :func:`stage`, then :func:`finish`.

    Args:
        project: The project (the caller holds the dataset's lock).
        name: Dataset name.
        files: Target path -> new content (bytes, or pieces streamed to the staging folder).
        staged: Targets whose content is already written elsewhere under the project (the
            version cache) -> that file; the others are staged here first.
    """
    finish(project, stage(project, name, files, staged))


@dataclass(frozen=True)
class Staged:
    """The files of one release, staged and hashed, awaiting :func:`finish` (the commit point)."""

    name: str
    """Dataset name."""
    entries: tuple[_Entry, ...]


def stage(
    project: Project, name: str, files: Mapping[Path, FileContent], staged: Mapping[Path, Path]
) -> Staged:
    """Write the new content of a release to the staging folder, and hash each target as it is.

    Nothing is committed yet: a crash from here to :func:`finish` leaves staging without a
    journal, which the next command drops. Arguments as for :func:`commit`; the caller holds the
    dataset's lock until :func:`finish` returns.
    """
    staging = _staging(project, name)
    shutil.rmtree(staging, ignore_errors=True)
    sources = {
        target: staged.get(target) or staging / f"{i}-{target.name}"
        for i, target in enumerate(files)
    }

    def after(target: Path) -> str:
        data, source = files[target], sources[target]
        if target not in staged:
            return _stage(source, data, tmp_dir(project, name))
        if isinstance(data, bytes):
            return _hash_of(data)
        return _digest(source) or _hash_of(b"")

    # Each file is written and hashed, and each target hashed as it stands, mostly outside the
    # GIL: content given piece by piece (the cases, the largest) in order on this thread, all
    # else on another (at 100k cases the old files' hashes and the labels took 0.65 s after the
    # 2.4 s of the cases). A later piecewise file may so wait for what an earlier one yields.
    targets = list(files)
    streamed = [t for t in targets if callable(files[t]) and t not in staged]
    with ThreadPoolExecutor(max_workers=1) as pool:
        rest = pool.submit(
            lambda: (
                [_digest(t) for t in targets],
                {t: after(t) for t in targets if t not in streamed},
            )
        )
        afters = {t: after(t) for t in streamed}
        before, others = rest.result()
    afters.update(others)
    entries = [
        _Entry(
            path=_stored(project, target),
            before=was,
            after=afters[target],
            staged=_stored(project, sources[target]),
        )
        for target, was in zip(targets, before, strict=True)
    ]
    return Staged(name, tuple(entries))


def finish(project: Project, staged: Staged) -> None:
    """Commit staged files: write the journal (the commit point), then replace each target."""
    name = staged.name
    journal = _Journal(dataset=name, hash=_JOURNAL_HASH, entries=list(staged.entries))
    atomic_write_bytes(
        _journal_file(project, name),
        journal.model_dump_json(indent=1).encode(),
        tmp_dir=tmp_dir(project, name),
    )
    # The targets were hashed when staged, under the lock: not read again.
    _apply(project, journal, {e.path: e.before for e in staged.entries})


def written_digests(project: Project, staged: Staged) -> dict[Path, bytes]:
    """The XXH3-128 digest of each target's new content (what :func:`finish` puts there).

    Taken as it was staged, by target path (resolved).
    """
    if _JOURNAL_HASH != "xxh3-128":
        return {}
    return {_inside(project, e.path): bytes.fromhex(e.after) for e in staged.entries}


def _apply(
    project: Project, journal: _Journal, known: Mapping[str, str | None] | None = None
) -> None:
    shown = project.relative(_journal_file(project, journal.dataset))
    for entry in journal.entries:
        target = _inside(project, entry.path)
        current = (
            known[entry.path] if known and entry.path in known else _digest(target, journal.hash)
        )
        if current == entry.after:
            continue
        if current != entry.before:
            raise ReleaseConflict(
                f"{project.relative(target)}: changed after a release was interrupted; {shown} "
                "holds that release. Put the file back as it was (e.g. `git checkout`) and run the "
                "command again to complete it, or delete the journal to abandon it."
            )
        source = _inside(project, entry.staged)
        if known is not None and _move_fresh(source, target, _staging(project, journal.dataset)):
            continue
        if not _copy_checked(
            source, target, entry.after, tmp_dir(project, journal.dataset), journal.hash
        ):
            raise ReleaseConflict(
                f"{shown}: the staged content of {entry.path} ({entry.staged}) is missing or "
                "damaged, so the interrupted release cannot be completed; delete the journal to "
                "abandon it."
            )
    _journal_file(project, journal.dataset).unlink()
    shutil.rmtree(_staging(project, journal.dataset), ignore_errors=True)


def read_journal(project: Project, name: str) -> _Journal | None:
    """The journal of an interrupted release of ``name`` (``None``: there is none).

    Every path it names is checked before anything is applied.

    Raises:
        ReleaseConflict: The file is not a release journal, or names a path outside the project.
    """
    journal_file = _journal_file(project, name)
    try:
        data = journal_file.read_bytes()
    except FileNotFoundError:
        return None
    try:
        journal = _Journal.model_validate_json(data)
    except ValidationError as exc:
        raise ReleaseConflict(
            f"{project.relative(journal_file)}: not a release journal ({exc.error_count()} "
            "problems); delete it to abandon the interrupted release."
        ) from exc
    for i, entry in enumerate(journal.entries):
        for field, stored in (("path", entry.path), ("staged", entry.staged)):
            try:
                _inside(project, stored)
            except ReleaseConflict as exc:
                raise ReleaseConflict(
                    f"{project.relative(journal_file)}: entries.{i}.{field}: not a path inside "
                    f"the project. Got {stored!r}; delete the journal to abandon the interrupted "
                    "release."
                ) from exc
    return journal


def recover(project: Project, name: str) -> None:
    """Complete an interrupted release of ``name`` (or drop an uncommitted one); remove temp files.

    The caller holds the dataset's lock, so no temp file found here belongs to a live writer.

    Raises:
        ReleaseConflict: The journal cannot be applied (a target was edited since, or damaged).
    """
    journal = read_journal(project, name)
    if journal is not None:
        _apply(project, journal)
    shutil.rmtree(_staging(project, name), ignore_errors=True)
    shutil.rmtree(tmp_dir(project, name), ignore_errors=True)
    folder = project.dataset_dir(name)
    if folder.is_dir():
        for leftover in folder.glob(".*.jsonl.*.tmp"):
            with contextlib.suppress(FileNotFoundError):
                leftover.unlink()
