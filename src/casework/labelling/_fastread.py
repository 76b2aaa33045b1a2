"""Raw labels as the agreement report reads them: compact tuples streamed from a checked file.

Entry point: :func:`read_checked_labels` (a labels file that a scan has just validated line by
line), which feeds each label's :class:`~casework.agreement.grouping.CompactLabel` (what
:func:`~casework.agreement.grouping.compact_label` makes of one :class:`~casework.schema.LabelRecord`)
to :class:`~casework.agreement.grouping.LabelGroups` as it is read, a line at a time: the file is
never held, nor its labels (at 30,000 cases, reading 60,000 labels as a list of tuples peaked at
84 MB traced, streamed at 20 MB; the list grew with the labels, to gigabytes at 1M cases).

Why a second reader: after :func:`casework.dataset.scan_dataset_chunks` has validated every label
on all cores (``keep_labels=False``), building 100,000 pydantic records again in one process
took about 2 s of the 10 s the report may take (measured). A validated line holds exactly the
values the record would (the record's validators check, they do not rewrite), so the fields the
report needs are read from orjson's objects directly; only the timestamp goes through pydantic,
to parse it exactly as the record does. Anything unexpected (the file changed since the scan, a
line only the strict decoder reads) returns ``None``: the caller then validates in full.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from pydantic import AwareDatetime, TypeAdapter, ValidationError

from casework.agreement.grouping import CompactLabel, LabelGroups, Ungrouped
from casework.dataset.jsonl import file_lines

__all__ = ["file_stamp", "read_checked_labels"]

_TIMESTAMP: TypeAdapter[AwareDatetime] = TypeAdapter(AwareDatetime)

#: Timestamp texts whose parse is remembered at most: a repeated text parses once, and a file of
#: distinct ones does not grow memory.
_TIMES_KEPT = 4096


def file_stamp(path: Path) -> tuple[int, int, int, int] | None:
    """Inode, size, mtime and ctime (ns) of ``path``, or ``None`` when it does not exist."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _names(tools: list[Any]) -> frozenset[str]:
    # A requirement is a bare tool name or an object with a "name" (ToolRequirement._from_str).
    return frozenset(t if isinstance(t, str) else t["name"] for t in tools)


def read_checked_labels(
    path: Path, stamp: tuple[int, int, int, int] | None, groups: Callable[[bool], LabelGroups]
) -> LabelGroups | None:
    """The labels of a file validated while it had ``stamp``, fed to ``groups(grouped)``.

    The labels go to ``groups(True)``; when a case's labels turn out not to be together
    (:class:`~casework.agreement.grouping.Ungrouped`), the file is read again into
    ``groups(False)``. ``None`` when the file's stamp differs from ``stamp`` (before or after
    reading), or when a line does not read as expected; the caller must then validate the bytes
    in full. The caller finishes the groups returned.
    """
    if stamp is None:
        return groups(True) if file_stamp(path) is None else None
    try:
        return _read(path, stamp, groups(True))
    except Ungrouped:
        return _read(path, stamp, groups(False))


def _read(path: Path, stamp: tuple[int, int, int, int], into: LabelGroups) -> LabelGroups | None:
    """Feed the labels of ``path`` to ``into`` (``None``: see :func:`read_checked_labels`)."""
    if file_stamp(path) != stamp:
        return None
    times: dict[str, str] = {}
    try:
        with path.open("rb") as f:
            for raw in file_lines(f):
                obj = orjson.loads(raw)
                stamp_text = obj["labelled_at"]
                iso = times.get(stamp_text) if type(stamp_text) is str else None
                if iso is None:
                    iso = _TIMESTAMP.validate_python(stamp_text).isoformat()
                    if type(stamp_text) is str:
                        if len(times) >= _TIMES_KEPT:
                            times.clear()
                        times[stamp_text] = iso
                into.add(
                    CompactLabel(
                        obj["case_id"],
                        obj["labeller"],
                        obj["role"],
                        obj.get("overlap_reason"),
                        obj["outcome"],
                        _names(obj.get("required_tools", [])),
                        _names(obj.get("forbidden_tools", [])),
                        obj["guideline_version"],
                        iso,
                    )
                )
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError, ValidationError):
        return None
    into.complete()
    return into if file_stamp(path) == stamp else None
