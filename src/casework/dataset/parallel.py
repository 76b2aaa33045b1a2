"""Scanning a large cases file on every core: chunks of lines, one job per chunk.

Validation is the cost of reading a dataset (pydantic, about four fifths of it), and it is
per line: a file of many megabytes is cut at line boundaries into one chunk per worker, each
worker validates its chunk's lines and feeds the valid cases to its own copy of a job (a
:class:`CaseJob`: picklable, keeping only what it needs), and the parent merges, in file order,
the problems (renumbered to file lines), the case ids (duplicates are found across chunks here)
and the jobs. The result equals a sequential scan's: the same problems, in the same order, cut
at the same point.

A release (``name@N``) is scanned the same way from its files on disk (the working tree when
equal, else a scratch copy from the version store or git), not from its bytes in memory.

Entry points: :func:`scan_in_jobs`, :func:`scan_bytes`, :func:`scan_dataset_chunks`. Workers are forked (no second import of casework),
so this runs only where fork is safe: Linux, and no other thread alive in the parent.
"""

from __future__ import annotations

import hashlib
import itertools
import multiprocessing
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from casework.dataset._apart import fork_ok
from casework.dataset._ondisk import release_files
from casework.dataset.jsonl import iter_records
from casework.dataset.stream import (
    DatasetScan,
    LabelKey,
    ProgressCallback,
    collector_paused,
    finish_content,
    finish_label_keys,
    label_key_of,
    open_dataset,
    parse_ref,
    scan_dataset,
    working_tree_bytes,
)
from casework.dataset.versions import (
    CASES_FILE,
    LABELS_FILE,
    VERSIONS_FILE,
    files_hash,
    read_versions,
    resolve_version,
)
from casework.errors import MAX_REPORTED, CaseworkError, InputErrors, Problem
from casework.project import Project
from casework.schema import Case, LabelRecord, VersionRecord

__all__ = [
    "PARALLEL_MIN_BYTES",
    "RELEASE_CASE_BYTES",
    "CaseJob",
    "line_boundaries",
    "parallel_workers",
    "scan_bytes",
    "scan_dataset_chunks",
    "scan_in_jobs",
]

#: Cases files smaller than this are scanned in one process (forking costs more than it saves).
PARALLEL_MIN_BYTES = 64 * 1024 * 1024
#: Bytes a case of a release is taken to hold when choosing how to scan it (the release log
#: counts cases, not bytes; the example's cases hold 5.6 KB each).
RELEASE_CASE_BYTES = 6 * 1024


class CaseJob(Protocol):
    """Work done on each valid case of a chunk; picklable, so it can travel to and from workers."""

    def add(self, case: Case) -> None:
        """Take one valid case."""


J = TypeVar("J", bound=CaseJob)


@dataclass(frozen=True)
class _Part:
    """What one worker found in its chunk of a file, with line numbers counted from its start."""

    lines: int
    problems: list[Problem]
    ids: list[tuple[str, int]]


@dataclass(frozen=True)
class _Chunk(_Part, Generic[J]):
    """A chunk of the cases file: its valid ids and the job that saw its cases."""

    job: J


@dataclass(frozen=True)
class _LabelChunk(_Part):
    """A chunk of the labels file: the compact key of each of its valid lines, in order."""

    keys: list[LabelKey]


def parallel_workers() -> int:
    """How many worker processes a parallel scan may use here (1: scan sequentially)."""
    if not fork_ok():
        return 1
    return max(1, min(os.cpu_count() or 1, 8))


def _chunk_lines(path: Path, start: int, end: int, counted: list[int]) -> Iterator[bytes]:
    with path.open("rb") as stream:
        stream.seek(start)
        position = start
        while position < end:
            raw = stream.readline()
            if not raw:
                return
            position += len(raw)
            counted[0] += 1
            yield raw


def _scan_chunk(path: Path, start: int, end: int, shown: str, job: J) -> _Chunk[J]:
    problems: list[Problem] = []
    ids: list[tuple[str, int]] = []
    counted = [0]
    lines = _chunk_lines(path, start, end, counted)
    # Numbered from 2 past the file's start: only the file's first line may carry a BOM.
    first = 1 if start == 0 else 2
    with collector_paused():
        for number, case in iter_records(lines, Case, problems, shown=shown, start=first):
            ids.append((case.id, number))
            job.add(case)
    return _Chunk(counted[0], problems, ids, job)


def _scan_labels(path: Path, start: int, end: int, shown: str) -> _LabelChunk:
    """Validate one chunk of the labels file, keeping only each label's compact key."""
    problems: list[Problem] = []
    keys: list[LabelKey] = []
    counted = [0]
    lines = _chunk_lines(path, start, end, counted)
    first = 1 if start == 0 else 2
    with collector_paused():
        for _, record in iter_records(lines, LabelRecord, problems, shown=shown, start=first):
            case_id, labeller, guideline = label_key_of(record)
            # Few labellers and guideline versions: one string each travels back, not one a label.
            keys.append((case_id, sys.intern(labeller), sys.intern(guideline)))
    return _LabelChunk(counted[0], problems, [], keys)


