"""Generic rows with ``--map``: labelled cases from JSONL, a JSON list or CSV, and JSONL results.

Entry points: :func:`import_cases` (`casework import jsonl`, and Inspect samples with Inspect's
defaults) over :func:`read_rows` and :func:`cases_from_rows`; :func:`read_generic_results` (the
``generic`` format of `casework import run`). :class:`CaseCollector`, :class:`RowProblem` and
:func:`resolve` are shared with the other row formats (function-calling rows).
"""

from casework.interop._paths import MISSING, resolve
from casework.interop.generic._cases import (
    CASE_FIELDS,
    CASE_FORMATS,
    CaseCollector,
    CaseDefaults,
    CaseFormat,
    CasesImportReport,
    Row,
    RowProblem,
    cases_from_rows,
    import_cases,
    parse_case_map,
    read_rows,
)
from casework.interop.generic._results import (
    RESULT_FIELDS,
    parse_field_map,
    read_generic_results,
)

__all__ = [
    "CASE_FIELDS",
    "CASE_FORMATS",
    "MISSING",
    "RESULT_FIELDS",
    "CaseCollector",
    "CaseDefaults",
    "CaseFormat",
    "CasesImportReport",
    "Row",
    "RowProblem",
    "cases_from_rows",
    "import_cases",
    "parse_case_map",
    "parse_field_map",
    "read_generic_results",
    "read_rows",
    "resolve",
]
