"""Google ADK eval sets, both ways: reading ADK's file shapes, converting, and a project's import/export.

Entry points: :func:`import_adk` / :func:`export_adk` (project level: a new dataset version in, a
version out), :func:`read_adk_file` / :func:`parse_adk` (ADK's three file shapes, no casework
semantics) and the pure conversion :func:`cases_from_adk` / :func:`eval_set_from_cases`.
"""

from casework.interop.adk._convert import (
    GUIDELINE_VERSION,
    IN_ORDER_REF,
    INTERMEDIATE_AUTHOR,
    RUBRIC,
    AdkExport,
    ImportedCase,
    ImportOptions,
    case_from_adk,
    case_id_for,
    cases_from_adk,
    eval_set_from_cases,
    reference_reply,
)
from casework.interop.adk._format import (
    AdkEvalCase,
    AdkFile,
    AdkFormat,
    AdkInvocation,
    AdkToolUse,
    parse_adk,
    read_adk_file,
)
from casework.interop.adk._project import (
    ExportReport,
    ImportReport,
    export_adk,
    import_adk,
)

__all__ = [
    "GUIDELINE_VERSION",
    "INTERMEDIATE_AUTHOR",
    "IN_ORDER_REF",
    "RUBRIC",
    "AdkEvalCase",
    "AdkExport",
    "AdkFile",
    "AdkFormat",
    "AdkInvocation",
    "AdkToolUse",
    "ExportReport",
    "ImportOptions",
    "ImportReport",
    "ImportedCase",
    "case_from_adk",
    "case_id_for",
    "cases_from_adk",
    "eval_set_from_cases",
    "export_adk",
    "import_adk",
    "parse_adk",
    "read_adk_file",
    "reference_reply",
]
