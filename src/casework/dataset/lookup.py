"""One case of a dataset, found without validating the rows a release already validated.

`casework dataset show` needs one row, but must refuse a dataset with bad lines as a full read does.
The working tree's lines are hashed and compared with the latest release's index: only the
lines it lacks are validated (a bad one, a duplicate id or labels that differ from the release's
send the command to the full read, which reports them). A release's row comes from the line
store by its hash. Entry points: :func:`find_case`, :func:`index_tree` (also what `forget` and
`expire` release from).
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

import orjson

from casework.dataset._incremental import NewCases, index_lines, parent_label_lines, parse_lines
from casework.dataset._lines import Changed, scan_file
from casework.dataset._objects import VersionIndex, fetch_lines, line_hash
from casework.dataset._restore import recovered_release, restored_index
from casework.dataset.stream import ProgressCallback, open_dataset, parse_ref, scan_dataset
from casework.dataset.versions import CASES_FILE, LABELS_FILE, files_hash, resolve_version
from casework.errors import CaseworkError
from casework.project import Project
from casework.schema import Case, VersionRecord

__all__ = ["IndexedTree", "find_case", "index_tree"]


@dataclass(frozen=True)
class _Missing:
    """The dataset is valid and holds no case with the id."""

    ref: str
    """The version as the message names it (``name@N`` or ``name@working``)."""


def find_case(
    project: Project, ref: str, case_id: str, *, on_progress: ProgressCallback | None = None
) -> Case:
    """The case ``case_id`` of ``ref`` (``name``, ``name@working`` or ``name@VERSION``).

    Rows the latest release (or the release named) holds are not validated again; when that
    cannot decide, the dataset is read in full (``on_progress`` follows that read).

    Raises:
        CaseworkError: No case has that id.
        InputErrors: The dataset has bad lines (every one reported, capped).
        UsageError: The dataset does not exist, or ``ref`` is malformed.
        VersionNotFound: The version is unknown or its content cannot be recovered.
    """
    found = _indexed(project, ref, case_id, on_progress)
    if isinstance(found, Case):
        return found
    if isinstance(found, _Missing):
        raise CaseworkError(f"{found.ref}: no case with id '{case_id}'.")
    kept: list[Case] = []

    def keep(case: Case) -> None:
        if case.id == case_id:
            kept.append(case)

    scan = scan_dataset(project, ref, keep, on_progress=on_progress, keep_labels=False)
    if not kept:
        raise CaseworkError(f"{scan.ref}: no case with id '{case_id}'.")
    return kept[0]


def _indexed(
    project: Project, ref: str, case_id: str, on_progress: ProgressCallback | None = None
) -> Case | _Missing | None:
    """The case from a release's index (``None``: only the full read can decide)."""
    name, version = parse_ref(ref)
    folder, shown_dir, versions = open_dataset(project, name)
    if not versions:
        return None
    shown = f"{shown_dir}/{CASES_FILE}"
    if version not in (None, "working"):
        record = resolve_version(versions, name, version)
        index = restored_index(project, name, record, on_progress)
        if index is None:  # an older release a fresh clone's store lacks: read, never stored
            return _recovered_case(project, name, record, case_id, shown)
        try:
            at = index.ids.index(case_id)
        except ValueError:
            return _Missing(f"{name}@{record.number}")
        lines = fetch_lines(project.state_dir, index, [index.hashes[at]])
        return None if lines is None else _parsed(lines[index.hashes[at]], case_id, shown)
    indexed = index_tree(project, name, versions, on_progress=on_progress)
    if indexed is None:
        return None  # a bad line, a duplicate id, other labels...: the full read decides
    tree = indexed.cases
    try:
        at = tree.ids.index(case_id)
    except ValueError:
        digest = files_hash(folder)
        same = next((v for v in reversed(versions) if v.hash == digest), None)
        return _Missing(f"{name}@{same.number}" if same else f"{name}@working")
    try:
        with tree.lines() as line:
            return _parsed(bytes(line(at)), case_id, shown)
    except Changed:
        return None  # written meanwhile


@dataclass(frozen=True)
class IndexedTree:
    """A working tree indexed against its latest release (see :func:`index_tree`)."""

    parent: VersionRecord
    index: VersionIndex
    """The latest release's index."""
    cases: NewCases
    """The tree's cases as a release writes them (less those left out)."""
    label_lines: list[bytes]
    """The labels file's lines (less those of cases left out), each a line of the release."""


def index_tree(
    project: Project,
    name: str,
    versions: Sequence[VersionRecord],
    drop: AbstractSet[str] = frozenset(),
    *,
    on_progress: ProgressCallback | None = None,
) -> IndexedTree | None:
    """The working tree of ``name`` (less the cases ``drop`` names) against its latest release.

    Lines the release holds are taken from its index; the others are validated. ``None`` when
    that cannot decide: no release yet, the store lacks it, a bad line, a duplicate id or a
    contradiction, or labels other than the release's (less those of ``drop``).
    """
    if not versions:
        return None
    folder = project.dataset_dir(name)
    # A release the store lacks (a fresh clone) is put back into it; ``on_progress`` follows that.
    index = restored_index(project, name, versions[-1], on_progress)
    if index is None:
        return None
    try:
        source, spans, hashes, ended = scan_file(folder / CASES_FILE, lambda _: None)
    except FileNotFoundError:
        return None
    shown = f"{project.relative(folder)}/{CASES_FILE}"
    tree = index_lines(source, spans, hashes, ended, index, shown)
    if tree is None:
        return None
    tree = tree.without(drop)
    labels = folder / LABELS_FILE
    label_data = labels.read_bytes() if labels.exists() else b""
    kept = parent_label_lines(label_data, index, set(tree.ids), drop)
    return None if kept is None else IndexedTree(versions[-1], index, tree, kept)


def _recovered_case(
    project: Project, name: str, record: VersionRecord, case_id: str, shown: str
) -> Case | _Missing | None:
    """The case from the release's files (git history, checked against its version hash).

    Only lines holding the text ``"id": "<case_id>"`` are parsed, and only the one whose own
    id it is is validated (as the store's path validates only the line it reads); nothing is
    stored. ``None``: the files cannot be found or read (the full read decides).
    """
    needle = f'"id": "{case_id}"'.encode()
    with recovered_release(project, name, record) as found:
        if found is None:
            return None
        try:
            with found.source.reader() as read:
                for (offset, length), digest in zip(found.spans, found.hashes, strict=True):
                    line = bytes(read(offset, length))
                    if needle not in line:
                        continue
                    if line_hash(line) != digest:
                        return None  # changed while read
                    if _top_level_id(line) == case_id:
                        return _parsed(line, case_id, shown)
        except OSError:
            return None
    return _Missing(f"{name}@{record.number}")


def _top_level_id(line: bytes) -> object:
    try:
        obj = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return obj.get("id") if isinstance(obj, dict) else None


def _parsed(raw: bytes, case_id: str, shown: str) -> Case | None:
    """The case on a line known to be valid (``None``: it is not, or holds another id)."""
    cases = parse_lines([raw], shown)
    return cases[0] if cases and cases[0].id == case_id else None
