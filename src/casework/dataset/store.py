"""Loading datasets (current or any released version) and releasing new versions.

Entry points: :func:`load_dataset` (``name`` or ``name@version``) and :func:`release`.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import chain
from operator import attrgetter
from pathlib import Path

import xxhash

from casework.dataset._hashing import HashingThread
from casework.dataset._incremental import (
    NewCases,
    counts_of,
    guideline_versions_of,
    index_lines,
    index_models,
    label_sort_key,
    labels_of,
    parent_label_lines,
    parse_lines,
    split_lines,
)
from casework.dataset._journal import FileContent, Staged, finish, stage, tmp_dir
from casework.dataset._lines import Changed, OnDisk, scan_file
from casework.dataset._objects import VersionIndex, fetch_lines, line_hash, write_version
from casework.dataset._restore import restored_index
from casework.dataset.check import contradictory_tools
from casework.dataset.diff import changed_ids, diff_cases, diff_indexed
from casework.dataset.jsonl import byte_lines, canonical_bytes, collector_paused, read_records
from casework.dataset.lock import (
    check_unchanged,
    dataset_lock,
    dataset_versions,
    fingerprint_finish,
    fingerprint_start,
    held_fingerprint,
    note_written,
    settle,
)
from casework.dataset.lookup import index_tree
from casework.dataset.stream import (
    PROGRESS_EVERY,
    ProgressCallback,
    StageProgress,
    dangling_label_problems,
    duplicate_label_problems,
    one_stage,
    parse_content,
    parse_ref,
    scan_dataset,
)
from casework.dataset.versions import (
    CASES_FILE,
    LABELS_FILE,
    VERSIONS_FILE,
    Content,
    files_hash,
    files_hashes,
    materialise,
    pieces_hash,
    read_chunks,
    read_versions,
)
from casework.errors import (
    CaseworkError,
    InputErrors,
    Problem,
    ReleaseConflict,
    UsageError,
)
from casework.project import Project
from casework.schema import Case, LabelRecord, VersionRecord

__all__ = [
    "Dataset",
    "dataset_versions",
    "label_sort_key",
    "load_dataset",
    "parse_ref",
    "release",
    "release_tree",
    "release_without",
    "select_cases",
]


@dataclass(frozen=True)
class Dataset:
    """A dataset's content at one version (or as it stands in the working tree)."""

    name: str
    path: Path
    cases: list[Case]
    labels: list[LabelRecord]
    hash: str
    version: VersionRecord | None
    """The release this content is, or ``None`` when the working tree holds unreleased changes."""

    def case(self, case_id: str) -> Case | None:
        """The case with this id, if present."""
        for c in self.cases:
            if c.id == case_id:
                return c
        return None

    @property
    def ref(self) -> str:
        """``name@N`` for a release, ``name@working`` for unreleased content."""
        return f"{self.name}@{self.version.number}" if self.version else f"{self.name}@working"


def _dangling_labels(
    cases: Sequence[Case], labels: Sequence[LabelRecord], shown_dir: str
) -> list[Problem]:
    """Raw labels naming no case (located by their line in canonical order)."""
    return dangling_label_problems({c.id for c in cases}, labels, shown_dir)


def _label_key(record: LabelRecord) -> tuple[str, str, str]:
    """Identity of a raw label: one per case, labeller and guideline version."""
    return (record.case_id, record.labeller, record.guideline_version)


def _label_identity(record: LabelRecord) -> str:
    return record.model_dump_json()


def _duplicate_labels(labels: Sequence[LabelRecord], shown_dir: str) -> list[Problem]:
    """Two raw labels by one labeller of one case under one guideline (agreement needs one)."""
    return duplicate_label_problems(labels, shown_dir)


def _contradictions(cases: Sequence[Case], shown_dir: str) -> list[Problem]:
    """Cases whose label requires a call that it also forbids (e.g. after a many-to-one rename)."""
    return [
        Problem(
            f"{shown_dir}/{CASES_FILE}",
            line,
            "label.forbidden_tools",
            "the case requires and forbids the same tool",
            tool,
            has_got=True,
        )
        for line, case in enumerate(cases, start=1)
        if case.label is not None
        for tool in contradictory_tools(case.label)
    ]


