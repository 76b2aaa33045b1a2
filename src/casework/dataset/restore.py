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
import tempfile
import time
from pathlib import Path

from casework.dataset.incremental import index_lines, split_lines
from casework.dataset.lines import Changed, scan_file
from casework.dataset.objects import VersionIndex, line_hash, read_index, write_version
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

__all__ = ["restored_index"]


class _Elsewhere(Exception):
    """The files looked at do not hold the release (another place may)."""


def restored_index(
    project: Project,
    name: str,
    record: VersionRecord,
    on_progress: ProgressCallback | None = None,
    *,
    tree: str | None = None,
) -> VersionIndex | None:
    """The stored index of release ``record`` of ``name``, rebuilt into the store if it lacks it.

    Only the latest release is rebuilt (an older one may hold rows since forgotten or expired).

    Rebuilding validates every case line of the release (``on_progress`` is told the bytes
    validated); the labels' lines are only hashed, as the store keeps them. ``tree``: the
    working tree's version hash, when the caller has it (the tree is then not hashed again).

    Returns:
        The index, or ``None`` when the release's content cannot be recovered, or when it does
        not hold exactly what a release of this version of casework writes (a bad or
        non-canonical line, a duplicate id, a contradiction): the caller then takes its full
        path, which reports whatever is wrong.
    """
    index = read_index(project.state_dir, record.hash)
    if index is not None:
        return index
    folder = project.dataset_dir(name)
    if not _latest(project, folder, record):
        # An older release may hold rows a later `forget` or `expire` removed, whose local
        # copies those commands deleted: git history may still hold them, the store must not
        # get them back. The caller reads such a release in full, storing nothing.
        return None
    try:
        scratch = _scratch(project, name)
    except OSError:  # no room, or `.casework/` not writable: the full path decides
        return None
    places = [] if tree is not None and tree != record.hash else [folder]
    places.append(project.state_dir / "versions" / record.hash)  # an old-layout full copy
    try:
        for place in places:
            try:
                return _restore(project, name, record, place, scratch, True, on_progress)
            except _Elsewhere:
                continue
        if version_from_git(folder, record.hash, scratch):
            return _restore(project, name, record, scratch, scratch, False, on_progress)
        return None
    except (_Elsewhere, OSError):
        # OSError: a file went away or the disk filled while restoring; the full path decides
        # (and reports what it cannot do itself).
        return None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _latest(project: Project, folder: Path, record: VersionRecord) -> bool:
    """Whether ``record`` is the latest release in the dataset's release log."""
    try:
        versions = read_versions(folder, f"{project.relative(folder)}/{VERSIONS_FILE}")
    except CaseworkError:
        return False
    return bool(versions) and versions[-1] == record


#: Scratch folders older than this were left by a restore that died: removed by the next one.
_STALE_SECONDS = 24 * 3600


def _scratch(project: Project, name: str) -> Path:
    """A new folder for one restore's temp files, under `.casework/restore/`.

    Not under the dataset's `.casework/tmp/` folder: every command that takes the release lock
    empties that one, and a restore runs without the lock (it writes only to the store).
    """
    root = project.state_dir / "restore"
    root.mkdir(parents=True, exist_ok=True)
    now = time.time()
    for old in root.iterdir():
        with contextlib.suppress(OSError):
            if now - old.stat().st_mtime > _STALE_SECONDS:
                shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root))


def _restore(
    project: Project,
    name: str,
    record: VersionRecord,
    place: Path,
    scratch: Path,
    check: bool,
    on_progress: ProgressCallback | None,
) -> VersionIndex | None:
    """Index and store the release from the files in ``place`` (hashed again when ``check``).

    The store's temp files wait in ``scratch``.

    Raises:
        _Elsewhere: ``place`` does not hold the release's bytes.
    """
    seen = hashlib.sha256(CASES_FILE.encode() + b"\0")
    try:
        source, spans, hashes, ended = scan_file(place / CASES_FILE, seen.update)
        labels = (place / LABELS_FILE).read_bytes() if (place / LABELS_FILE).exists() else b""
    except (FileNotFoundError, NotADirectoryError):
        raise _Elsewhere from None
    seen.update(LABELS_FILE.encode() + b"\0")
    seen.update(labels)
    if check and seen.hexdigest() != record.hash:
        raise _Elsewhere
    if not ended or (labels and not labels.endswith(b"\n")):
        return None  # a release writes every line with its newline
    shown = f"{project.relative(project.dataset_dir(name))}/{CASES_FILE} (release {record.number})"
    try:
        new = index_lines(source, spans, hashes, True, None, shown, on_progress=on_progress)
        if new is None or not new.canonical:
            return None
        label_view = memoryview(labels)
        label_lines = [label_view[o : o + n] for o, n in split_lines(labels)]
        index = VersionIndex(
            record.hash, new.ids, new.hashes, new.summaries, [line_hash(x) for x in label_lines]
        )
        with new.lines() as line:
            write_version(project.state_dir, index, line, label_lines, None, scratch)
    except Changed:
        return None  # the file changed while read: the full path decides
    return read_index(project.state_dir, record.hash)
