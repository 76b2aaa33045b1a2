"""Writing a release under the lock: the line store first, then the files through the journal.

Entry points: :func:`release_locked` (models in memory) and :func:`release_prepared` (a tree
prepared by :mod:`casework.dataset._prepare`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO, overload

import xxhash

from casework.dataset._apart import told
from casework.dataset._changelog import changes_by_line, changes_since
from casework.dataset._hashing import HashingThread
from casework.dataset._incremental import (
    LabelFile,
    LabelLines,
    NewCases,
    counts_of,
    guideline_versions_of,
    index_models,
    label_sort_key,
    labels_of,
    parse_lines,
    split_lines,
)
from casework.dataset._journal import (
    FileContent,
    Staged,
    finish,
    stage,
    tmp_dir,
    written_digests,
)
from casework.dataset._lines import Changed, OnDisk
from casework.dataset._objects import VersionIndex, fetch_lines, line_hash, write_version
from casework.dataset._prepare import FullPath, Prepared
from casework.dataset._refusals import (
    contradictions,
    dangling_labels,
    dropped_label_count,
    dropped_labels,
    duplicate_ids,
    duplicate_labels,
)
from casework.dataset._restore import restored_index
from casework.dataset.diff import changed_ids
from casework.dataset.jsonl import byte_lines, canonical_bytes, read_records
from casework.dataset.lock import check_unchanged, note_written
from casework.dataset.stream import (
    PROGRESS_EVERY,
    ProgressCallback,
    StageProgress,
    one_stage,
    parse_content,
)
from casework.dataset.versions import (
    CASES_FILE,
    LABELS_FILE,
    VERSIONS_FILE,
    Content,
    materialise,
    pieces_hash,
    read_chunks,
    read_versions,
)
from casework.errors import CaseworkError, InputErrors
from casework.project import Project
from casework.schema import Case, LabelRecord, VersionRecord


def _parse(content: Content, shown_dir: str) -> tuple[list[Case], list[LabelRecord]]:
    """Parse both files of a version, reporting every bad line of either, and dangling labels."""
    cases: list[Case] = []
    _, labels = parse_content(byte_lines(content.cases), content.labels, shown_dir, cases.append)
    return cases, labels


def release_locked(
    project: Project,
    name: str,
    cases: Iterable[Case],
    message: str,
    changes: Sequence[str] | None,
    labels: Iterable[LabelRecord] | None,
    now: datetime | None,
) -> VersionRecord | None:
    folder = project.dataset_dir(name)
    shown_dir = project.relative(folder)
    case_list = sorted(cases, key=lambda c: c.id)
    if labels is None:
        label_list = _existing_labels(folder, shown_dir)
    else:
        label_list = sorted(labels, key=label_sort_key)
    # The records are validated models already: refuse what only a whole file can get wrong
    # (duplicate ids, labels naming no case, contradictions) before writing anything.
    InputErrors.raise_if_any(
        [
            *duplicate_ids(case_list, shown_dir),
            *duplicate_labels(label_list, shown_dir),
            *dangling_labels(case_list, label_list, shown_dir),
            *contradictions(case_list, shown_dir),
        ]
    )
    content = Content(canonical_bytes(case_list), canonical_bytes(label_list))
    versions = read_versions(folder, f"{shown_dir}/{VERSIONS_FILE}")
    parent = versions[-1] if versions else None
    prepared = Prepared(
        "",  # the lock is held throughout
        parent,
        restored_index(project, name, parent) if parent else None,
        index_models(case_list, content.cases),
        label_list,
        content.labels,
        content.hash,
    )
    return release_prepared(project, name, prepared, message, changes, now, case_list)


def release_prepared(
    project: Project,
    name: str,
    prepared: Prepared,
    message: str,
    changes: Sequence[str] | None,
    now: datetime | None,
    case_list: list[Case] | None = None,
    *,
    on_progress: StageProgress | None = None,
) -> VersionRecord | None:
    """Refuse dropped labels, write the store, then the files through the journal (under the lock).

    ``case_list`` (every case, as models) lets the full diff stand in when the parent release
    is not in the line store; without it such a release raises :class:`FullPath`.
    ``on_progress`` is told the ``writing`` stage (case bytes written to the store).
    """
    folder = project.dataset_dir(name)
    shown_dir = project.relative(folder)
    parent, new = prepared.parent, prepared.new
    versions = read_versions(folder, f"{shown_dir}/{VERSIONS_FILE}")
    if (versions[-1] if versions else None) != parent:
        raise FullPath
    check_unchanged(project, name)
    if parent is not None and parent.hash == prepared.hash:
        # Re-canonicalise a hand-edited but equal file.
        _commit(project, name, folder, prepared, None)
        return None
    old = _parent_lines(project, name, prepared)
    if old is None and case_list is None:
        raise FullPath
    if old is not None:
        gone = 0  # the parent's labels, each naming a case still present: none dropped
        if not prepared.labels_as_parent:
            gone = dropped_label_count(old[1], set(new.ids), prepared.labels)
        if gone and case_list is None:
            raise FullPath
        if gone and case_list is not None:
            InputErrors.raise_if_any(dropped_labels(old[1], case_list, prepared.labels, shown_dir))
        if changes is None:
            changes = changes_by_line(prepared, old)
    else:
        assert case_list is not None
        full = _parent_content(project, folder, parent, name)
        if full is not None:
            InputErrors.raise_if_any(dropped_labels(full[1], case_list, prepared.labels, shown_dir))
        if changes is None:
            changes = changes_since(parent, full, case_list, prepared.labels)
    created_at = now or datetime.now(UTC)
    counts = counts_of(new.summaries, prepared.label_count)
    guideline_versions = guideline_versions_of(new.summaries)

    def made(digest: str) -> VersionRecord:
        return VersionRecord(
            number=(parent.number + 1) if parent else 1,
            hash=digest,
            parent=parent.hash if parent else None,
            created_at=created_at,
            message=message.strip(),
            changes=list(changes),
            counts=counts,
            guideline_versions=guideline_versions,
        )

    writing = one_stage(on_progress, "writing")
    if new.byte_count() < OVERLAP_MIN_BYTES:
        _store(project, name, prepared, writing)
        record = made(prepared.hash)
        staged = _stage(project, name, folder, prepared, canonical_bytes([*versions, record]))
    else:
        # The store and the staged files are each a full copy of a large tree: written side by
        # side, the store's pack by a forked child where one may be forked (on two threads
        # most of the work held the GIL: at 1M cases their CPU seconds added up to the
        # stage's wall time). A first release's version hash is computed as its
        # cases are staged: the log, staged after them, and the store, once its pack is written,
        # wait for it. The commit point (the journal) comes after both; if the store fails,
        # leaving the block waits for the staging, which without a journal the next command
        # drops.
        hashed: Future[str] | None = Future() if prepared.digest is None else None

        def version_hash() -> str:
            return hashed.result() if hashed is not None else prepared.hash

        with ThreadPoolExecutor(max_workers=1) as pool:
            staging: list[Future[Staged | None]] = []

            def start_staging() -> None:
                staging.append(
                    pool.submit(
                        _stage,
                        project,
                        name,
                        folder,
                        prepared,
                        lambda: [canonical_bytes([*versions, made(version_hash())])],
                        hashed,
                    )
                )

            # The staging starts once the store's pack is under way, in a child forked while
            # this process has no other thread (see `write_version`).
            _store(
                project, name, prepared, writing, hashed.result if hashed else None, start_staging
            )
            if not staging:  # the store had nothing to write
                start_staging()
            staged = staging[0].result()
        prepared.digest = version_hash()
        record = made(prepared.digest)
    _finish(project, name, staged)
    return record


#: Cases of at least this many bytes in all are stored and staged side by side (a thread costs
#: more than it saves below that).
OVERLAP_MIN_BYTES = 16 * 1024 * 1024


def _store(
    project: Project,
    name: str,
    prepared: Prepared,
    on_progress: ProgressCallback | None = None,
    digest_later: Callable[[], str] | None = None,
    beside: Callable[[], object] | None = None,
) -> None:
    """Keep the release in the line store, so old versions materialise without git.

    ``on_progress`` is told the bytes of the case lines read for the store so far, of all the
    release's case bytes (lines the store holds already are not read: the bar then ends short
    of full, and the stage ends). ``digest_later``: the version hash, when another thread is
    computing it (asked for once the pack is written). ``beside``: started once the pack is
    under way (see :func:`~casework.dataset._objects.write_version`).
    """
    new = prepared.new
    digest = "" if digest_later is not None else prepared.hash
    # The pack takes the lines in the order of their files (read front to back, a block at a
    # time), not in the release's order, which the staged files read by position.
    kept = prepared.label_file
    with (
        _lines_counted(new, told(on_progress) if on_progress else None) as line,
        _label_lines(prepared) as (label_lines_, hashes),
    ):
        index = VersionIndex(digest, new.ids, new.hashes, new.summaries, hashes)
        order = (
            new.file_order() if isinstance(new.source, OnDisk) else range(len(new.ids)),
            kept.file_order() if isinstance(kept, LabelLines) else range(len(hashes)),
        )
        write_version(
            project.state_dir,
            index,
            line,
            label_lines_,
            prepared.parent_index,
            tmp_dir(project, name),
            digest_later,
            order,
            beside,
            on_progress,
        )
    if on_progress is not None:
        total = new.byte_count()
        on_progress(total, total)


@contextlib.contextmanager
def _lines_counted(
    new: NewCases, on_progress: ProgressCallback | None
) -> Iterator[Callable[[int], bytes | memoryview]]:
    """:meth:`NewCases.lines`, telling ``on_progress`` the bytes given every few megabytes."""
    with new.lines() as line:
        if on_progress is None:
            yield line
            return
        total = new.byte_count()
        given = told = 0

        def counted(i: int) -> bytes | memoryview:
            nonlocal given, told
            out = line(i)
            given += len(out) + 1
            if given - told >= PROGRESS_EVERY:
                told = given
                on_progress(min(given, total), total)
            return out

        yield counted


@contextlib.contextmanager
def _label_lines(
    prepared: Prepared,
) -> Iterator[tuple[Sequence[bytes | memoryview], list[bytes]]]:
    """The labels file's lines as the release writes them, and their hashes.

    A labels file read from disk is read as its lines are asked for, each checked against
    its hash (:class:`~casework.dataset._lines.Changed` when not): kept as it stands, front to
    back; sorted, by position.
    """
    kept = prepared.label_file
    if kept is None:
        views = _label_views(prepared.label_bytes)
        yield views, [line_hash(x) for x in views]
    elif isinstance(kept, LabelFile):
        with kept.source.path.open("rb") as handle:
            yield _LinesInOrder(handle, kept.hashes, str(kept.source.path)), kept.hashes
    else:
        with kept.lines() as line:
            yield _Indexed(line, len(kept.hashes)), kept.hashes


class _Indexed(Sequence[bytes | memoryview]):
    """Lines given by a function of their position, as a sequence."""

    def __init__(self, line: Callable[[int], bytes | memoryview], count: int) -> None:
        self._line = line
        self._count = count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> bytes | memoryview: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[bytes | memoryview]: ...
    def __getitem__(self, i: int | slice) -> bytes | memoryview | Sequence[bytes | memoryview]:
        if isinstance(i, slice) or not 0 <= i < self._count:
            raise IndexError(i)
        return self._line(i)


class _LinesInOrder(Sequence[bytes]):
    """A newline-ended file's lines read front to back as asked for (``i`` never decreasing)."""

    def __init__(self, handle: BinaryIO, hashes: list[bytes], shown: str) -> None:
        self._handle = handle
        self._hashes = hashes
        self._shown = shown
        self._block = b""
        self._at = 0  # offset in the block of line ``self._next``
        self._next = 0

    def __len__(self) -> int:
        return len(self._hashes)

    @overload
    def __getitem__(self, i: int) -> bytes: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[bytes]: ...
    def __getitem__(self, i: int | slice) -> bytes | Sequence[bytes]:
        if isinstance(i, slice) or not 0 <= i < len(self._hashes) or i < self._next:
            raise IndexError(i)  # only ever asked in order
        while True:
            line = self._line()
            self._next += 1
            if line_hash(line) != self._hashes[self._next - 1]:
                raise Changed(self._shown)
            if self._next > i:
                return line

    def _line(self) -> bytes:
        while (stop := self._block.find(b"\n", self._at)) < 0:
            more = self._handle.read(_READ)
            if not more:
                raise Changed(self._shown)  # shorter than validated
            self._block = self._block[self._at :] + more
            self._at = 0
        line = self._block[self._at : stop]
        self._at = stop + 1
        return line