def _dropped_labels(
    old: Sequence[LabelRecord],
    cases: Sequence[Case],
    labels: Sequence[LabelRecord],
    shown_dir: str,
) -> list[Problem]:
    """Raw labels of the previous release that vanish although their case stays."""
    kept = {c.id for c in cases}
    now = {_label_key(r) for r in labels}
    gone = [r for r in old if r.case_id in kept and _label_key(r) not in now]
    if not gone:
        return []
    return [
        Problem(
            f"{shown_dir}/{LABELS_FILE}",
            None,
            None,
            f"{len(gone)} raw label(s) of the previous release are missing although their cases "
            "remain (raw labels are kept for agreement); restore the file (e.g. `git checkout`) "
            "or remove those cases",
            ", ".join(sorted({r.case_id for r in gone})[:5]),
            has_got=True,
        )
    ]


def _duplicate_ids(cases: Sequence[Case], shown_dir: str) -> list[Problem]:
    """Cases sharing an id (located by their line in canonical, id-sorted order)."""
    first: dict[str, int] = {}
    problems = []
    for line, case in enumerate(cases, start=1):
        if case.id in first:
            problems.append(
                Problem(
                    f"{shown_dir}/{CASES_FILE}",
                    line,
                    "id",
                    f"duplicate id, first on line {first[case.id]}",
                    case.id,
                    has_got=True,
                )
            )
        else:
            first[case.id] = line
    return problems


def _parse(content: Content, shown_dir: str) -> tuple[list[Case], list[LabelRecord]]:
    """Parse both files of a version, reporting every bad line of either, and dangling labels."""
    cases: list[Case] = []
    _, labels = parse_content(byte_lines(content.cases), content.labels, shown_dir, cases.append)
    return cases, labels


def load_dataset(
    project: Project, ref: str, *, on_progress: ProgressCallback | None = None
) -> Dataset:
    """Load ``name`` (the working tree) or ``name@version`` (a release, materialised if needed).

    The cases file is read as a stream and each case validated once (see
    :func:`casework.dataset.stream.scan_dataset`); only the models are held.

    Raises:
        InputErrors: A file has bad lines (all reported, capped).
        VersionNotFound: The version is unknown or its content cannot be recovered.
        UsageError: The dataset does not exist.
    """
    cases: list[Case] = []
    scan = scan_dataset(project, ref, cases.append, on_progress=on_progress)
    return Dataset(scan.name, scan.path, cases, scan.labels, scan.hash, scan.version)


