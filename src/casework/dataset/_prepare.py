"""Reading a working tree against the latest release's stored lines, before anything is written.

Entry points: :func:`prepare_tree` (the tree as it is) and :func:`prepare_without` (less some cases).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path

import xxhash

from casework.dataset._incremental import (
    EarlyCases,
    LabelFile,
    LabelLines,
    NewCases,
    early_cases,
    index_lines,
    label_sort_key,
    labels_of,
    parent_label_lines,
)
from casework.dataset._lines import Changed, OnDisk, scan_file
from casework.dataset._objects import VersionIndex
from casework.dataset._refusals import duplicate_labels
from casework.dataset._restore import restored_index
from casework.dataset.jsonl import canonical_bytes
from casework.dataset.lock import fingerprint_of_digests
from casework.dataset.lookup import index_tree
from casework.dataset.stream import ProgressCallback, StageProgress, one_stage
from casework.dataset.versions import (
    CASES_FILE,
    LABELS_FILE,
    VERSIONS_FILE,
    files_hashes,
    pieces_hash,
    read_chunks,
    read_versions,
)
from casework.project import Project
from casework.schema import LabelRecord, VersionRecord


def prepare_without(project: Project, name: str, drop: AbstractSet[str]) -> Prepared | None:
    """The tree less ``drop`` as a release writes it (``None``: the full path decides)."""
    folder = project.dataset_dir(name)
    versions = read_versions(folder, f"{project.relative(folder)}/{VERSIONS_FILE}")
    tree = index_tree(project, name, versions, drop)
    if tree is None:
        return None
    label_bytes = b"".join(line + b"\n" for line in tree.label_lines)
    digest = pieces_hash(tree.cases.chunks(), label_bytes)
    return Prepared(
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


class FullPath(Exception):
    """The incremental path cannot decide (the store lacks a line): take the full path."""


@dataclass
class Prepared:
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
    with ``release(…, without=…)``): no kept case's label changed; ``labels`` is left empty."""
    label_total: int | None = None
    """How many raw labels there are, when ``labels`` is left empty (a first release keeps
    only compact rows of them, so it leaves them empty too)."""
    label_file: LabelFile | LabelLines | None = None
    """The labels file read from disk when written, kept as it stands or sorted (a first
    release): ``label_bytes`` is left empty."""

    def label_pieces(self) -> Iterator[bytes | memoryview]:
        """The labels file as the release writes it, piece by piece.

        Raises:
            Changed: The labels file kept as it stands no longer holds the bytes validated.
        """
        if isinstance(self.label_file, LabelFile):
            yield from self.label_file.source.whole()
        elif self.label_file is not None:
            yield from self.label_file.pieces()
        else:
            yield self.label_bytes

    @property
    def label_count(self) -> int:
        """How many raw labels the release holds."""
        return len(self.labels) if self.label_total is None else self.label_total

    @property
    def hash(self) -> str:
        """The version hash of the cases and labels as the release writes them.

        Computed when first asked for: a large first release computes it instead as it stages
        its cases (see :func:`release_prepared`), which spared a pass of 0.6 s at 100k cases.
        """
        if self.digest is None:
            self.digest = pieces_hash(self.new.chunks(), self.label_pieces())
        return self.digest


def prepare_tree(
    project: Project, name: str, on_progress: StageProgress | None = None
) -> Prepared | VersionRecord | None:
    """The tree as a release would write it; the latest release if equal; ``None``: full path."""
    try:
        return _prepare_tree_read(project, name, on_progress)
    except Changed:
        return None  # the cases file changed while read: the full path reads it under the lock


def _prepare_tree_read(
    project: Project, name: str, on_progress: StageProgress | None
) -> Prepared | VersionRecord | None:
    folder = project.dataset_dir(name)
    shown_dir = project.relative(folder)
    log = _read_or_none(folder / VERSIONS_FILE)
    versions = read_versions(folder, f"{shown_dir}/{VERSIONS_FILE}")
    parent = versions[-1] if versions else None
    tree = files_hashes(folder) if parent is not None else None  # a first release: no use
    if parent is not None and tree is not None and parent.hash == tree[0]:
        return parent
    # A first release reads its labels file in shares, later (never whole): see below.
    label_data = _read_or_none(folder / LABELS_FILE) if parent is not None else None
    # The cases file is hashed line by line as read, not held: its lines are read back by
    # position when written, each checked against its hash. A first release's lines are
    # validated on workers as they are scanned (:class:`EarlyCases`).
    early = (
        early_cases(
            folder / CASES_FILE,
            f"{shown_dir}/{CASES_FILE}",
            (folder / LABELS_FILE, f"{shown_dir}/{LABELS_FILE}"),
        )
        if parent is None
        else None
    )
    with early if early is not None else contextlib.nullcontext():
        return _prepare_tree_scanned(
            project, name, on_progress, log, versions, tree, label_data, early
        )


