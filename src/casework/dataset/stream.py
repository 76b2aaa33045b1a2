"""Reading a dataset version line by line: each case is validated once, handed on, and dropped.

Entry point: :func:`scan_dataset`, which reports exactly what loading the whole dataset reports
(every bad line of either file, duplicate ids, labels naming no case, duplicate raw labels) while
holding only the compact facts those cross-file checks need: case ids and the raw labels.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from casework.dataset.jsonl import byte_lines, collector_paused, iter_records, parse_records
from casework.dataset.lock import settle
from casework.dataset.versions import (
    CASES_FILE,
    LABELS_FILE,
    VERSIONS_FILE,
    files_hash,
    materialise,
    parse_ref,
    read_versions,
    resolve_version,
)
from casework.errors import InputError, InputErrors, Problem, ReleaseConflict, UsageError
from casework.project import Project
from casework.schema import VersionRecord

if TYPE_CHECKING:  # the case models load where cases are read (`dataset versions` needs none)
    from casework.schema import Case, LabelRecord

__all__ = [
    "PROGRESS_EVERY",
    "CaseVisitor",
    "DatasetScan",
    "LabelKey",
    "ProgressCallback",
    "StageProgress",
    "collector_paused",
    "dangling_key_problems",
    "dangling_label_problems",
    "duplicate_key_problems",
    "duplicate_label_problems",
    "finish_content",
    "finish_label_keys",
    "label_key_of",
    "one_stage",
    "open_dataset",
    "parse_content",
    "parse_ref",
    "scan_dataset",
    "working_tree_bytes",
]

#: What the cross-file label checks read of a raw label: case id, labeller, guideline version.
LabelKey = tuple[str, str, str]
#: Called with each valid case, in file order.
CaseVisitor = Callable[["Case"], None]
#: Called with ``(bytes read, bytes in all)`` as the cases file streams past.
ProgressCallback = Callable[[int, int], None]
#: Called with ``(stage, bytes done, bytes in all)`` as a command of several stages (a release:
#: reading, validating, writing) goes; each stage counts from 0 again.
StageProgress = Callable[[str, int, int], None]


def one_stage(on_progress: StageProgress | None, stage: str) -> ProgressCallback | None:
    """The progress of one stage, as a two-argument callback (``None`` without progress)."""
    if on_progress is None:
        return None
    return lambda done, total: on_progress(stage, done, total)


#: Bytes of the cases file between two progress callbacks.
PROGRESS_EVERY = 4 * 1024 * 1024


@dataclass(frozen=True)
class DatasetScan:
    """What scanning one version of a dataset found besides the cases handed to the visitor.

    Attributes:
        name: Dataset name.
        path: Its folder.
        hash: Version hash of the content read (empty when the scan was asked not to compute
            it and no release could be that content: see
            :func:`~casework.dataset.parallel.scan_dataset_chunks`).
        version: The release this content is (``None``: unreleased working tree).
        cases: Number of cases.
        labels: The raw labels, in file order.
    """

    name: str
    path: Path
    hash: str
    version: VersionRecord | None
    cases: int
    labels: list[LabelRecord]

    @property
    def ref(self) -> str:
        """``name@N`` for a release, ``name@working`` for unreleased content."""
        return f"{self.name}@{self.version.number}" if self.version else f"{self.name}@working"


def dangling_label_problems(
    known: AbstractSet[str], labels: Sequence[LabelRecord], shown_dir: str
) -> list[Problem]:
    """Raw labels naming no case of ``known`` ids (located by their line in canonical order)."""
    return dangling_key_problems(known, [label_key_of(r) for r in labels], shown_dir)


def duplicate_label_problems(labels: Sequence[LabelRecord], shown_dir: str) -> list[Problem]:
    """Two raw labels by one labeller of one case under one guideline (agreement needs one)."""
    return duplicate_key_problems([label_key_of(r) for r in labels], shown_dir)


def label_key_of(record: LabelRecord) -> LabelKey:
    """The compact key of a raw label: what the cross-file label checks read."""
    return (record.case_id, record.labeller, record.guideline_version)


def dangling_key_problems(
    known: AbstractSet[str], keys: Sequence[LabelKey], shown_dir: str
) -> list[Problem]:
    """:func:`dangling_label_problems` on compact keys (one per line of the labels file)."""
    return [
        Problem(
            f"{shown_dir}/{LABELS_FILE}",
            i + 1,
            "case_id",
            "no case with this id",
            key[0],
            has_got=True,
        )
        for i, key in enumerate(keys)
        if key[0] not in known
    ]


def duplicate_key_problems(keys: Sequence[LabelKey], shown_dir: str) -> list[Problem]:
    """:func:`duplicate_label_problems` on compact keys (one per line of the labels file)."""
    seen: set[LabelKey] = set()
    reported: set[LabelKey] = set()
    problems = []
    for line, key in enumerate(keys, start=1):
        if key not in seen:
            seen.add(key)
        elif key not in reported:  # the second label of a key is reported, not the third
            reported.add(key)
            case_id, labeller, guideline = key
            problems.append(
                Problem(
                    f"{shown_dir}/{LABELS_FILE}",
                    line,
                    "labeller",
                    f"labelled case '{case_id}' twice under guideline "
                    f"'{guideline}'; agreement needs one label per person",
                    labeller,
                    has_got=True,
                )
            )
    return problems


def parse_content(
    case_lines: Iterable[bytes],
    labels: bytes,
    shown_dir: str,
    visit: CaseVisitor,
    *,
    keep_labels: bool = True,
) -> tuple[int, list[LabelRecord]]:
    """Validate a version's cases as they stream past (each to ``visit``), then its raw labels.

    Returns:
        The number of cases and the raw labels (none kept unless ``keep_labels``: each is then
        validated and checked as it streams past, and only its compact key held).

    Raises:
        InputErrors: Every bad line of either file, then labels naming no case and duplicate
            raw labels, as loading the whole version reports them.
    """
    from casework.schema import Case

    problems: list[Problem] = []
    ids: dict[str, int] = {}
    with collector_paused():
        for _, case in iter_records(
            case_lines, Case, problems, shown=f"{shown_dir}/{CASES_FILE}", key=_case_id, seen=ids
        ):
            visit(case)
        return finish_content(problems, ids, labels, shown_dir, keep_labels=keep_labels)


def finish_content(
    problems: list[Problem],
    ids: dict[str, int],
    labels: bytes,
    shown_dir: str,
    *,
    keep_labels: bool = True,
) -> tuple[int, list[LabelRecord]]:
    """After the cases (their ``problems`` and valid ``ids``): parse the raw labels, check both.

    ``keep_labels=False`` returns no labels: 200k label models take about 1 GB, and a command
    that lists cases needs only their keys for the checks.

    Raises:
        InputErrors: See :func:`parse_content`.
    """
    from casework.schema import LabelRecord

    label_list: list[LabelRecord] = []
    label_problems: list[Problem] = []
    shown = f"{shown_dir}/{LABELS_FILE}"
    with collector_paused():  # the label checks walk 200k labels in 0.2 s paused, 5.6 s not
        if keep_labels:
            try:
                label_list = parse_records(labels, LabelRecord, shown=shown).records
            except InputError as exc:
                label_problems = exc.problems
            keys = [label_key_of(r) for r in label_list]
        else:  # the same records and problems, one model alive at a time
            records = iter_records(byte_lines(labels), LabelRecord, label_problems, shown=shown)
            keys = [label_key_of(r) for _, r in records]
        count = finish_label_keys(problems, ids, label_problems, keys, shown_dir)
    return count, label_list


def finish_label_keys(
    problems: list[Problem],
    ids: dict[str, int],
    label_problems: list[Problem],
    keys: Sequence[LabelKey],
    shown_dir: str,
) -> int:
    """:func:`finish_content` once the labels are read: their bad lines and compact keys.

    ``keys`` holds one key per line of the labels file (it is ignored when ``label_problems``
    has any). Returns the number of cases.

    Raises:
        InputErrors: See :func:`parse_content`.
    """
    count = len(ids)
    if problems:
        ids = {}  # a file with bad lines yields no cases (and so no dangling-label check)
    problems.extend(label_problems)
    if label_problems:
        keys = []  # a labels file with bad lines yields no labels to check
    if ids:
        problems.extend(dangling_key_problems(ids.keys(), keys, shown_dir))
    problems.extend(duplicate_key_problems(keys, shown_dir))
    InputErrors.raise_if_any(problems)
    return count


def _case_id(case: Case) -> str:
    return case.id


def _hashed_lines(
    stream: BinaryIO, digest: hashlib._Hash, total: int, on_progress: ProgressCallback | None
) -> Iterator[bytes]:
    """Lines of a binary file (with their newline), each added to ``digest`` as read."""
    done = reported = 0
    for raw in stream:
        digest.update(raw)
        done += len(raw)
        if on_progress is not None and done - reported >= PROGRESS_EVERY:
            on_progress(done, total)
            reported = done
        yield raw
    if on_progress is not None:
        on_progress(done, total)


def _progress_lines(data: bytes, on_progress: ProgressCallback | None) -> Iterator[bytes]:
    done = reported = 0
    for line in byte_lines(data):
        done += len(line)
        if on_progress is not None and done - reported >= PROGRESS_EVERY:
            on_progress(done, len(data))
            reported = done
        yield line
    if on_progress is not None:
        on_progress(len(data), len(data))


def open_dataset(project: Project, name: str) -> tuple[Path, str, list[VersionRecord]]:
    """A dataset's folder, its name in messages and its release log, once it is settled.

    Completes an interrupted release first.

    Raises:
        UsageError: The dataset does not exist.
        InputErrors: The release log is broken.
    """
    folder = project.dataset_dir(name)
    shown_dir = project.relative(folder)
    settle(project, name)  # complete an interrupted release before reading
    if not (folder / CASES_FILE).exists():
        known = ", ".join(project.dataset_names()) or "none"
        raise UsageError(f"{shown_dir}/{CASES_FILE}: no dataset '{name}' (datasets here: {known}).")
    return folder, shown_dir, read_versions(folder, f"{shown_dir}/{VERSIONS_FILE}")


def working_tree_bytes(project: Project, ref: str) -> int | None:
    """Size of the cases file ``ref`` reads, when ``ref`` names an existing working tree."""
    name, version = parse_ref(ref)
    if version not in (None, "working"):
        return None
    path = project.dataset_dir(name) / CASES_FILE
    return path.stat().st_size if path.exists() else None


def scan_dataset(
    project: Project,
    ref: str,
    visit: CaseVisitor,
    *,
    on_progress: ProgressCallback | None = None,
    keep_labels: bool = True,
) -> DatasetScan:
    """Stream ``name`` (the working tree) or ``name@version``: each valid case goes to ``visit``.

    The working tree's cases file is read in bounded buffers and hashed as it is read; so is a
    release of :data:`ON_DISK_MIN_CASES` cases or more, from its files on disk
    (:func:`_scan_release_files`); a smaller one is materialised (from the working tree, the
    cache or git) and its lines read one at a time. What ``visit`` saw is meaningful only when
    no error is raised. ``keep_labels=False``: the raw labels are checked as they stream past
    and not kept (``labels`` is empty).

    Raises:
        InputErrors: A file has bad lines (all reported, capped), as :func:`load_dataset` does.
        VersionNotFound: The version is unknown or its content cannot be recovered.
        ReleaseConflict: The working tree, read as a release, changed while read.
        UsageError: The dataset does not exist.
    """
    name, version = parse_ref(ref)
    folder, shown_dir, versions = open_dataset(project, name)
    record: VersionRecord | None
    if version in (None, "working"):
        content_hash, count, label_list = _scan_files(
            folder, shown_dir, visit, on_progress, keep_labels
        )
        record = next((v for v in reversed(versions) if v.hash == content_hash), None)
    else:
        record = resolve_version(versions, name, version)
        read = None
        if record.counts.cases >= ON_DISK_MIN_CASES:
            read = _scan_release_files(
                project, name, shown_dir, record, visit, on_progress, keep_labels
            )
        if read is not None:
            content_hash = record.hash
            count, label_list = read
        else:
            content = materialise(folder, project.state_dir, record, name)
            content_hash = content.hash
            lines = _progress_lines(content.cases, on_progress)
            count, label_list = parse_content(
                lines, content.labels, shown_dir, visit, keep_labels=keep_labels
            )
    return DatasetScan(name, folder, content_hash, record, count, label_list)


def _scan_files(
    place: Path,
    shown_dir: str,
    visit: CaseVisitor,
    on_progress: ProgressCallback | None,
    keep_labels: bool,
) -> tuple[str, int, list[LabelRecord]]:
    """Stream the cases and labels files in ``place``; their version hash, cases and labels.

    The hash is of the bytes as read; the labels are those kept (see :func:`parse_content`).
    """
    labels_path = place / LABELS_FILE
    labels = labels_path.read_bytes() if labels_path.exists() else b""
    digest = hashlib.sha256(CASES_FILE.encode() + b"\0")
    path = place / CASES_FILE
    with path.open("rb") as stream:
        lines = _hashed_lines(stream, digest, path.stat().st_size, on_progress)
        count, label_list = parse_content(lines, labels, shown_dir, visit, keep_labels=keep_labels)
    digest.update(LABELS_FILE.encode() + b"\0" + labels)
    return digest.hexdigest(), count, label_list


#: Releases of at least this many cases are read from files on disk by :func:`scan_dataset`
#: (about 28 MB at 5.6 KB a case); smaller ones are built in memory, which costs no temp copy.
ON_DISK_MIN_CASES = 5_000


def _scan_release_files(
    project: Project,
    name: str,
    shown_dir: str,
    record: VersionRecord,
    visit: CaseVisitor,
    on_progress: ProgressCallback | None,
    keep_labels: bool,
) -> tuple[int, list[LabelRecord]] | None:
    """Stream release ``record`` from its files on disk, hashed as read (``None``: no files).

    Read where :func:`~casework.dataset._ondisk.release_files` finds them (the working tree when
    it hashes to the release, else a checked scratch copy), a line at a time, so a large release
    is never held whole (on one core, or with `--presidio`, it used to be). ``visit`` has seen
    the cases once this returns a count.

    Raises:
        InputErrors: The release has bad lines (as the in-memory read reports them).
        ReleaseConflict: What was read is not the release (the working tree changed while it
            was read, or the copy was tampered with): ``visit`` saw other cases, so nothing of
            this read may be reported.
    """
    # Here: `casework dataset versions` imports this module and needs none of it.
    from casework.dataset._ondisk import release_files

    changed = ReleaseConflict(
        f"{shown_dir}: changed while this command read it as {name}@{record.number}; nothing "
        "was reported. Run the command again."
    )
    with release_files(project, name, record) as place:
        if place is None:
            return None
        try:
            digest, count, label_list = _scan_files(
                place, shown_dir, visit, on_progress, keep_labels
            )
        except InputErrors:
            if files_hash(place) != record.hash:
                raise changed from None  # the lines reported are not the release's
            raise
        except FileNotFoundError:
            raise changed from None
        if digest != record.hash:
            raise changed
        return count, label_list