_READ = 1 << 22  # bytes of a kept labels file read at a time


def _label_views(data: bytes) -> list[memoryview]:
    """The lines of a canonical labels file as views (not copies: 88 MB at 200k labels)."""
    view = memoryview(data)
    return [view[o : o + n] for o, n in split_lines(data)]


def _parent_lines(
    project: Project, name: str, prepared: Prepared
) -> tuple[dict[str, Case], list[LabelRecord]] | None:
    """The parent's cases whose lines changed, and its raw labels, from the line store.

    ``({}, [])`` for a first release; ``None`` when the store cannot give them.
    """
    parent, index = prepared.parent, prepared.parent_index
    if parent is None:
        return {}, []
    if index is None:
        return None
    shown_dir = project.relative(project.dataset_dir(name))
    before = dict(zip(index.ids, index.hashes, strict=True))
    after = dict(zip(prepared.new.ids, prepared.new.hashes, strict=True))
    wanted = [before[i] for i in changed_ids(before, after)]
    label_hashes = [] if prepared.labels_as_parent else index.label_hashes  # known: unchanged
    lines = fetch_lines(project.state_dir, index, [*wanted, *label_hashes])
    if lines is None:
        return None
    cases = parse_lines([lines[h] for h in wanted], f"{shown_dir}/{CASES_FILE}")
    labels: list[LabelRecord] | None = []
    if not prepared.labels_as_parent:
        label_bytes = b"".join(lines[h] + b"\n" for h in label_hashes)
        labels = labels_of(label_bytes, f"{shown_dir}/{LABELS_FILE}")
    if cases is None or labels is None:
        return None
    return {c.id: c for c in cases}, labels


