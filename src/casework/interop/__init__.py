"""Importers and exporters between casework datasets and other eval tools' formats, by format.

- ``adk``: Google ADK eval sets both ways: :func:`import_adk` / :func:`export_adk` over
  :func:`read_adk_file` and the pure conversion (:func:`cases_from_adk`, :func:`eval_set_from_cases`).
- ``inspect``: Inspect AI samples out (:func:`export_inspect_samples`) and logs read as results.
- ``tau2``: τ²-bench domains in (:func:`import_tau2`) and τ-bench results read as results.
- ``generic``: rows with ``--map`` (JSONL, a JSON list, CSV) as labelled cases
  (:func:`import_cases`; Inspect samples too, with Inspect's defaults) and JSONL results.
- ``fncall``: function-calling rows (When2Call, BFCL, similar JSONL): :func:`import_fncall`.
- ``junit``, ``otel``, ``openinference``: a run's verdicts rendered for CI and observability
  tools, over the format-neutral ``evaluations``.

Two commands dispatch to the formats: :func:`import_run` (``run_import``: another tool's results,
read by :func:`read_results`, become a casework run log; :func:`run_log_schema` is a line's JSON
Schema) and :func:`export_verdicts` (``verdicts_out``). :func:`suggest_tools` (``tools_suggest``)
reads tool declarations from ADK files or traces.
"""

from casework.interop.results import RESULT_FORMATS
from casework.interop.run_import import RunImportOptions, import_run, run_log_schema
from casework.interop.tools_suggest import suggest_tools
from casework.interop.verdicts_out import VerdictFormat, export_verdicts

__all__ = [
    "RESULT_FORMATS",
    "RunImportOptions",
    "VerdictFormat",
    "export_verdicts",
    "import_run",
    "run_log_schema",
    "suggest_tools",
]
