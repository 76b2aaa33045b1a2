"""Datasets as files: canonical JSONL, releases and versions, diffs, declared tools, migrations.

Entry points: :func:`load_dataset`, :func:`scan_dataset` (streaming), :func:`release`, :func:`diff_cases`, :func:`declared_tools`,
:func:`check_dataset`, :func:`migrate_cases`.
"""

from casework.dataset.catalogue import CatalogueError, CatalogueFiles, case_catalogue, file_sha256
from casework.dataset.check import (
    CheckReport,
    DatasetChecks,
    Finding,
    check_contradictions,
    check_dataset,
    check_tools,
    contradictory_tools,
    expired_cases,
)
from casework.dataset.compare import VersionDiff, diff_versions
from casework.dataset.diff import CaseChange, DatasetDiff, diff_cases
from casework.dataset.journal import tmp_dir
from casework.dataset.jsonl import (
    canonical_bytes,
    canonical_line,
    dump_record,
    json_objects,
    parse_records,
    problems_from_validation,
    read_cases,
    read_records,
    write_cases,
    write_records,
)
from casework.dataset.lock import dataset_lock
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
    scan_dataset_chunks,
)
from casework.dataset.store import (
    Dataset,
    TreeRelease,
    count_cases,
    dataset_versions,
    hash_of,
    label_sort_key,
    load_dataset,
    parse_ref,
    release,
    release_tree,
    release_working_tree,
    select_cases,
)
from casework.dataset.stream import (
    CaseVisitor,
    DatasetScan,
    ProgressCallback,
    scan_dataset,
    working_tree_bytes,
)
from casework.dataset.tools import ToolDecl, declared_tools, parse_tool_declarations
from casework.dataset.versions import (
    CASES_FILE,
    VERSIONS_FILE,
    content_hash,
    purge_cached,
    read_versions,
)

__all__ = [
    "CASES_FILE",
    "PARALLEL_MIN_BYTES",
    "VERSIONS_FILE",
    "CaseChange",
    "CaseJob",
    "CaseVisitor",
    "CatalogueError",
    "CatalogueFiles",
    "CheckReport",
    "Dataset",
    "DatasetChecks",
    "DatasetDiff",
    "DatasetScan",
    "Finding",
    "MigrationResult",
    "ProgressCallback",
    "RenameMap",
    "ToolDecl",
    "TreeRelease",
    "VersionDiff",
    "canonical_bytes",
    "canonical_line",
    "case_catalogue",
    "check_contradictions",
    "check_dataset",
    "check_tools",
    "content_hash",
    "contradictory_tools",
    "count_cases",
    "dataset_lock",
    "dataset_versions",
    "declared_tools",
    "diff_cases",
    "diff_versions",
    "dump_record",
    "expired_cases",
    "file_sha256",
    "hash_of",
    "json_objects",
    "label_sort_key",
    "load_dataset",
    "load_renames",
    "migrate_cases",
    "migrate_dataset",
    "parallel_workers",
    "parse_records",
    "parse_ref",
    "parse_tool_declarations",
    "problems_from_validation",
    "purge_cached",
    "read_cases",
    "read_records",
    "read_versions",
    "release",
    "release_tree",
    "release_working_tree",
    "scan_dataset",
    "scan_dataset_chunks",
    "select_cases",
    "tmp_dir",
    "working_tree_bytes",
    "write_cases",
    "write_records",
]