def _existing_labels(folder: Path, shown_dir: str) -> list[LabelRecord]:
    return sorted(
        read_records(
            folder / LABELS_FILE, LabelRecord, shown=f"{shown_dir}/{LABELS_FILE}", missing_ok=True
        ).records,
        key=label_sort_key,
    )


def _same_bytes(path: Path, data: bytes) -> bool:
    """Whether the file holds exactly ``data`` (compared chunk by chunk)."""
    try:
        if path.stat().st_size != len(data):
            return False
    except FileNotFoundError:
        return False
    return _same_pieces(path, (data,))


def _holds_cases(path: Path, new: NewCases) -> bool:
    """Whether the file holds exactly the cases as the release writes them.

    When they are that very file as it was indexed, one hashing read of it decides (comparing
    it with itself read back took two reads).
    """
    source = new.source
    if new.canonical and isinstance(source, OnDisk) and source.path == path and source.size >= 0:
        return _holds_file(path, source)
    return _same_pieces(path, new.chunks())


def _holds_file(path: Path, source: OnDisk) -> bool:
    """Whether the file holds the bytes ``source`` was indexed with (one hashing read)."""
    try:
        if path.stat().st_size != source.size:
            return False
    except FileNotFoundError:
        return False
    seen = xxhash.xxh3_128()
    for chunk in read_chunks(path):
        seen.update(chunk)
    return seen.digest() == source.digest


