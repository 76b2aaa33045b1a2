"""Per-process caches of what labelling parses from files, kept while the files are unchanged.

A value computed from files is kept with each file's stamp (device, inode, size, mtime and ctime
in nanoseconds) and served again only while every stamp is the same; a replaced file (an atomic
write renames, so the inode changes), an edit in place (size, mtime, ctime) and a deleted or new
file all miss. File timestamps are coarse (a write in the same clock tick may keep them), so a
value whose files changed less than :data:`RACY_NS` before they were read is returned but never
kept: the next call reads the files again (git's "racily clean" rule). Keys start with the
project's resolved root, so one project's data is never served to another. Values are shared
between threads and requests: callers must not mutate them.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, TypeVar

from casework.dataset import Dataset, declared_tools, load_dataset
from casework.dataset.tools import ToolDecl
from casework.dataset.versions import CASES_FILE, VERSIONS_FILE
from casework.labelling.guidelines import (
    Guideline,
    current_versions,
    guideline_path,
    read_guideline,
)
from casework.labelling.model import LabelKey, label_key
from casework.project import Project
from casework.schema import Case, LabelRecord

T = TypeVar("T")
Stamp = tuple[int, int, int, int, int] | None
LABELS_FILE = "labels.jsonl"
#: Files changed more recently than this (ns) before they were read are read again next time.
RACY_NS = 2_000_000_000


def stamp(path: Path) -> Stamp:
    """``(device, inode, size, mtime_ns, ctime_ns)`` of a file, ``None`` when it is missing."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _settled(stamps: Sequence[Stamp], now_ns: int) -> bool:
    return all(s is None or max(s[3], s[4]) < now_ns - RACY_NS for s in stamps)


class FileCache(Generic[T]):
    """Values computed from files, least recently used dropped beyond ``size`` entries."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[Hashable, tuple[tuple[Stamp, ...], T]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, paths: Sequence[Path], compute: Callable[[], T]) -> T:
        """The value of ``key`` while ``paths`` are unchanged, else ``compute()`` (kept if settled).

        An exception from ``compute`` propagates and nothing is kept.
        """
        stamps = tuple(stamp(p) for p in paths)
        with self._lock:
            found = self._entries.get(key)
            if found is not None and found[0] == stamps:
                self._entries.move_to_end(key)
                self.hits += 1
                return found[1]
            self.misses += 1
        value = compute()
        now = time.time_ns()
        if _settled(stamps, now) and tuple(stamp(p) for p in paths) == stamps:
            with self._lock:
                self._entries[key] = (stamps, value)
                self._entries.move_to_end(key)
                while len(self._entries) > self.size:
                    self._entries.popitem(last=False)
        return value

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    def clear(self) -> None:
        """Forget every value and reset the counts."""
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0


@dataclass(frozen=True)
class DatasetFiles:
    """A dataset's working tree as parsed once, with the indexes labelling reads per request.

    Attributes:
        dataset: The dataset (working tree).
        by_id: Its cases by id.
        released: Raw labels of `labels.jsonl` per case, with their line numbers.
        released_keys: The identities of every released raw label.
        slices: The slices its cases are in.
    """

    dataset: Dataset
    by_id: Mapping[str, Case]
    released: Mapping[str, tuple[tuple[int, LabelRecord], ...]]
    released_keys: frozenset[LabelKey]
    slices: frozenset[str]


_ROOTS: dict[tuple[str, str], str] = {}


def _root(project: Project) -> str:
    """The project's resolved root (remembered per root as given and current folder)."""
    key = (str(project.root), os.getcwd())
    found = _ROOTS.get(key)
    if found is None:
        found = _ROOTS[key] = str(project.root.resolve())
    return found


def _index(dataset: Dataset) -> DatasetFiles:
    released: dict[str, list[tuple[int, LabelRecord]]] = {}
    for line, record in enumerate(dataset.labels, start=1):
        released.setdefault(record.case_id, []).append((line, record))
    return DatasetFiles(
        dataset,
        {c.id: c for c in dataset.cases},
        {k: tuple(v) for k, v in released.items()},
        frozenset(label_key(r) for r in dataset.labels),
        frozenset(c.slice for c in dataset.cases),
    )


