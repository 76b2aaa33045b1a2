"""Loading datasets (current or any released version) and releasing new versions.

Entry points: :func:`load_dataset` (``name`` or ``name@version``) and :func:`release`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from casework.dataset.check import contradictory_tools
from casework.dataset.diff import diff_cases
from casework.dataset.journal import commit, tmp_dir
from casework.dataset.jsonl import byte_lines, canonical_bytes, read_records
from casework.dataset.lock import check_unchanged, dataset_lock, note_written, settle
from casework.dataset.stream import (
    ProgressCallback,
    dangling_label_problems,
    duplicate_label_problems,
    parse_content,
    parse_ref,
    scan_dataset,
)
from casework.dataset.versions import (
    CASES_FILE,
    LABELS_FILE,
    VERSIONS_FILE,
    Content,
    cache_content,
    cached_files,
    content_hash,
    materialise,
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
from casework.schema import Case, LabelRecord, VersionCounts, VersionRecord

__all__ = [
    "Dataset",
    "count_cases",
    "dataset_versions",
    "hash_of",
    "label_sort_key",
    "load_dataset",
    "parse_ref",
    "release",
    "release_working_tree",
    "select_cases",
]

_ROLE_ORDER = {"first": 0, "second": 1, "adjudicator": 2}


def label_sort_key(record: LabelRecord) -> str:
    """Canonical order of `labels.jsonl`: by case, then role, then labeller, then time."""
    return f"{record.case_id}\0{_ROLE_ORDER[record.role]}\0{record.labeller}\0{record.labelled_at.isoformat()}"


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


def dataset_versions(project: Project, name: str) -> list[VersionRecord]:
    """The release log of ``name``, oldest first, after completing any interrupted release."""
    folder = project.dataset_dir(name)
    settle(project, name)
    return read_versions(folder, f"{project.relative(folder)}/{VERSIONS_FILE}")


def _read_optional(path: Path) -> bytes:
    return path.read_bytes() if path.exists() else b""


def count_cases(cases: Sequence[Case], labels: Sequence[LabelRecord] = ()) -> VersionCounts:
    """Counts per slice, split, source and outcome, for the release log."""
    return VersionCounts(
        cases=len(cases),
        by_slice=dict(sorted(Counter(c.slice for c in cases).items())),
        by_split=dict(sorted(Counter(c.split for c in cases).items())),
        by_source=dict(sorted(Counter(c.source for c in cases).items())),
        by_outcome=dict(
            sorted(Counter(c.label.outcome if c.label else "unlabelled" for c in cases).items())
        ),
        by_oracle=dict(sorted(Counter(c.oracle.class_ for c in cases).items())),
        unsatisfiable=sum(not c.satisfiable for c in cases),
        frozen=sum(c.frozen for c in cases),
        labels=len(labels),
    )


def release(
    project: Project,
    name: str,
    cases: Iterable[Case],
    message: str,
    *,
    changes: Sequence[str] | None = None,
    labels: Iterable[LabelRecord] | None = None,
    now: datetime | None = None,
    base: str | None = None,
) -> VersionRecord | None:
    """Write ``cases`` (and ``labels``) canonically and append a release to `versions.jsonl`.

    The release holds the dataset's lock (:func:`casework.dataset.lock.dataset_lock`); callers
    that read the dataset to compute ``cases`` hold it from that read on, and the release refuses
    when the files changed since the lock was taken. All files are written through one journal,
    so a crash leaves the previous release or (completed by the next command) this one.

    Args:
        project: The project.
        name: Dataset name (its folder is created if new).
        cases: The full content of the new version.
        message: Why this version exists.
        changes: Changelog lines; computed from the diff against the previous release when omitted.
        labels: Raw labels; ``None`` keeps `labels.jsonl` as it is.
        now: Release time (injected by tests).
        base: Hash of the working tree the caller computed ``cases`` from, when it read the
            dataset without holding the lock (a long computation): the release refuses when
            the working tree no longer has it.

    Returns:
        The new release record, or ``None`` when the content equals the latest release
        (nothing is written then).

    Raises:
        UsageError: Empty message.
        InputErrors: Duplicate case ids or raw labels, labels naming unknown cases, a case that
            requires and forbids one tool, raw labels of kept cases dropped, or a broken release log.
        ReleaseConflict: Another process holds the lock, or the files changed underneath.
    """
    if not message.strip():
        raise UsageError("a message is required: say why this version exists.", param="message")
    with dataset_lock(project, name):
        if base is not None:
            _check_base(project, name, base)
        return _release_locked(project, name, cases, message, changes, labels, now)


def release_working_tree(
    project: Project, name: str, message: str
) -> tuple[Dataset, VersionRecord | None]:
    """Release the working tree of ``name`` as it is (`casework release`).

    The tree is read and validated before the lock is taken (bad input leaves no trace), and
    read again under the lock only if another command changed it meanwhile.

    Returns:
        The dataset as released, and the new release (``None`` when unchanged).

    Raises:
        InputErrors: Bad lines, or contradictions a release refuses (see :func:`release`).
        UsageError: Unknown dataset or empty message.
        ReleaseConflict: Another process holds the lock beyond the timeout.
    """
    current = load_dataset(project, name)
    with dataset_lock(project, name):
        if _working_hash(project, name) != current.hash:
            current = load_dataset(project, name)
        return current, release(project, name, current.cases, message)


def _working_hash(project: Project, name: str) -> str:
    folder = project.dataset_dir(name)
    return content_hash(_read_optional(folder / CASES_FILE), _read_optional(folder / LABELS_FILE))


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
    check_unchanged(project, name)
    if parent is not None and parent.hash == content.hash:
        # Re-canonicalise a hand-edited but equal file.
        _commit(project, name, folder, content, None)
        return None
    old = _parent_content(project, folder, parent, name)
    if old is not None:
        InputErrors.raise_if_any(_dropped_labels(old[1], case_list, label_list, shown_dir))
    if changes is None:
        changes = _changes_since(parent, old, case_list, label_list)
    record = VersionRecord(
        number=(parent.number + 1) if parent else 1,
        hash=content.hash,
        parent=parent.hash if parent else None,
        created_at=now or datetime.now(UTC),
        message=message.strip(),
        changes=list(changes),
        counts=count_cases(case_list, label_list),
        guideline_versions=sorted(
            {c.label.guideline_version for c in case_list if c.label and c.label.guideline_version}
        ),
    )
    cache_content(project.state_dir, content, tmp_dir(project, name))
    _commit(project, name, folder, content, canonical_bytes([*versions, record]))
    return record


def _existing_labels(folder: Path, shown_dir: str) -> list[LabelRecord]:
    return sorted(
        read_records(
            folder / LABELS_FILE, LabelRecord, shown=f"{shown_dir}/{LABELS_FILE}", missing_ok=True
        ).records,
        key=label_sort_key,
    )


def _commit(
    project: Project, name: str, folder: Path, content: Content, versions: bytes | None
) -> None:
    """Write the release's files all-or-nothing through the journal."""
    files = {folder / CASES_FILE: content.cases}
    if content.labels or (folder / LABELS_FILE).exists():
        files[folder / LABELS_FILE] = content.labels
    if versions is not None:
        files[folder / VERSIONS_FILE] = versions
    cached = cached_files(project.state_dir, content) if versions is not None else {}
    staged = {t: cached[t.name] for t in files if t.name in cached}
    commit(project, name, files, staged)
    note_written(project, name)


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
    before, after = (
        Counter(_label_identity(r) for r in old[1]),
        Counter(map(_label_identity, labels)),
    )
    added, removed = sum((after - before).values()), sum((before - after).values())
    changed = {_label_key(r) for r in labels if _label_identity(r) not in before} & {
        _label_key(r) for r in old[1]
    }
    if changed:
        lines.append(f"labels.jsonl: {len(changed)} raw label(s) edited")
    if added - len(changed) > 0:
        lines.append(f"labels.jsonl: {added - len(changed)} raw label(s) added")
    if removed - len(changed) > 0:
        lines.append(f"labels.jsonl: {removed - len(changed)} raw label(s) removed")
    return lines or diff.summary_lines()


def hash_of(cases: Sequence[Case], labels: Sequence[LabelRecord]) -> str:
    """Version hash of in-memory content."""
    case_list: list[Case] = sorted(cases, key=lambda c: c.id)
    label_list: list[LabelRecord] = sorted(labels, key=label_sort_key)
    return content_hash(canonical_bytes(case_list), canonical_bytes(label_list))


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