def _same_pieces(path: Path, pieces: Iterable[bytes | memoryview]) -> bool:
    """Whether the file holds exactly the bytes ``pieces`` join to (neither is held whole)."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        return False
    with handle:
        for piece in pieces:
            view = memoryview(piece)
            for at in range(0, len(view), _COMPARED):
                part = view[at : at + _COMPARED]
                if handle.read(len(part)) != part:
                    return False
        return handle.read(1) == b""


_COMPARED = 1 << 24  # bytes compared at a time


def _commit(
    project: Project, name: str, folder: Path, prepared: Prepared, versions: bytes | None
) -> None:
    """Write the release's files all-or-nothing through the journal (files already equal: kept)."""
    _finish(project, name, _stage(project, name, folder, prepared, versions))


def _finish(project: Project, name: str, staged: Staged | None) -> None:
    """Commit what :func:`_stage` staged (nothing when it staged nothing).

    The lock notes the files as written: those staged by the digests the journal took of
    them as they were staged (at 1M cases a pass over 6.5 GB saved), the others read.
    """
    if staged is not None:
        finish(project, staged)
        folder = project.dataset_dir(name).resolve()
        written = written_digests(project, staged)
        note_written(project, name, {p.name: d for p, d in written.items() if p.parent == folder})


def _stage(
    project: Project,
    name: str,
    folder: Path,
    prepared: Prepared,
    versions: bytes | Callable[[], Iterable[bytes]] | None,
    hashed: Future[str] | None = None,
) -> Staged | None:
    """Stage the release's files that differ from the tree (``None``: none does).

    Cases that are not the file as it stands are streamed to the journal's staging folder piece
    by piece, never joined in memory. ``versions``: the release log, or a function giving it
    when it is staged (a new release's log, which differs from the file's by its new record).
    ``hashed``, when given, gets the version hash (computed as the cases are staged) or the
    error that stopped it.
    """
    try:
        return _stage_files(project, name, folder, prepared, versions, hashed)
    except BaseException as exc:
        if hashed is not None and not hashed.done():  # the store thread waits for it
            hashed.set_exception(exc)
        raise


