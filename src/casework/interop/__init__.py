"""Importers and exporters between casework datasets and other eval tools' formats.

Google ADK eval sets: :func:`import_adk` / :func:`export_adk` (project level, in ``adk_io``) over
reading ADK's file shapes (:func:`read_adk_file`, in ``adk_format``) and the pure conversion both
ways (:func:`cases_from_adk`, :func:`eval_set_from_cases`, in ``adk``).

Results of other tools (τ-bench, Inspect AI, generic JSONL): :func:`import_run` writes them as a
casework run log (``run_import``) over :func:`read_results` (``results_formats``); the run-log
line's JSON Schema is :func:`run_log_schema`. A run's verdicts out: :func:`export_verdicts` (JUnit
XML, OTLP `gen_ai.evaluation.result` events, OpenInference span annotations; ``verdicts_out``).
Labelled cases from rows (generic JSONL with ``--map``, Inspect samples): :func:`import_cases`,
and back out as Inspect samples: :func:`export_inspect_samples` (``cases_in``).
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
from casework.interop.cases_in import (
    CASE_FIELDS,
    CASE_FORMATS,
    CaseDefaults,
    CaseFormat,
    CasesImportReport,
    Row,
    cases_from_rows,
    export_inspect_samples,
    import_cases,
    inspect_samples,
    parse_case_map,
    read_rows,
)
from casework.interop.results_formats import (
    RESULT_FIELDS,
    RESULT_FORMATS,
    ExternalResults,
    ExternalTrial,
    ResultFormat,
    read_results,
)
from casework.interop.run_import import (
    IMPORTED_CHECK,
    IMPORTED_SPEC,
    STANDALONE_DATASET,
    RunImportOptions,
    RunImportReport,
    RunPin,
    import_run,
    run_log_schema,
    run_records,
    standalone_pin,
)
from casework.interop.verdicts_out import (
    EVALUATION_EVENT,
    VERDICT_FORMATS,
    VERDICT_NAME,
    Evaluation,
    VerdictExport,
    VerdictFormat,
    evaluations,
    export_verdicts,
    junit_xml,
    openinference_annotations,
    otlp_logs,
    trace_ids,
)

__all__ = [
    "CASE_FIELDS",
    "CASE_FORMATS",
    "EVALUATION_EVENT",
    "GUIDELINE_VERSION",
    "IMPORTED_CHECK",
    "IMPORTED_SPEC",
    "IN_ORDER_REF",
    "RESULT_FIELDS",
    "RESULT_FORMATS",
    "RUBRIC",
    "STANDALONE_DATASET",
    "VERDICT_FORMATS",
    "VERDICT_NAME",
    "AdkEvalCase",
    "AdkExport",
    "AdkFile",
    "AdkFormat",
    "AdkInvocation",
    "AdkToolUse",
    "CaseDefaults",
    "CaseFormat",
    "CasesImportReport",
    "Evaluation",
    "ExportReport",
    "ExternalResults",
    "ExternalTrial",
    "ImportOptions",
    "ImportReport",
    "ImportedCase",
    "ResultFormat",
    "Row",
    "RunImportOptions",
    "RunImportReport",
    "RunPin",
    "VerdictExport",
    "VerdictFormat",
    "case_from_adk",
    "case_id_for",
    "cases_from_adk",
    "cases_from_rows",
    "eval_set_from_cases",
    "evaluations",
    "export_adk",
    "export_inspect_samples",
    "export_verdicts",
    "import_adk",
    "import_cases",
    "import_run",
    "inspect_samples",
    "junit_xml",
    "openinference_annotations",
    "otlp_logs",
    "parse_adk",
    "parse_case_map",
    "read_adk_file",
    "read_results",
    "read_rows",
    "run_log_schema",
    "run_records",
    "standalone_pin",
    "trace_ids",
]