def _read_optional(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""


def release(
    project: Project,
    name: str,
    cases: Iterable[Case] | None,
    message: str,
    *,
    changes: Sequence[str] | None = None,
    labels: Iterable[LabelRecord] | None = None,
    now: datetime | None = None,
    base: str | None = None,
    without: AbstractSet[str] = frozenset(),
    on_progress: StageProgress | None = None,
) -> VersionRecord | None:
    """Release a new version of dataset ``name``: the one way anything is released.

    ``cases`` is the full content of the new version, or ``None`` for the working tree as it
    stands (`casework dataset release`), less the cases ``without`` names (`casework dataset
    forget` and `expire`). The engine picks how by cost: a working tree's lines are hashed
    once and those the latest release holds are taken from its line store unparsed, so only
    the lines it lacks are validated (and diffed); when that cannot decide (no release yet,
    the store lacks a line, a bad line), every case is loaded and released in full, which
    reports whatever is wrong by the full path.

    The release holds the dataset's lock (:func:`casework.dataset.dataset_lock`); callers that
    read the dataset to compute ``cases`` hold it from that read on, and the release refuses
    when the files changed since the lock was taken. All files are written through one journal,
    so a crash leaves the previous release or (completed by the next command) this one.

    Args:
        project: The project.
        name: Dataset name (its folder is created if new).
        cases: The full content of the new version; ``None`` releases the working tree.
        message: Why this version exists.
        changes: Changelog lines; computed from the diff against the previous release when omitted.
        labels: Raw labels; ``None`` keeps `labels.jsonl` as it is. Only with ``cases``.
        now: Release time (injected by tests).
        base: Hash of the working tree the caller computed ``cases`` from, when it read the
            dataset without holding the lock (a long computation): the release refuses when
            the working tree no longer has it. Only with ``cases``.
        without: Ids of cases the working tree's release leaves out, with their raw labels
            (ids the tree lacks are ignored). Only when ``cases`` is ``None``.
        on_progress: Told each stage of a working tree's release as it goes: ``reading`` (the
            cases file's bytes hashed), ``validating`` (bytes of the lines the latest release
            lacks, and of a first release's labels), ``writing`` (bytes of cases written to
            the version store).

    Returns:
        The new release record, or ``None`` when the content equals the latest release
        (nothing is written then).

    Raises:
        UsageError: Empty message, unknown dataset (working tree), or parameters that do not
            go together (``without`` with ``cases``; ``labels`` or ``base`` without them).
        InputErrors: Bad lines, duplicate case ids or raw labels, labels naming unknown cases,
            a case that requires and forbids one tool, raw labels of kept cases dropped, or a
            broken release log.
        ReleaseConflict: Another process holds the lock, or the files changed underneath.
    """
    if cases is None:
        for param, given in (("labels", labels), ("base", base)):
            if given is not None:
                raise UsageError(
                    f"{param} goes with cases: a working tree's release takes its own.",
                    param=param,
                )
        if without:
            return _release_without(project, name, without, message, changes=changes, now=now)
        return _release_tree(project, name, message, changes, now, on_progress).record
    if without:
        raise UsageError(
            "without goes with the working tree (cases=None): leave the cases out of cases.",
            param="without",
        )
    _require_message(message)
    with dataset_lock(project, name):
        if base is not None:
            _check_base(project, name, base)
        return _release_locked(project, name, cases, message, changes, labels, now)


def _require_message(message: str) -> None:
    if not message.strip():
        raise UsageError("a message is required: say why this version exists.", param="message")


def release_tree(
    project: Project, name: str, message: str, *, on_progress: StageProgress | None = None
) -> _TreeRelease:
    """Release the working tree of ``name`` as it is: ``release(project, name, None, message)``.

    Returns:
        The version hash released (or found unchanged) and the new release (``record``,
        ``None`` when unchanged).

    Raises:
        InputErrors: Bad lines, or contradictions a release refuses (see :func:`release`).
        UsageError: Unknown dataset or empty message.
        ReleaseConflict: Another process holds the lock beyond the timeout.
    """
    return _release_tree(project, name, message, None, None, on_progress)


def release_without(
    project: Project,
    name: str,
    drop: AbstractSet[str],
    message: str,
    *,
    changes: Sequence[str],
    now: datetime | None = None,
) -> VersionRecord | None:
    """Release the working tree of ``name`` less ``drop``: ``release(…, None, …, without=drop)``.

    Raises:
        InputErrors: Bad lines, or what else :func:`release` refuses.
        UsageError: Empty message.
        ReleaseConflict: Another process holds the lock, or the files changed underneath.
    """
    return release(project, name, None, message, without=drop, changes=changes, now=now)


@dataclass(frozen=True)
class _TreeRelease:
    """What a release of a dataset's working tree did."""

    hash: str
    """Version hash of the content released (or found unchanged)."""
    record: VersionRecord | None
    """The new release, ``None`` when the tree equals the latest release."""


def _release_tree(
    project: Project,
    name: str,
    message: str,
    changes: Sequence[str] | None,
    now: datetime | None,
    on_progress: StageProgress | None,
) -> _TreeRelease:
    """The working tree as it is, validated only where the latest release lacks its lines.

    The tree is read and validated before the lock is taken (bad input leaves no trace), and
    read again under the lock only if it changed meanwhile.
    """
    # Cases, labels and their rows hold no reference cycles: with the collector running, its
    # full passes over the growing heap took 28 of 205 s of a first release of 100k cases.
    with collector_paused():
        return _release_tree_paused(project, name, message, changes, now, on_progress)


def _release_tree_paused(
    project: Project,
    name: str,
    message: str,
    changes: Sequence[str] | None,
    now: datetime | None,
    on_progress: StageProgress | None,
) -> _TreeRelease:
    folder = project.dataset_dir(name)
    settle(project, name)
    if not (folder / CASES_FILE).exists():
        return _release_tree_fully(project, name, message, changes, now, on_progress)
    prepared = _prepare_tree(project, name, on_progress)
    if isinstance(prepared, VersionRecord):
        _require_message(message)
        return _TreeRelease(prepared.hash, None)
    if prepared is None:
        return _release_tree_fully(project, name, message, changes, now, on_progress)
    _require_message(message)
    with dataset_lock(project, name):
        if held_fingerprint(project, name) != prepared.fingerprint:
            # Changed meanwhile: read it again, locked.
            again = _prepare_tree(project, name, on_progress)
            if not isinstance(again, _Prepared):
                return _release_tree_fully(project, name, message, changes, now, on_progress)
            prepared = again
        try:
            record = _release_prepared(
                project, name, prepared, message, changes, now, on_progress=on_progress
            )
        except _FullPath:
            return _release_tree_fully(project, name, message, changes, now, on_progress)
        except Changed:
            raise _changed_underneath(project, name) from None
    return _TreeRelease(record.hash if record else prepared.hash, record)


def _release_without(
    project: Project,
    name: str,
    drop: AbstractSet[str],
    message: str,
    *,
    changes: Sequence[str] | None,
    now: datetime | None,
) -> VersionRecord | None:
    """The working tree less ``drop``: the lines the latest release holds are taken unparsed.

    When that cannot decide (no release yet, the store lacks it, the labels differ from the
    release's, a bad line), every case is loaded and released in full.
    """
    _require_message(message)
    with collector_paused(), dataset_lock(project, name):
        prepared = _prepare_without(project, name, drop)
        if prepared is not None:
            try:
                return _release_prepared(project, name, prepared, message, changes, now)
            except _FullPath:
                pass
            except Changed:
                raise _changed_underneath(project, name) from None
        current = load_dataset(project, name)
        kept = [c for c in current.cases if c.id not in drop]
        labels = [r for r in current.labels if r.case_id not in drop]
        return release(project, name, kept, message, changes=changes, labels=labels, now=now)


def _prepare_without(project: Project, name: str, drop: AbstractSet[str]) -> _Prepared | None:
    """The tree less ``drop`` as a release writes it (``None``: the full path decides)."""
    folder = project.dataset_dir(name)
    versions = read_versions(folder, f"{project.relative(folder)}/{VERSIONS_FILE}")
    tree = index_tree(project, name, versions, drop)
    if tree is None:
        return None
    label_bytes = b"".join(line + b"\n" for line in tree.label_lines)
    digest = pieces_hash(tree.cases.chunks(), label_bytes)
    return _Prepared(
        "",
        tree.parent,
        tree.index,
        tree.cases,
        [],
        label_bytes,
        digest,
        True,
        len(tree.label_lines),
    )


def _release_tree_fully(
    project: Project,
    name: str,
    message: str,
    changes: Sequence[str] | None,
    now: datetime | None,
    on_progress: StageProgress | None,
) -> _TreeRelease:
    """The full path: parse and validate every case (reports problems as it always has)."""
    reading = one_stage(on_progress, "validating")
    current = load_dataset(project, name, on_progress=reading)
    with dataset_lock(project, name):
        if _working_hash(project, name) != current.hash:
            current = load_dataset(project, name, on_progress=reading)
        record = release(project, name, current.cases, message, changes=changes, now=now)
    return _TreeRelease(record.hash if record else current.hash, record)


def _changed_underneath(project: Project, name: str) -> ReleaseConflict:
    return ReleaseConflict(
        f"{project.relative(project.dataset_dir(name))}: {CASES_FILE} changed while this "
        "command was releasing it (written by something that does not take casework's "
        "release lock); nothing was written. Run the command again."
    )


class _FullPath(Exception):
    """The incremental path cannot decide (the store lacks a line): take the full path."""


@dataclass
class _Prepared:
    """A working tree validated against the latest release's stored lines."""

    fingerprint: str
    """The dataset's files as read (see :func:`casework.dataset.lock.fingerprint_of`)."""
    parent: VersionRecord | None
    parent_index: VersionIndex | None
    new: NewCases
    """The cases as the release writes them."""
    labels: list[LabelRecord]
    label_bytes: bytes
    """The labels file as the release writes it."""
    digest: str | None
    """The version hash (:attr:`hash`), ``None`` until it is first asked for."""
    labels_as_parent: bool = False
    """The labels file is the parent release's, line for line (less the lines of cases removed
    with :func:`release_without`): no kept case's label changed; ``labels`` is left empty."""
    label_total: int | None = None
    """How many raw labels there are, when ``labels`` is left empty (a first release keeps
    only compact rows of them, so it leaves them empty too)."""

    @property
    def label_count(self) -> int:
        """How many raw labels the release holds."""
        return len(self.labels) if self.label_total is None else self.label_total

    @property
    def hash(self) -> str:
        """The version hash of the cases and labels as the release writes them.

        Computed when first asked for: a large first release computes it instead as it stages
        its cases (see :func:`_release_prepared`), which spared a pass of 0.6 s at 100k cases.
        """
        if self.digest is None:
            self.digest = pieces_hash(self.new.chunks(), self.label_bytes)
        return self.digest


def _prepare_tree(
    project: Project, name: str, on_progress: StageProgress | None = None
) -> _Prepared | VersionRecord | None:
    """The tree as a release would write it; the latest release if equal; ``None``: full path."""
    try:
        return _prepare_tree_read(project, name, on_progress)
    except Changed:
        return None  # the cases file changed while read: the full path reads it under the lock


def _prepare_tree_read(
    project: Project, name: str, on_progress: StageProgress | None
) -> _Prepared | VersionRecord | None:
    folder = project.dataset_dir(name)
    shown_dir = project.relative(folder)
    log = _read_or_none(folder / VERSIONS_FILE)
    versions = read_versions(folder, f"{shown_dir}/{VERSIONS_FILE}")
    parent = versions[-1] if versions else None
    tree = files_hashes(folder) if parent is not None else None  # a first release: no use
    if parent is not None and tree is not None and parent.hash == tree[0]:
        return parent
    label_data = _read_or_none(folder / LABELS_FILE)
    # The cases file is hashed line by line as read, not held: its lines are read back by
    # position when written, each checked against its hash.
    seen = fingerprint_start()
    reading = one_stage(on_progress, "reading")
    chunk_seen: Callable[[bytes], object] = seen.update
    if reading is not None:
        chunk_seen = _counting(seen.update, reading, _size(folder / CASES_FILE))
    try:
        source, spans, hashes, ended = scan_file(folder / CASES_FILE, chunk_seen)
    except FileNotFoundError:
        return None
    if log != _read_or_none(folder / VERSIONS_FILE):
        return None  # released meanwhile: the full path reads it under the lock
    fingerprint = fingerprint_finish(seen, label_data, log)
    label_data = label_data or b""
    parent_index = None
    if parent is not None:
        # A fresh clone's store lacks the parent: put it back (validated once), not the full path.
        restoring = one_stage(on_progress, f"restoring release {parent.number} to the local store")
        known_tree = tree[0] if tree is not None else None
        parent_index = restored_index(project, name, parent, restoring, tree=known_tree)
        if parent_index is None:
            return None
    labels_here = None if parent is not None else (label_data, f"{shown_dir}/{LABELS_FILE}")
    new = index_lines(
        source,
        spans,
        hashes,
        ended,
        parent_index,
        f"{shown_dir}/{CASES_FILE}",
        labels_here,
        one_stage(on_progress, "validating"),
    )
    if new is None:
        return None
    if new.labels is not None:
        return _prepared_first(fingerprint, new, label_data)
    if parent_index is not None:
        same = parent_label_lines(label_data, parent_index, set(new.ids))
        if same is not None:
            digest = _tree_hash(tree, new, label_data)
            return _Prepared(
                fingerprint, parent, parent_index, new, [], label_data, digest, True, len(same)
            )
    parsed = labels_of(label_data, f"{shown_dir}/{LABELS_FILE}")
    if parsed is None:
        return None
    labels = sorted(parsed, key=label_sort_key)
    ids = set(new.ids)
    if _duplicate_labels(labels, shown_dir) or any(r.case_id not in ids for r in labels):
        return None
    label_bytes = canonical_bytes(labels)
    digest = _tree_hash(tree, new, label_bytes)
    return _Prepared(fingerprint, parent, parent_index, new, labels, label_bytes, digest)


def _prepared_first(fingerprint: str, new: NewCases, label_data: bytes) -> _Prepared | None:
    """A first release from compact label rows (validated beside the cases; no models kept).

    ``None`` (the full path reports it) when two labels share a key or one names no case.
    """
    assert new.labels is not None
    rows = new.labels
    keys = {r.key for r in rows}
    ids = set(new.ids)
    if len(keys) != len(rows) or any(k[0] not in ids for k in keys):
        return None
    ordered = sorted(rows, key=attrgetter("sort_key"))  # stable, as sorting the models was
    view = memoryview(label_data)
    lines = (
        view[r.span[0] : r.span[0] + r.span[1]] if r.fixed is None else r.fixed for r in ordered
    )
    # One copy of the 88 MB of 200k labels, not two: the empty last piece ends the last line.
    label_bytes = b"\n".join(chain(lines, (b"",))) if ordered else b""
    new.labels = None  # the rows are done with: free them before the store is written
    if label_bytes == label_data:
        label_bytes = label_data  # one copy, not two
    # No release exists to compare the hash with: it is computed as the files are written.
    return _Prepared(fingerprint, None, None, new, [], label_bytes, None, label_total=len(rows))


def _tree_hash(tree: tuple[str, bytes, bytes] | None, new: NewCases, label_bytes: bytes) -> str:
    """The version hash of the cases and labels as a release writes them.

    ``tree`` is :func:`~casework.dataset.versions.files_hashes` of the files as first read:
    when the release writes them as they are (same bytes, told by their XXH3 digests), their
    hash is the one already computed and the 563 MB of a 100k-case file is not hashed again.
    """
    source = new.source
    if (
        tree is not None
        and new.canonical
        and isinstance(source, OnDisk)
        and source.digest == tree[1]
        and xxhash.xxh3_128_digest(label_bytes) == tree[2]
    ):
        return tree[0]
    return pieces_hash(new.chunks(), label_bytes)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _counting(
    update: Callable[[bytes], object], on_progress: ProgressCallback, total: int
) -> Callable[[bytes], None]:
    """``update``, also telling ``on_progress`` the bytes seen so far (of ``total``)."""
    seen = 0

    def chunk_seen(chunk: bytes) -> None:
        nonlocal seen
        update(chunk)
        seen += len(chunk)
        on_progress(seen, max(total, seen))

    return chunk_seen


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def _working_hash(project: Project, name: str) -> str:
    return files_hash(project.dataset_dir(name))


def _check_base(project: Project, name: str, base: str) -> None:
    folder = project.dataset_dir(name)
    if _working_hash(project, name) != base:
        raise ReleaseConflict(
            f"{project.relative(folder)}: changed since this command read it (another command "
            "released it meanwhile); nothing was written. Run the command again."
        )


def _release_locked(
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
            *_duplicate_ids(case_list, shown_dir),
            *_duplicate_labels(label_list, shown_dir),
            *_dangling_labels(case_list, label_list, shown_dir),
            *_contradictions(case_list, shown_dir),
        ]
    )
    content = Content(canonical_bytes(case_list), canonical_bytes(label_list))
    versions = read_versions(folder, f"{shown_dir}/{VERSIONS_FILE}")
    parent = versions[-1] if versions else None
    prepared = _Prepared(
        "",  # the lock is held throughout
        parent,
        restored_index(project, name, parent) if parent else None,
        index_models(case_list, content.cases),
        label_list,
        content.labels,
        content.hash,
    )
    return _release_prepared(project, name, prepared, message, changes, now, case_list)


