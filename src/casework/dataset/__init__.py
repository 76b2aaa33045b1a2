"""Datasets as files: canonical JSONL, releases and versions, diffs, declared tools, migrations.

Entry points: :func:`load_dataset`, :func:`scan_dataset` (streaming), :func:`release` (the one way
to release a version; the storage engine behind it is private), :func:`diff_cases`,
:func:`declared_tools`, :func:`check_dataset`, :func:`migrate_cases`.
"""

from typing import TYPE_CHECKING

from casework._lazy import attach

if TYPE_CHECKING:
    from casework.dataset._journal import tmp_dir
    from casework.dataset.catalogue import (
        CatalogueError,
        CatalogueFiles,
        case_catalogue,
        file_sha256,
    )
    from casework.dataset.check import (
        CheckReport,
        DatasetChecks,
        Finding,
        check_contradictions,
        check_dataset,
        check_tools,
        contradictory_tools,
        expired_cases,
        golden_tool_findings,
    )
    from casework.dataset.compare import VersionDiff, diff_versions
    from casework.dataset.copies import CopyRecord, read_copies, record_copies, write_copies
    from casework.dataset.diff import CaseChange, DatasetDiff, diff_cases
    from casework.dataset.jsonl import (
        canonical_bytes,
        canonical_line,
        collector_paused,
        dump_record,
        fast_canonical,
        json_objects,
        parse_records,
        problems_from_validation,
        read_cases,
        read_records,
        write_cases,
        write_records,
    )
    from casework.dataset.lock import dataset_lock, dataset_versions
    from casework.dataset.lookup import find_case
    from casework.dataset.migrate import (
        MigrationResult,
        RenameMap,
        load_renames,
        migrate_cases,
        migrate_dataset,
    )
    from casework.dataset.parallel import (
        PARALLEL_MIN_BYTES,
        CaseJob,
        parallel_workers,
        scan_bytes,
        scan_dataset_chunks,
        scan_in_jobs,
    )
    from casework.dataset.state import (
        SQLITE_SUFFIXES,
        StateRefError,
        apply_diff,
        apply_shared,
        initial_state,
        load_state_ref,
        state_diff,
        state_ref_findings,
    )
    from casework.dataset.store import (
        Dataset,
        label_sort_key,
        load_dataset,
        release,
        select_cases,
    )
    from casework.dataset.stream import (
        CaseVisitor,
        DatasetScan,
        ProgressCallback,
        StageProgress,
        one_stage,
        scan_dataset,
    )
    from casework.dataset.tools import (
        ToolDecl,
        declared_tools,
        environment_tools,
        parse_tool_declarations,
    )
    from casework.dataset.versions import (
        CASES_FILE,
        VERSIONS_FILE,
        files_hash,
        parse_ref,
        purge_cached,
        read_versions,
    )

__all__ = [
    "CASES_FILE",
    "PARALLEL_MIN_BYTES",
    "SQLITE_SUFFIXES",
    "VERSIONS_FILE",
    "CaseChange",
    "CaseJob",
    "CaseVisitor",
    "CatalogueError",
    "CatalogueFiles",
    "CheckReport",
    "CopyRecord",
    "Dataset",
    "DatasetChecks",
    "DatasetDiff",
    "DatasetScan",
    "Finding",
    "MigrationResult",
    "ProgressCallback",
    "RenameMap",
    "StageProgress",
    "StateRefError",
    "ToolDecl",
    "VersionDiff",
    "apply_diff",
    "apply_shared",
    "canonical_bytes",
    "canonical_line",
    "case_catalogue",
    "check_contradictions",
    "check_dataset",
    "check_tools",
    "collector_paused",
    "contradictory_tools",
    "dataset_lock",
    "dataset_versions",
    "declared_tools",
    "diff_cases",
    "diff_versions",
    "dump_record",
    "environment_tools",
    "expired_cases",
    "fast_canonical",
    "file_sha256",
    "files_hash",
    "find_case",
    "golden_tool_findings",
    "initial_state",
    "json_objects",
    "label_sort_key",
    "load_dataset",
    "load_renames",
    "load_state_ref",
    "migrate_cases",
    "migrate_dataset",
    "one_stage",
    "parallel_workers",
    "parse_records",
    "parse_ref",
    "parse_tool_declarations",
    "problems_from_validation",
    "purge_cached",
    "read_cases",
    "read_copies",
    "read_records",
    "read_versions",
    "record_copies",
    "release",
    "scan_bytes",
    "scan_dataset",
    "scan_dataset_chunks",
    "scan_in_jobs",
    "select_cases",
    "state_diff",
    "state_ref_findings",
    "tmp_dir",
    "write_cases",
    "write_copies",
    "write_records",
]


if not TYPE_CHECKING:  # type checkers read the imports above, not a __getattr__
    __getattr__, __dir__ = attach(
        __name__,
        {
            "casework.dataset.catalogue": (
                "CatalogueError",
                "CatalogueFiles",
                "case_catalogue",
                "file_sha256",
            ),
            "casework.dataset.check": (
                "CheckReport",
                "DatasetChecks",
                "Finding",
                "check_contradictions",
                "check_dataset",
                "check_tools",
                "contradictory_tools",
                "expired_cases",
                "golden_tool_findings",
            ),
            "casework.dataset.compare": (
                "VersionDiff",
                "diff_versions",
            ),
            "casework.dataset.copies": (
                "CopyRecord",
                "read_copies",
                "record_copies",
                "write_copies",
            ),
            "casework.dataset.diff": (
                "CaseChange",
                "DatasetDiff",
                "diff_cases",
            ),
            "casework.dataset._journal": ("tmp_dir",),
            "casework.dataset.jsonl": (
                "canonical_bytes",
                "canonical_line",
                "collector_paused",
                "dump_record",
                "fast_canonical",
                "json_objects",
                "parse_records",
                "problems_from_validation",
                "read_cases",
                "read_records",
                "write_cases",
                "write_records",
            ),
            "casework.dataset.lock": (
                "dataset_lock",
                "dataset_versions",
            ),
            "casework.dataset.migrate": (
                "MigrationResult",
                "RenameMap",
                "load_renames",
                "migrate_cases",
                "migrate_dataset",
            ),
            "casework.dataset.parallel": (
                "PARALLEL_MIN_BYTES",
                "CaseJob",
                "parallel_workers",
                "scan_bytes",
                "scan_dataset_chunks",
                "scan_in_jobs",
            ),
            "casework.dataset.lookup": ("find_case",),
            "casework.dataset.state": (
                "SQLITE_SUFFIXES",
                "StateRefError",
                "apply_diff",
                "apply_shared",
                "initial_state",
                "load_state_ref",
                "state_diff",
                "state_ref_findings",
            ),
            "casework.dataset.store": (
                "Dataset",
                "label_sort_key",
                "load_dataset",
                "release",
                "select_cases",
            ),
            "casework.dataset.stream": (
                "CaseVisitor",
                "DatasetScan",
                "ProgressCallback",
                "StageProgress",
                "one_stage",
                "scan_dataset",
            ),
            "casework.dataset.tools": (
                "ToolDecl",
                "declared_tools",
                "environment_tools",
                "parse_tool_declarations",
            ),
            "casework.dataset.versions": (
                "CASES_FILE",
                "VERSIONS_FILE",
                "files_hash",
                "parse_ref",
                "purge_cached",
                "read_versions",
            ),
        },
    )
