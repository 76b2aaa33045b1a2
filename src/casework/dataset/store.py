"""Loading datasets (current or any released version) and releasing new versions.

Entry points: :func:`load_dataset` (``name`` or ``name@version``) and :func:`release`, which
chooses how to release by cost; the storage engine behind it is private: ``_prepare`` (a tree
read against the latest release), ``_write`` (the line store, then the files through
``_journal``), ``_refusals``, ``_changelog``, ``_objects`` (the line store), ``_restore``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from casework.dataset._incremental import label_sort_key
from casework.dataset._lines import Changed
from casework.dataset._prepare import FullPath, Prepared, prepare_tree, prepare_without
from casework.dataset._write import release_locked, release_prepared
from casework.dataset.jsonl import collector_paused
from casework.dataset.lock import dataset_lock, dataset_versions, held_fingerprint, settle
from casework.dataset.stream import (
    ProgressCallback,
    StageProgress,
    one_stage,
    parse_ref,
    scan_dataset,
)
from casework.dataset.versions import CASES_FILE, files_hash
from casework.errors import ReleaseConflict, UsageError
from casework.project import Project
from casework.schema import Case, LabelRecord, VersionRecord

__all__ = [
    "Dataset",
    "dataset_versions",
    "label_sort_key",
    "load_dataset",
    "parse_ref",
    "release",
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
                    "given only with `cases`: a working tree's release takes its own.",
                    param=param,
                    mentions=("cases",),
                )
        if without:
            return _release_without(project, name, without, message, changes=changes, now=now)
        return _release_tree(project, name, message, changes, now, on_progress).record
    if without:
        raise UsageError(
            "given only when `cases` is None (the working tree): leave them out of `cases`.",
            param="without",
            mentions=("cases",),
        )
    _require_message(message)
    with dataset_lock(project, name):
        if base is not None:
            _check_base(project, name, base)
        return release_locked(project, name, cases, message, changes, labels, now)


def _require_message(message: str) -> None:
    if not message.strip():
        raise UsageError("a message is required: say why this version exists.", param="message")


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
    prepared = prepare_tree(project, name, on_progress)
    if isinstance(prepared, VersionRecord):
        _require_message(message)
        return _TreeRelease(prepared.hash, None)
    if prepared is None:
        return _release_tree_fully(project, name, message, changes, now, on_progress)
    _require_message(message)
    with dataset_lock(project, name):
        if held_fingerprint(project, name) != prepared.fingerprint:
            # Changed meanwhile: read it again, locked.
            again = prepare_tree(project, name, on_progress)
            if not isinstance(again, Prepared):
                return _release_tree_fully(project, name, message, changes, now, on_progress)
            prepared = again
        try:
            record = release_prepared(
                project, name, prepared, message, changes, now, on_progress=on_progress
            )
        except FullPath:
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
        prepared = prepare_without(project, name, drop)
        if prepared is not None:
            try:
                return release_prepared(project, name, prepared, message, changes, now)
            except FullPath:
                pass
            except Changed:
                raise _changed_underneath(project, name) from None
        current = load_dataset(project, name)
        kept = [c for c in current.cases if c.id not in drop]
        labels = [r for r in current.labels if r.case_id not in drop]
        return release(project, name, kept, message, changes=changes, labels=labels, now=now)


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


def _working_hash(project: Project, name: str) -> str:
    return files_hash(project.dataset_dir(name))


def _check_base(project: Project, name: str, base: str) -> None:
    folder = project.dataset_dir(name)
    if _working_hash(project, name) != base:
        raise ReleaseConflict(
            f"{project.relative(folder)}: changed since this command read it (another command "
            "released it meanwhile); nothing was written. Run the command again."
        )


def select_cases(
    cases: Sequence[Case],
    *,
    slices: Sequence[str] = (),
    splits: Sequence[str] = (),
    sources: Sequence[str] = (),
    labelled_under: str | None = None,
    unlabelled: bool = False,
    oracle: str | None = None,
    original_ids: Sequence[str] = (),
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
        original_ids: Keep cases imported from a task of one of these ids in its own benchmark
            (``provenance.original_id``: τ²'s telecom ids, τ-bench's ``"0"``).
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
        if original_ids and c.provenance.original_id not in original_ids:
            continue
        out.append(c)
    return out
