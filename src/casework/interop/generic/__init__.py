"""Generic rows with ``--map``: labelled cases from JSONL, a JSON list or CSV, and JSONL results.

Entry points: :func:`import_cases` (`casework import jsonl`, and Inspect samples with Inspect's
defaults) over :func:`read_rows` and :func:`cases_from_rows`; :func:`read_generic_results` (the
``generic`` format of `casework import run`). :class:`CaseCollector`, :class:`RowProblem` and
:func:`resolve` are shared with the other row formats (function-calling rows).
"""

from casework.interop.generic._cases import CaseDefaults, import_cases, read_rows

__all__ = [
    "CaseDefaults",
    "import_cases",
    "read_rows",
]
