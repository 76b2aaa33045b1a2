"""Importers and exporters between casework datasets and other eval tools' formats.

Google ADK eval sets: :func:`import_adk` / :func:`export_adk` (project level, in ``adk_io``) over
reading ADK's file shapes (:func:`read_adk_file`, in ``adk_format``) and the pure conversion both
ways (:func:`cases_from_adk`, :func:`eval_set_from_cases`, in ``adk``).
"""

from casework.interop.adk import (
    GUIDELINE_VERSION,
    IN_ORDER_REF,
    RUBRIC,
    AdkExport,
    ImportedCase,
    ImportOptions,
    case_from_adk,
    case_id_for,
    cases_from_adk,
    eval_set_from_cases,
)
from casework.interop.adk_format import (
    AdkEvalCase,
    AdkFile,
    AdkFormat,
    AdkInvocation,
    AdkToolUse,
    parse_adk,
    read_adk_file,
)
from casework.interop.adk_io import ExportReport, ImportReport, export_adk, import_adk

__all__ = [
    "GUIDELINE_VERSION",
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
]