def _prepare_tree_scanned(
    project: Project,
    name: str,
    on_progress: StageProgress | None,
    log: bytes | None,
    versions: list[VersionRecord],
    tree: tuple[str, bytes, bytes] | None,
    label_data: bytes | None,
    early: EarlyCases | None,
) -> Prepared | VersionRecord | None:
    folder = project.dataset_dir(name)
    shown_dir = project.relative(folder)
    parent = versions[-1] if versions else None
    reading = one_stage(on_progress, "reading")
    chunk_seen: Callable[[bytes], object] = _unseen
    if reading is not None:
        chunk_seen = _counting(reading, _size(folder / CASES_FILE))
    try:
        source, spans, hashes, ended = scan_file(
            folder / CASES_FILE, chunk_seen, early.seen if early is not None else None
        )
    except FileNotFoundError:
        return None
    if log != _read_or_none(folder / VERSIONS_FILE):
        return None  # released meanwhile: the full path reads it under the lock
    streamed = None
    # The files' fingerprint, from the digests of their bytes as read here (the cases' taken
    # by the scan).
    log_digest = None if log is None else xxhash.xxh3_128_digest(log)
    if parent is None and (folder / LABELS_FILE).exists():
        # A first release: the labels file is validated in shares read from disk, never held
        # (0.9 GB at 1M cases); its size and digest are taken in one pass over its chunks.
        streamed = _digested(folder / LABELS_FILE)
        labels_digest: bytes | None = streamed.digest
    else:
        labels_digest = None if label_data is None else xxhash.xxh3_128_digest(label_data)
    fingerprint = fingerprint_of_digests(source.digest, labels_digest, log_digest)
    label_data = label_data or b""
    parent_index = None
    if parent is not None:
        # A fresh clone's store lacks the parent: put it back (validated once), not the full path.
        restoring = one_stage(on_progress, f"restoring release {parent.number} to the local store")
        known_tree = tree[0] if tree is not None else None
        parent_index = restored_index(project, name, parent, restoring, tree=known_tree)
        if parent_index is None:
            return None
    labels_here: tuple[bytes | OnDisk, str] | None = None
    if parent is None:
        on_disk = streamed if streamed is not None and streamed.size else None
        labels_here = (on_disk if on_disk is not None else b"", f"{shown_dir}/{LABELS_FILE}")
    new = index_lines(
        source,
        spans,
        hashes,
        ended,
        parent_index,
        f"{shown_dir}/{CASES_FILE}",
        labels_here,
        one_stage(on_progress, "validating"),
        early,
    )
    if new is None:
        return None
    if new.labels is not None:
        return _prepared_first(fingerprint, new)
    if parent_index is not None:
        same = parent_label_lines(label_data, parent_index, set(new.ids))
        if same is not None:
            digest = _tree_hash(tree, new, label_data)
            return Prepared(
                fingerprint, parent, parent_index, new, [], label_data, digest, True, len(same)
            )
    parsed = labels_of(label_data, f"{shown_dir}/{LABELS_FILE}")
    if parsed is None:
        return None
    labels = sorted(parsed, key=label_sort_key)
    ids = set(new.ids)
    if duplicate_labels(labels, shown_dir) or any(r.case_id not in ids for r in labels):
        return None
    label_bytes = canonical_bytes(labels)
    digest = _tree_hash(tree, new, label_bytes)
    return Prepared(fingerprint, parent, parent_index, new, labels, label_bytes, digest)


def _prepared_first(fingerprint: str, new: NewCases) -> Prepared | None:
    """A first release from the labels validated beside the cases (no models kept).

    The labels file is read from disk as it is written, kept as it stands when canonical
    (:class:`LabelFile`) or sorted (:class:`LabelLines`). ``None`` (the full path reports it)
    when a label names no case.
    """
    found = new.labels
    assert found is not None
    new.labels = None  # done with: freed before the store is written
    if isinstance(found, list):  # rows come from a labels file given as bytes: none here
        assert not found
        return Prepared(fingerprint, None, None, new, [], b"", None, label_total=0)
    ids = set(new.ids)
    if any(case_id not in ids for case_id in found.case_ids):
        return None
    # No release exists to compare the hash with: it is computed as the files are written.
    total = len(found.hashes)
    return Prepared(
        fingerprint, None, None, new, [], b"", None, label_total=total, label_file=found
    )


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


def _digested(path: Path) -> OnDisk:
    """The file as read in chunks once: its size and XXH3-128 (size 0: empty, or gone)."""
    size = 0
    seen = xxhash.xxh3_128()
    for chunk in read_chunks(path):
        size += len(chunk)
        seen.update(chunk)
    return OnDisk(path, size, seen.digest())


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def _counting(on_progress: ProgressCallback, total: int) -> Callable[[bytes], None]:
    """Telling ``on_progress`` the bytes of the chunks seen so far (of ``total``)."""
    seen = 0

    def chunk_seen(chunk: bytes) -> None:
        nonlocal seen
        seen += len(chunk)
        on_progress(seen, max(total, seen))

    return chunk_seen


def _unseen(chunk: bytes) -> None:
    """A chunk read needs nothing more."""


def _read_or_none(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
