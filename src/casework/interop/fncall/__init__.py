"""Function-calling rows in: When2Call, BFCL v4 as published, and similar JSONL.

Entry points: :func:`import_fncall` (project level) over the pure :func:`cases_from_fncall`;
BFCL's categories, acceptable values and multi-turn rows are read in :mod:`.bfcl`.
"""

from casework.interop.fncall._rows import (
    FNCALL_STYLES,
    OUTCOME_CLASSES,
    FncallOptions,
    cases_from_fncall,
    import_fncall,
    join_answers,
    parse_fncall_map,
)

__all__ = [
    "FNCALL_STYLES",
    "OUTCOME_CLASSES",
    "FncallOptions",
    "cases_from_fncall",
    "import_fncall",
    "join_answers",
    "parse_fncall_map",
]