def line_boundaries(path: Path, size: int, parts: int) -> list[int]:
    """Offsets that cut the file into ``parts`` chunks, each starting at the start of a line."""
    cuts = [0]
    with path.open("rb") as stream:
        for i in range(1, parts):
            stream.seek(max(size * i // parts, cuts[-1]))
            stream.readline()
            cuts.append(min(stream.tell(), size))
    cuts.append(size)
    return sorted(set(cuts))


def _merge(
    chunks: Sequence[_Part], starts: list[int], shown: str
) -> tuple[list[Problem], dict[str, int]]:
    """Problems in file order (with duplicate ids between them), cut as a sequential scan cuts."""
    by_line: list[Problem] = []
    first: dict[str, int] = {}
    offset = 0
    for chunk, start in zip(chunks, starts, strict=True):
        shift = offset - (1 if start > 0 else 0)  # a non-first chunk counts from 2
        by_line += [replace(p, line=p.line + shift) if p.line else p for p in chunk.problems]
        for case_id, number in chunk.ids:
            line = number + shift
            if case_id in first:
                by_line.append(
                    Problem(
                        shown,
                        line,
                        "id",
                        f"duplicate id, first on line {first[case_id]}",
                        case_id,
                        has_got=True,
                    )
                )
            else:
                first[case_id] = line
        offset += chunk.lines
        if len(chunk.problems) > MAX_REPORTED * 4:
            break  # the chunk stopped reading: a sequential scan stops there too
    by_line.sort(key=lambda p: p.line or 0)
    return _cut(by_line), first


def _cut(problems: list[Problem]) -> list[Problem]:
    """The problems a sequential scan keeps: it stops before the first line past the limit."""
    kept: list[Problem] = []
    i = 0
    while i < len(problems):
        if len(kept) > MAX_REPORTED * 4:
            break
        line = problems[i].line
        while i < len(problems) and problems[i].line == line:
            kept.append(problems[i])
            i += 1
    return kept


def _hash_file(path: Path, labels: Path, on_progress: ProgressCallback | None) -> str:
    """The version hash of the working tree, both files read in bounded blocks."""
    digest = hashlib.sha256(CASES_FILE.encode() + b"\0")
    size = path.stat().st_size
    _hash_into(digest, path)
    if on_progress is not None:
        on_progress(size // 2, size)  # hashing is the cheap half; the workers report the rest
    digest.update(LABELS_FILE.encode() + b"\0")
    if labels.exists():
        _hash_into(digest, labels)
    return digest.hexdigest()


def _hash_into(digest: hashlib._Hash, path: Path) -> None:
    with path.open("rb") as stream:
        while block := stream.read(8 * 1024 * 1024):
            digest.update(block)


def scan_bytes(project: Project, ref: str) -> int | None:
    """About how many bytes of cases a scan of ``ref`` reads (``None``: no such tree or release).

    A working tree's cases file size; for a release (``name@N``), its case count from the
    release log times :data:`RELEASE_CASE_BYTES` (its bytes are not known before they are
    recovered). Callers compare it with :data:`PARALLEL_MIN_BYTES`.
    """
    name, version = parse_ref(ref)
    if version in (None, "working"):
        return working_tree_bytes(project, ref)
    try:
        folder = project.dataset_dir(name)
        versions = read_versions(folder, f"{project.relative(folder)}/{VERSIONS_FILE}")
        record = resolve_version(versions, name, version)
    except (CaseworkError, OSError):
        return None  # the one-process scan reports it
    return record.counts.cases * RELEASE_CASE_BYTES


def scan_dataset_chunks(
    project: Project,
    name: str,
    new_job: Callable[[], J],
    *,
    workers: int,
    keep_labels: bool = True,
    on_progress: ProgressCallback | None = None,
    with_files: Callable[[Path], Callable[[list[J]], None]] | None = None,
    need_hash: bool = True,
) -> tuple[DatasetScan, list[J]]:
    """Scan ``name`` (a working tree, or a release ``name@N``) with ``workers`` processes.

    One job per chunk, in order. Reports exactly what :func:`casework.dataset.scan_dataset`
    reports (raising the same ``InputErrors``); a job's cases are valid, in file order within
    its chunk, and together the jobs saw every case once (only meaningful when nothing is
    raised).

    A release is read from its files on disk (:func:`~casework.dataset._ondisk.release_files`:
    the working tree when equal, else a scratch copy from the store or git), never held whole;
    when the working tree changed while read it is read again from a copy, and when no copy
    can be made the release is scanned in this process, as :func:`scan_dataset` does.

    With ``keep_labels=False`` the labels file is validated in chunks by the workers too, which
    keep only each label's compact key (:data:`~casework.dataset.stream.LabelKey`) for the
    cross-file checks; the scan's ``labels`` is then empty. Neither file is held whole.

    ``with_files`` is called with the folder holding the files read, before they are read; what
    it returns is called with the jobs after a scan that read the release (or tree) as it
    should, while the files are still there (a release's copy is removed on return). With a
    fall back to the one-process scan neither is called.

    With ``need_hash=False`` a working tree of a dataset never released is not hashed (no
    release can be the content read): the scan's ``hash`` is then empty. At 1M cases the hash
    took 3-8 CPU seconds of the parent (by the hour), beside workers that had both cores.

    Raises:
        InputErrors: A file has bad lines (all reported, capped).
        UsageError: The dataset does not exist.
        VersionNotFound: The release is unknown, or no place holds its content.
    """
    name, version = parse_ref(name)
    folder, shown_dir, versions = open_dataset(project, name)
    args = (name, shown_dir, versions, new_job, workers, keep_labels, on_progress, need_hash)
    if version in (None, "working"):
        after = with_files(folder) if with_files is not None else None
        scan, jobs = _scan_folder(folder, folder, *args)
        if after is not None:
            after(jobs)
        return scan, jobs
    record = resolve_version(versions, name, version)
    for working in (True, False):
        with release_files(project, name, record, working=working) as place:
            if place is None:
                break
            after = with_files(place) if with_files is not None else None
            try:
                scan, jobs = _scan_folder(place, folder, *args)
            except InputErrors:
                if place == folder and files_hash(folder) != record.hash:
                    continue  # the tree changed while read: what is wrong is not the release's
                raise
            if scan.hash == record.hash:
                if after is not None:
                    after(jobs)
                return replace(scan, version=record), jobs
            if place != folder:  # a checked copy read back differently: not to be trusted
                break
    job = new_job()
    ref = f"{name}@{version}"
    scan = scan_dataset(project, ref, job.add, on_progress=on_progress, keep_labels=keep_labels)
    return scan, [job]


def _scan_folder(
    place: Path,
    folder: Path,
    name: str,
    shown_dir: str,
    versions: Sequence[VersionRecord],
    new_job: Callable[[], J],
    workers: int,
    keep_labels: bool,
    on_progress: ProgressCallback | None,
    need_hash: bool = True,
) -> tuple[DatasetScan, list[J]]:
    """Scan the files in ``place`` (named as the dataset's ``folder`` in messages).

    The files are hashed (beside the workers) unless ``need_hash`` is false and no release
    exists that they could be.
    """
    path = place / CASES_FILE
    labels_path = place / LABELS_FILE
    size = path.stat().st_size
    cuts = line_boundaries(path, size, workers)
    label_cuts = [0]
    if not keep_labels and labels_path.exists():
        label_cuts = line_boundaries(labels_path, labels_path.stat().st_size, workers)
    shown = f"{shown_dir}/{CASES_FILE}"
    shown_labels = f"{shown_dir}/{LABELS_FILE}"
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=len(cuts) - 1, mp_context=context) as pool:
        futures = [
            pool.submit(_scan_chunk, path, start, end, shown, new_job())
            for start, end in itertools.pairwise(cuts)
        ]
        label_futures = [
            pool.submit(_scan_labels, labels_path, start, end, shown_labels)
            for start, end in itertools.pairwise(label_cuts)
        ]
        hashed = need_hash or bool(versions)
        content_hash = _hash_file(path, labels_path, on_progress) if hashed else ""
        chunks = []
        with collector_paused():  # unpickling the parts makes many objects, none cyclic
            for i, future in enumerate(futures):
                chunks.append(future.result())
                if on_progress is not None:  # hashing, when done, was the first half
                    done = size // 2 + cuts[i + 1] // 2 if hashed else cuts[i + 1]
                    on_progress(done, size)
            label_chunks = [future.result() for future in label_futures]
    problems, ids = _merge(chunks, cuts[:-1], shown)
    if keep_labels:
        labels = labels_path.read_bytes() if labels_path.exists() else b""
        count, label_list = finish_content(problems, ids, labels, shown_dir)
    else:
        label_problems, _ = _merge(label_chunks, label_cuts[:-1], shown_labels)
        keys = [key for chunk in label_chunks for key in chunk.keys]
        count, label_list = finish_label_keys(problems, ids, label_problems, keys, shown_dir), []
    record = (
        next((v for v in reversed(versions) if v.hash == content_hash), None) if hashed else None
    )
    scan = DatasetScan(name, folder, content_hash, record, count, label_list)
    return scan, [c.job for c in chunks]


def scan_in_jobs(
    project: Project,
    ref: str,
    new_job: Callable[[], J],
    *,
    keep_labels: bool = True,
    on_progress: ProgressCallback | None = None,
) -> tuple[DatasetScan, list[J]]:
    """Feed every case of ``ref`` to jobs: in this process, or on every core for a large tree.

    One job here, or one per chunk when ``ref`` (a working tree or a release) holds at least
    :data:`PARALLEL_MIN_BYTES` (:func:`scan_bytes`) and this process may fork workers. The jobs come back in file order; see
    :func:`scan_dataset_chunks` for what is reported.
    """
    size = scan_bytes(project, ref)
    workers = parallel_workers()
    if size is None or size < PARALLEL_MIN_BYTES or workers < 2:
        job = new_job()
        scan = scan_dataset(project, ref, job.add, on_progress=on_progress, keep_labels=keep_labels)
        return scan, [job]
    return scan_dataset_chunks(
        project, ref, new_job, workers=workers, keep_labels=keep_labels, on_progress=on_progress
    )
