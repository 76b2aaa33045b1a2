"""A release's index put back into the local version store from its content.

The line store under `.casework/versions` is local and git-ignored: a fresh clone, or a
project whose `.casework/` was deleted, lacks every release. Without the latest release's
index a release, a diff, `show`, `forget` or `expire` used to read every case of both sides as
models (the full path: at 100k cases, minutes and gigabytes). :func:`restored_index` recovers
the release's exact bytes (the working tree, an old-layout cache copy, or git history streamed
to a temp file under `.casework/restore/`), checks them against the version hash, validates its
case lines once as a first release does (on every core when large), and writes the version to
the store. Neither file is held whole: lines are read back by position, each checked against
its hash. The command then takes its usual path, validating only the lines that differ; the
next command finds the index stored.

Entry point: :func:`restored_index`.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from casework.dataset._incremental import NewCases, index_lines, split_lines
from casework.dataset._lines import Changed, OnDisk, scan_file
from casework.dataset._objects import VersionIndex, line_hash, read_index, write_version
from casework.dataset._ondisk import scratch_dir
from casework.dataset.stream import ProgressCallback
from casework.dataset.versions import (
    CASES_FILE,
    LABELS_FILE,
    VERSIONS_FILE,
    read_versions,
    version_from_git,
)
from casework.errors import CaseworkError
from casework.project import Project
from casework.schema import VersionRecord

__all__ = ["Recovered", "recovered_release", "restored_index"]


@dataclass(frozen=True)
class Recovered:
    """A release's files found and checked against its version hash, their case lines scanned."""

    source: OnDisk
    """The cases file, its lines read back by position (each checked against its hash)."""
    spans: list[tuple[int, int]]
    hashes: list[bytes]
    ended: bool
    """Whether the cases file ends with a newline (or is empty)."""
    labels: bytes
    """The labels file's bytes."""
    shown: str
    """How to name the cases file in messages."""
    scratch: Path
    """A folder of this recovery's own (removed with it), for temp files."""

    def index(
        self, base: VersionIndex | None, on_progress: ProgressCallback | None = None
    ) -> NewCases | None:
        """The cases indexed against ``base`` (only lines it lacks validated; models of its ids kept).

        ``None`` unless the content is exactly what a release writes (every line valid, canonical
        and newline-ended, ids unique and sorted, no contradiction) and unchanged while read.
        """
        if self.labels and not self.labels.endswith(b"\n"):
            return None  # a release writes every line with its newline
        new = index_lines(
            self.source,
            self.spans,
            self.hashes,
            self.ended,
            base,
            self.shown,
            on_progress=on_progress,
        )
        return new if new is not None and new.canonical else None


@contextlib.contextmanager
def recovered_release(
    project: Project, name: str, record: VersionRecord, *, tree: str | None = None
) -> Iterator[Recovered | None]:
    """The files of release ``record`` of ``name``, checked against its version hash; nothing stored.

    Looked for in the working tree (skipped when ``tree``, the tree's version hash, says it
    differs), an old-layout full copy in the store, then git history (streamed to a scratch
    folder under `.casework/restore/`, removed on leaving). ``None``: not found anywhere, or
    a file could not be read or written (no room, a file gone).
    """
    try:
        scratch = scratch_dir(project, name)
    except OSError:  # no room, or `.casework/` not writable
        yield None
        return
    folder = project.dataset_dir(name)
    places = [] if tree is not None and tree != record.hash else [folder]
    places.append(project.state_dir / "versions" / record.hash)  # an old-layout full copy
    try:
        found = None
        for place in places:
            found = _scanned(project, name, record, place, scratch, check=True)
            if found is not None:
                break
        if found is None and version_from_git(folder, record.hash, scratch):
            found = _scanned(project, name, record, scratch, scratch, check=False)
    except OSError:
        found = None
    try:
        yield found
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def restored_index(
    project: Project,
    name: str,
    record: VersionRecord,
    on_progress: ProgressCallback | None = None,
    *,
    tree: str | None = None,
) -> VersionIndex | None:
    """The stored index of release ``record`` of ``name``, rebuilt into the store if it lacks it.

    Only the latest release is rebuilt: an older one may hold rows a later `forget` or `expire`
    removed (whose local copies those commands deleted, while git history may still hold
    them), and the store must not get them back; :func:`recovered_release` reads one without
    storing it.

    Rebuilding validates every case line of the release (``on_progress`` is told the bytes
    validated); the labels' lines are only hashed, as the store keeps them. ``tree``: the
    working tree's version hash, when the caller has it (the tree is then not hashed again).

    Returns:
        The index, or ``None`` when the release is not the latest, its content cannot be
        recovered, or it does not hold exactly what a release of this version of casework
        writes (a bad or non-canonical line, a duplicate id, a contradiction): the caller then
        takes its full path, which reports whatever is wrong.
    """
    index = read_index(project.state_dir, record.hash)
    if index is not None:
        return index
    if not _latest(project, project.dataset_dir(name), record):
        return None
    with recovered_release(project, name, record, tree=tree) as found:
        if found is None:
            return None
        try:
            new = found.index(None, on_progress)
            if new is None:
                return None
            label_view = memoryview(found.labels)
            label_lines = [label_view[o : o + n] for o, n in split_lines(found.labels)]
            stored = VersionIndex(
                record.hash, new.ids, new.hashes, new.summaries, [line_hash(x) for x in label_lines]
            )
            with new.lines() as line:
                write_version(project.state_dir, stored, line, label_lines, None, found.scratch)
        except (Changed, OSError):
            return None  # a file changed or went away while read, or no room: the full path
    return read_index(project.state_dir, record.hash)


def _latest(project: Project, folder: Path, record: VersionRecord) -> bool:
    """Whether ``record`` is the latest release in the dataset's release log."""
    try:
        versions = read_versions(folder, f"{project.relative(folder)}/{VERSIONS_FILE}")
    except CaseworkError:
        return False
    return bool(versions) and versions[-1] == record


def _scanned(
    project: Project,
    name: str,
    record: VersionRecord,
    place: Path,
    scratch: Path,
    *,
    check: bool,
) -> Recovered | None:
    """The files in ``place`` scanned (``None``: absent, or, when ``check``, not the release)."""
    seen = hashlib.sha256(CASES_FILE.encode() + b"\0")
    try:
        source, spans, hashes, ended = scan_file(place / CASES_FILE, seen.update)
        labels = (place / LABELS_FILE).read_bytes() if (place / LABELS_FILE).exists() else b""
    except (FileNotFoundError, NotADirectoryError):
        return None
    seen.update(LABELS_FILE.encode() + b"\0")
    seen.update(labels)
    if check and seen.hexdigest() != record.hash:
        return None
    shown = f"{project.relative(project.dataset_dir(name))}/{CASES_FILE} (release {record.number})"
    return Recovered(source, spans, hashes, ended, labels, shown, scratch)