def _release_prepared(
    project: Project,
    name: str,
    prepared: _Prepared,
    message: str,
    changes: Sequence[str] | None,
    now: datetime | None,
    case_list: list[Case] | None = None,
    *,
    on_progress: StageProgress | None = None,
) -> VersionRecord | None:
    """Refuse dropped labels, write the store, then the files through the journal (under the lock).

    ``case_list`` (every case, as models) lets the full diff stand in when the parent release
    is not in the line store; without it such a release raises :class:`_FullPath`.
    ``on_progress`` is told the ``writing`` stage (case bytes written to the store).
    """
    folder = project.dataset_dir(name)
    shown_dir = project.relative(folder)
    parent, new = prepared.parent, prepared.new
    versions = read_versions(folder, f"{shown_dir}/{VERSIONS_FILE}")
    if (versions[-1] if versions else None) != parent:
        raise _FullPath
    check_unchanged(project, name)
    if parent is not None and parent.hash == prepared.hash:
        # Re-canonicalise a hand-edited but equal file.
        _commit(project, name, folder, prepared, None)
        return None
    old = _parent_lines(project, name, prepared)
    if old is None and case_list is None:
        raise _FullPath
    if old is not None:
        gone = 0  # the parent's labels, each naming a case still present: none dropped
        if not prepared.labels_as_parent:
            gone = _dropped_label_count(old[1], set(new.ids), prepared.labels)
        if gone and case_list is None:
            raise _FullPath
        if gone and case_list is not None:
            InputErrors.raise_if_any(_dropped_labels(old[1], case_list, prepared.labels, shown_dir))
        if changes is None:
            changes = _changes_by_line(prepared, old)
    else:
        assert case_list is not None
        full = _parent_content(project, folder, parent, name)
        if full is not None:
            InputErrors.raise_if_any(
                _dropped_labels(full[1], case_list, prepared.labels, shown_dir)
            )
        if changes is None:
            changes = _changes_since(parent, full, case_list, prepared.labels)
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
        # The store and the staged files are each a full copy of a large tree, written, hashed
        # and synced mostly outside the GIL: written side by side (at 100k cases about 8 s one
        # after the other, 6 s side by side). A first release's version hash is computed as its
        # cases are staged: the log, staged after them, and the store, once its pack is written,
        # wait for it. The commit point (the journal) comes after both; if the store fails,
        # leaving the block waits for the staging, which without a journal the next command
        # drops.
        hashed: Future[str] | None = Future() if prepared.digest is None else None

        def version_hash() -> str:
            return hashed.result() if hashed is not None else prepared.hash

        with ThreadPoolExecutor(max_workers=1) as pool:
            staging = pool.submit(
                _stage,
                project,
                name,
                folder,
                prepared,
                lambda: [canonical_bytes([*versions, made(version_hash())])],
                hashed,
            )
            _store(project, name, prepared, writing, hashed.result if hashed else None)
            staged = staging.result()
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
    prepared: _Prepared,
    on_progress: ProgressCallback | None = None,
    digest_later: Callable[[], str] | None = None,
) -> None:
    """Keep the release in the line store, so old versions materialise without git.

    ``on_progress`` is told the bytes of the case lines read for the store so far, of all the
    release's case bytes (lines the store holds already are not read: the bar then ends short
    of full, and the stage ends). ``digest_later``: the version hash, when another thread is
    computing it (asked for once the pack is written).
    """
    new = prepared.new
    label_lines_ = _label_views(prepared.label_bytes)
    digest = "" if digest_later is not None else prepared.hash
    index = VersionIndex(
        digest, new.ids, new.hashes, new.summaries, [line_hash(x) for x in label_lines_]
    )
    with _lines_counted(new, on_progress) as line:
        write_version(
            project.state_dir,
            index,
            line,
            label_lines_,
            prepared.parent_index,
            tmp_dir(project, name),
            digest_later,
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


def _label_views(data: bytes) -> list[memoryview]:
    """The lines of a canonical labels file as views (not copies: 88 MB at 200k labels)."""
    view = memoryview(data)
    return [view[o : o + n] for o, n in split_lines(data)]


def _dropped_label_count(
    old: Sequence[LabelRecord], kept: set[str], labels: Sequence[LabelRecord]
) -> int:
    now = {_label_key(r) for r in labels}
    return sum(1 for r in old if r.case_id in kept and _label_key(r) not in now)


def _parent_lines(
    project: Project, name: str, prepared: _Prepared
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


def _changes_by_line(
    prepared: _Prepared, old: tuple[dict[str, Case], list[LabelRecord]]
) -> list[str]:
    """The changelog from line hashes: as :func:`_changes_since` gives, parsing changed cases only."""
    new, index = prepared.new, prepared.parent_index
    if prepared.parent is None or index is None:
        return [f"first release: {len(new.ids)} cases"]
    diff = diff_indexed(
        dict(zip(index.ids, index.hashes, strict=True)),
        dict(zip(new.ids, new.hashes, strict=True)),
        old[0],
        new.models,
    )
    lines = [] if diff.empty else diff.summary_lines()
    if not prepared.labels_as_parent:
        lines += _label_change_lines(old[1], prepared.labels)
    return lines or diff.summary_lines()


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
        try:
            if path.stat().st_size != source.size:
                return False
        except FileNotFoundError:
            return False
        seen = xxhash.xxh3_128()
        for chunk in read_chunks(path):
            seen.update(chunk)
        return seen.digest() == source.digest
    return _same_pieces(path, new.chunks())


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
    project: Project, name: str, folder: Path, prepared: _Prepared, versions: bytes | None
) -> None:
    """Write the release's files all-or-nothing through the journal (files already equal: kept)."""
    _finish(project, name, _stage(project, name, folder, prepared, versions))


def _finish(project: Project, name: str, staged: Staged | None) -> None:
    """Commit what :func:`_stage` staged (nothing when it staged nothing)."""
    if staged is not None:
        finish(project, staged)
        note_written(project, name)


def _stage(
    project: Project,
    name: str,
    folder: Path,
    prepared: _Prepared,
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
    prepared: _Prepared,
    versions: bytes | Callable[[], Iterable[bytes]] | None,
    hashed: Future[str] | None,
) -> Staged | None:
    new = prepared.new
    files: dict[Path, FileContent] = {}
    if not _holds_cases(folder / CASES_FILE, new):
        files[folder / CASES_FILE] = new.chunks if hashed is None else _hashing(prepared, hashed)
    elif hashed is not None:  # the file stays: hashed here, before the log that needs it
        hashed.set_result(pieces_hash(new.chunks(), prepared.label_bytes))
    labels = prepared.label_bytes
    if (labels or (folder / LABELS_FILE).exists()) and not _same_bytes(
        folder / LABELS_FILE, labels
    ):
        files[folder / LABELS_FILE] = labels
    if callable(versions) or (
        versions is not None and not _same_bytes(folder / VERSIONS_FILE, versions)
    ):
        files[folder / VERSIONS_FILE] = versions
    if not files:
        return None
    return stage(project, name, files, {})


def _hashing(
    prepared: _Prepared, hashed: Future[str]
) -> Callable[[], Iterator[bytes | memoryview]]:
    """The cases' pieces, hashed into the version hash as given; ``hashed`` gets it at the end."""

    def pieces() -> Iterator[bytes | memoryview]:
        with HashingThread(CASES_FILE.encode() + b"\0") as digest:
            for piece in prepared.new.chunks():
                digest.update(piece)
                yield piece
            digest.update(LABELS_FILE.encode() + b"\0")
            digest.update(prepared.label_bytes)
            hashed.set_result(digest.hexdigest())

    return pieces


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


def _changes_since(
    parent: VersionRecord | None,
    old: tuple[list[Case], list[LabelRecord]] | None,
    cases: list[Case],
    labels: list[LabelRecord],
) -> list[str]:
    if parent is None:
        return [f"first release: {len(cases)} cases"]
    if old is None:
        return [
            "changes against the previous release could not be computed (its content is not recoverable)"
        ]
    diff = diff_cases(old[0], cases)
    lines = [] if diff.empty else diff.summary_lines()
    lines += _label_change_lines(old[1], labels)
    return lines or diff.summary_lines()


def _label_change_lines(old: Sequence[LabelRecord], labels: Sequence[LabelRecord]) -> list[str]:
    """Changelog lines of raw labels edited, added and removed."""
    lines = []
    before, after = (
        Counter(_label_identity(r) for r in old),
        Counter(map(_label_identity, labels)),
    )
    added, removed = sum((after - before).values()), sum((before - after).values())
    changed = {_label_key(r) for r in labels if _label_identity(r) not in before} & {
        _label_key(r) for r in old
    }
    if changed:
        lines.append(f"labels.jsonl: {len(changed)} raw label(s) edited")
    if added - len(changed) > 0:
        lines.append(f"labels.jsonl: {added - len(changed)} raw label(s) added")
    if removed - len(changed) > 0:
        lines.append(f"labels.jsonl: {removed - len(changed)} raw label(s) removed")
    return lines


def select_cases(
    cases: Sequence[Case],
    *,
    slices: Sequence[str] = (),
    splits: Sequence[str] = (),
    sources: Sequence[str] = (),
    labelled_under: str | None = None,
    unlabelled: bool = False,
    oracle: str | None = None,
) -> list[Case]:
    """Cases matching every given filter (an empty filter matches all).

    Args:
        cases: Cases to filter.
        slices: Keep these slices.
        splits: Keep these splits.
        sources: Keep these sources.
        labelled_under: Keep cases whose label was decided under this guideline version.
        unlabelled: Keep only cases without a label (the labelling queue).
        oracle: Keep cases whose oracle has this class.
    """
    out = []
    for c in cases:
        if slices and c.slice not in slices:
            continue
        if splits and c.split not in splits:
            continue
        if sources and c.source not in sources:
            continue
        if unlabelled and c.label is not None:
            continue
        if labelled_under is not None and (
            c.label is None or c.label.guideline_version != labelled_under
        ):
            continue
        if oracle is not None and c.oracle.class_ != oracle:
            continue
        out.append(c)
    return out
