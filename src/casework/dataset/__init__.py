"""Datasets as files: canonical JSONL, releases and versions, diffs, declared tools, migrations.

Entry points: :func:`load_dataset`, :func:`scan_dataset` (streaming), :func:`release` (the one way
to release a version; the storage engine behind it is private), :func:`diff_cases`,
:func:`declared_tools`, :func:`check_dataset`, :func:`migrate_cases`.
"""

from typing import TYPE_CHECKING

from casework._lazy import attach

if TYPE_CHECKING:
    from casework.dataset.check import check_dataset
    from casework.dataset.compare import diff_versions
    from casework.dataset.diff import diff_cases
    from casework.dataset.jsonl import dump_record, read_cases, write_cases, write_records
    from casework.dataset.lock import dataset_versions
    from casework.dataset.lookup import find_case
    from casework.dataset.migrate import migrate_cases
    from casework.dataset.parallel import scan_in_jobs
    from casework.dataset.store import (
        Dataset,
        label_sort_key,
        load_dataset,
        release,
        select_cases,
    )
    from casework.dataset.stream import DatasetScan, ProgressCallback, StageProgress
    from casework.dataset.tools import declared_tools
    from casework.dataset.versions import parse_ref, read_versions

__all__ = [
    "Dataset",
    "DatasetScan",
    "ProgressCallback",
    "StageProgress",
    "check_dataset",
    "dataset_versions",
    "declared_tools",
    "diff_cases",
    "diff_versions",
    "dump_record",
    "find_case",
    "label_sort_key",
    "load_dataset",
    "migrate_cases",
    "parse_ref",
    "read_cases",
    "read_versions",
    "release",
    "scan_in_jobs",
    "select_cases",
    "write_cases",
    "write_records",
]


if not TYPE_CHECKING:  # type checkers read the imports above, not a __getattr__
    __getattr__, __dir__ = attach(
        __name__,
        {
            "casework.dataset.check": ("check_dataset",),
            "casework.dataset.compare": ("diff_versions",),
            "casework.dataset.diff": ("diff_cases",),
            "casework.dataset.jsonl": (
                "dump_record",
                "read_cases",
                "write_cases",
                "write_records",
            ),
            "casework.dataset.lock": ("dataset_versions",),
            "casework.dataset.migrate": ("migrate_cases",),
            "casework.dataset.parallel": ("scan_in_jobs",),
            "casework.dataset.lookup": ("find_case",),
            "casework.dataset.store": (
                "Dataset",
                "label_sort_key",
                "load_dataset",
                "release",
                "select_cases",
            ),
            "casework.dataset.stream": (
                "DatasetScan",
                "ProgressCallback",
                "StageProgress",
            ),
            "casework.dataset.tools": ("declared_tools",),
            "casework.dataset.versions": (
                "parse_ref",
                "read_versions",
            ),
        },
    )
