"""Raw labels as the agreement report reads them: compact tuples, from records or from a file.

Entry point: :func:`read_checked_labels` (a labels file that a scan has just validated line by
line), giving the :class:`~casework.agreement.report.CompactLabel` that
:func:`~casework.agreement.report.compact_label` makes of one :class:`~casework.schema.LabelRecord`.

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
from pathlib import Path
from typing import Any

import orjson
from pydantic import AwareDatetime, TypeAdapter, ValidationError

from casework.agreement.report import CompactLabel
from casework.dataset.jsonl import byte_lines

__all__ = ["file_stamp", "read_checked_labels"]

_TIMESTAMP: TypeAdapter[AwareDatetime] = TypeAdapter(AwareDatetime)


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
    path: Path, stamp: tuple[int, int, int, int] | None
) -> list[CompactLabel] | None:
    """The labels of a file validated while it had ``stamp``; ``None`` if that cannot be trusted.

    ``None`` when the file's stamp differs from ``stamp`` (before or after reading), or when a
    line does not read as expected; the caller must then validate the bytes in full.
    """
    if stamp is None:
        return [] if file_stamp(path) is None else None
    if file_stamp(path) != stamp:
        return None
    data = path.read_bytes()
    if file_stamp(path) != stamp:
        return None
    out: list[CompactLabel] = []
    times: dict[str, str] = {}
    try:
        for raw in byte_lines(data):
            obj = orjson.loads(raw)
            stamp_text = obj["labelled_at"]
            iso = times.get(stamp_text) if type(stamp_text) is str else None
            if iso is None:
                iso = _TIMESTAMP.validate_python(stamp_text).isoformat()
                if type(stamp_text) is str:
                    times[stamp_text] = iso
            out.append(
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
    return out