_DATASETS: FileCache[DatasetFiles] = FileCache(8)
_GUIDELINES: FileCache[Guideline] = FileCache(256)
_VERSIONS: FileCache[dict[str, str]] = FileCache(64)
_TOOLS: FileCache[dict[str, ToolDecl]] = FileCache(16)
_ALL: dict[str, FileCache[Any]] = {
    "datasets": _DATASETS,
    "guidelines": _GUIDELINES,
    "versions": _VERSIONS,
    "tools": _TOOLS,
}


@dataclass(frozen=True)
class CacheInfo:
    """How one of labelling's file caches has done in this process.

    Attributes:
        hits: Values served without reading files.
        misses: Values computed (files read).
        entries: Values kept now.
    """

    hits: int
    misses: int
    entries: int


def cache_info() -> dict[str, CacheInfo]:
    """Hits, misses and entries of each file cache (``datasets``, ``guidelines``, ...)."""
    return {name: CacheInfo(c.hits, c.misses, len(c)) for name, c in _ALL.items()}


def clear_caches() -> None:
    """Forget every cached file value of this process (the next reads parse the files)."""
    for c in _ALL.values():
        c.clear()
    _PATHS.clear()
    _DIRS.clear()
    _DATASETS_DIRS.clear()
    _ROOTS.clear()


def dataset_files(project: Project, name: str) -> DatasetFiles:
    """``name``'s working tree, parsed again only when its files changed.

    Raises:
        UsageError: Unknown dataset.
        InputErrors: Bad dataset files (never kept: the next call reads them again).
    """
    root = _root(project)
    folder = _DIRS.get((root, name))
    if folder is None:
        folder = _DIRS[(root, name)] = project.dataset_dir(name).resolve()
    paths = [folder / CASES_FILE, folder / LABELS_FILE, folder / VERSIONS_FILE]
    key = (root, str(folder), name)
    return _DATASETS.get(key, paths, lambda: _index(load_dataset(project, name)))


_PATHS: dict[tuple[str, str], Path] = {}
_DIRS: dict[tuple[str, str], Path] = {}
_DATASETS_DIRS: dict[tuple[str, str], str] = {}


def has_dataset(project: Project, name: str) -> bool:
    """Whether ``name`` is in :meth:`Project.dataset_names` (a folder holding `cases.jsonl`).

    One system call instead of listing the datasets folder; asked of the disk every time.
    """
    if name in ("", ".", "..") or "/" in name or "\0" in name or (os.altsep or "/") in name:
        return False  # never a name `dataset_names` lists (one folder below the datasets folder)
    key = (_root(project), project.config.paths.datasets)
    folder = _DATASETS_DIRS.get(key)
    if folder is None:
        folder = _DATASETS_DIRS[key] = str(project.datasets_dir)
    return os.path.exists(os.path.join(folder, name, CASES_FILE))


def _guideline_path(project: Project, slice_name: str) -> Path:
    """:func:`guideline_path`, remembered (it resolves the folder: several system calls)."""
    key = (_root(project), slice_name)
    found = _PATHS.get(key)
    if found is None:
        found = _PATHS[key] = guideline_path(project, slice_name)
    return found


def guideline(project: Project, slice_name: str) -> Guideline:
    """The slice's guideline (:func:`read_guideline`), read again only when its file changed."""
    path = _guideline_path(project, slice_name)
    key = (_root(project), str(path))
    return _GUIDELINES.get(key, [path], lambda: read_guideline(project, slice_name))


def versions(project: Project, slices: frozenset[str]) -> dict[str, str]:
    """:func:`current_versions` of ``slices``, read again only when a guideline file changed."""
    ordered = sorted(slices)
    paths = [_guideline_path(project, s) for s in ordered]
    key = (_root(project), tuple(ordered))
    return _VERSIONS.get(key, paths, lambda: current_versions(project, ordered))


def tools(project: Project) -> dict[str, ToolDecl]:
    """:func:`declared_tools`, read again only when the tools file changed (code: every call)."""
    agent = project.config.agent
    if agent.tools_from or not agent.tools:
        return declared_tools(project)
    path = project.path(agent.tools)
    return _TOOLS.get((_root(project), str(path)), [path], lambda: declared_tools(project))
