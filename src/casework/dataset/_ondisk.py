"""A release's files on disk, for reading as streams: the working tree, or a copy in scratch.

`check`, `cases` and `agreement` of ``name@N`` used to build the release's bytes in
memory (the store's lines joined, or git's output read whole) and parse them in one process:
at 100k cases 19 s and 1.5 GB. :func:`release_files` finds the files in the places
:func:`~casework.dataset.versions.materialise` looks, in the same order (the working tree, the
version store, an old-layout full copy, git history), but never holds one whole: the store's
lines and git's output are written to a scratch folder under `.casework/restore/`, removed
on leaving. Readers hash what they read and compare with the release's hash (the working tree
may change while read).

Entry points: :func:`release_files`, :func:`scratch_dir`.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from stat import S_ISDIR

from casework.dataset._objects import write_stored
from casework.dataset.versions import (
    CASES_FILE,
    LABELS_FILE,
    files_hash,
    version_from_git,
)
from casework.project import Project
from casework.schema import VersionRecord

__all__ = ["release_files", "scratch_dir"]

#: Scratch folders older than this were left by a command that died: removed by the next one.
STALE_SECONDS = 24 * 3600


def scratch_dir(project: Project, name: str) -> Path:
    """A new folder for one command's temp files, under `.casework/restore/`.

    Not under the dataset's `.casework/tmp/` folder: every command that takes the release lock
    empties that one, and a reader runs without the lock.

    Raises:
        OSError: No room, `.casework/` not writable, or `.casework/restore` is a link (temp
            files stay inside the project).
    """
    root = project.state_dir / "restore"
    root.mkdir(parents=True, exist_ok=True)
    if root.is_symlink():
        raise OSError(f"{root} is a link")
    now = time.time()
    # Only real folders directly inside `.casework/restore/` are ever removed.
    for old in root.iterdir():
        with contextlib.suppress(OSError):
            stat = old.lstat()
            if S_ISDIR(stat.st_mode) and now - stat.st_mtime > STALE_SECONDS:
                shutil.rmtree(old, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=root))


@contextlib.contextmanager
def release_files(
    project: Project, name: str, record: VersionRecord, *, working: bool = True
) -> Iterator[Path | None]:
    """A folder holding release ``record``'s `cases.jsonl` and `labels.jsonl` as released.

    The dataset's own folder when its files hash to the release (skipped unless ``working``:
    the caller read it and saw it change); else a scratch folder filled from the version store,
    an old-layout full copy or git history, whichever first holds the release. A scratch copy
    is checked against the release's hash and removed on leaving; the working tree may still
    change after its check, so a reader compares the hash of what it read.

    ``None``: no place holds the release, or no copy could be written (no room): the caller
    takes :func:`~casework.dataset.versions.materialise`, which says which.
    """
    folder = project.dataset_dir(name)
    try:
        here = working and files_hash(folder) == record.hash
    except OSError:
        here = False
    if here:
        yield folder
        return
    try:
        scratch = scratch_dir(project, name)
    except OSError:
        yield None
        return
    try:
        yield scratch if _filled(project, folder, record, scratch) else None
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _filled(project: Project, folder: Path, record: VersionRecord, scratch: Path) -> bool:
    """Whether ``scratch`` now holds the release's files (checked against its hash)."""
    try:
        if write_stored(project.state_dir, record.hash, scratch) == record.hash:
            return True
        old = project.state_dir / "versions" / record.hash  # an old-layout full copy
        if (old / CASES_FILE).is_file():
            for file in (CASES_FILE, LABELS_FILE):
                (scratch / file).unlink(missing_ok=True)
                if (old / file).is_file():
                    shutil.copyfile(old / file, scratch / file)
            if files_hash(scratch) == record.hash:
                return True
        for file in (CASES_FILE, LABELS_FILE):
            (scratch / file).unlink(missing_ok=True)
        return version_from_git(folder, record.hash, scratch)
    except OSError:
        return False