def _stage_files(
    project: Project,
    name: str,
    folder: Path,
    prepared: Prepared,
    versions: bytes | Callable[[], Iterable[bytes]] | None,
    hashed: Future[str] | None,
) -> Staged | None:
    new = prepared.new
    files: dict[Path, FileContent] = {}
    hashing = None
    kept = prepared.label_file
    if not _holds_cases(folder / CASES_FILE, new):
        if hashed is None:
            files[folder / CASES_FILE] = new.chunks
        else:
            hashing = _StagedHash(prepared, hashed)
            files[folder / CASES_FILE] = hashing.cases
            if hashing.sorted_labels is not None:
                files[folder / LABELS_FILE] = hashing.labels
    elif hashed is not None:  # the file stays: hashed here, before the log that needs it
        hashed.set_result(pieces_hash(new.chunks(), prepared.label_pieces()))
    labels = prepared.label_bytes
    if isinstance(kept, LabelFile):
        if not _holds_file(folder / LABELS_FILE, kept.source):
            files[folder / LABELS_FILE] = kept.source.whole
    elif kept is not None:  # sorted: never the file as it stands
        files.setdefault(folder / LABELS_FILE, kept.pieces)
    elif (labels or (folder / LABELS_FILE).exists()) and not _same_bytes(
        folder / LABELS_FILE, labels
    ):
        files[folder / LABELS_FILE] = labels
    if callable(versions) or (
        versions is not None and not _same_bytes(folder / VERSIONS_FILE, versions)
    ):
        files[folder / VERSIONS_FILE] = versions
    try:
        return stage(project, name, files, {}) if files else None
    finally:
        if hashing is not None:
            hashing.close()


class _StagedHash:
    """The version hash of a release, taken of its files as they are staged.

    :func:`~casework.dataset._journal.stage` writes the cases (:meth:`cases`), then a labels file
    staged sorted (:meth:`labels`), in that order on one thread, each piece hashed as it is
    written: the sorted labels' lines are read once for both. Other labels are read for the
    hash after the cases. ``hashed`` gets the hash at the end; :meth:`close` stops the hashing
    thread when staging ended before it.
    """

    def __init__(self, prepared: Prepared, hashed: Future[str]) -> None:
        """Hash ``prepared``'s files into ``hashed`` as they are staged."""
        self._prepared = prepared
        self._hashed = hashed
        kept = prepared.label_file
        self.sorted_labels = kept if isinstance(kept, LabelLines) else None
        """The labels file, when it is staged sorted (and hashed by :meth:`labels`)."""
        self._digest: HashingThread | None = None

    def cases(self) -> Iterator[bytes | memoryview]:
        """The cases' pieces, hashed as given (then the labels' when they are not staged)."""
        digest = self._digest = HashingThread(CASES_FILE.encode() + b"\0")
        for piece in self._prepared.new.chunks():
            digest.update(piece)
            yield piece
        digest.update(LABELS_FILE.encode() + b"\0")
        if self.sorted_labels is None:
            for label_piece in self._prepared.label_pieces():
                digest.update(label_piece)
            self._hashed.set_result(digest.hexdigest())

    def labels(self) -> Iterator[bytes]:
        """The sorted labels' pieces, hashed as given after the cases'."""
        digest, kept = self._digest, self.sorted_labels
        if digest is None or kept is None:
            raise RuntimeError("the labels were staged before the cases")
        for piece in kept.pieces():
            digest.update(piece)
            yield piece
        self._hashed.set_result(digest.hexdigest())

    def close(self) -> None:
        """Stop the hashing thread (done already when the hash was taken)."""
        if self._digest is not None:
            self._digest.close()


def _parent_content(
    project: Project, folder: Path, parent: VersionRecord | None, name: str
) -> tuple[list[Case], list[LabelRecord]] | None:
    """The parent release's cases and raw labels (``None``: first release, or not recoverable)."""
    if parent is None:
        return None
    try:
        return _parse(
            materialise(folder, project.state_dir, parent, name), project.relative(folder)
        )
    except CaseworkError:  # the parent may be unrecoverable; the changelog then says so
        return None
