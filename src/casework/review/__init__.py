"""Verdict review: people grade the judge's verdicts on replies blind, and the judge is certified.

`casework judge sample` draws judge-decided findings from runs onto blind sheets (stratified by
slice, check kind and the judge's verdict; never tuning records or items drawn before);
`judge verdicts import` stores people's answers and their agreement; `judge certify` measures the
judge's TPR and TNR against people with intervals and stores certifications, which make its
verdicts admissible (:meth:`casework.grading.Judge.admissible`). Entry points:
:func:`sample_verdicts`, :func:`import_verdicts`, :func:`certify_judge`, :func:`add_tuning`.
"""

from casework.review._certify import (
    CertificationResult,
    CertifyReport,
    Compared,
    Pin,
    Settings,
    certify_counts,
    certify_judge,
    compare,
    settings_of,
)
from casework.review._items import (
    ReviewItem,
    assign_reviewers,
    draw,
    excluded_by,
    item_key,
    run_items,
    sheet_id,
)
from casework.review._sample import (
    TUNING_FILE,
    SampleReport,
    add_tuning,
    check_key,
    read_tuning,
    sample_verdicts,
    tuning_path,
)
from casework.review._sheets import (
    CSV_COLUMNS,
    QUESTIONS,
    SheetFormat,
    SheetVerdict,
    read_verdict_sheet,
    render_sheet,
    sheet_line,
)
from casework.review._verdicts import (
    HumanAgreement,
    VerdictImport,
    human_agreement,
    import_verdicts,
)

__all__ = [
    "CSV_COLUMNS",
    "QUESTIONS",
    "TUNING_FILE",
    "CertificationResult",
    "CertifyReport",
    "Compared",
    "HumanAgreement",
    "Pin",
    "ReviewItem",
    "SampleReport",
    "Settings",
    "SheetFormat",
    "SheetVerdict",
    "VerdictImport",
    "add_tuning",
    "assign_reviewers",
    "certify_counts",
    "certify_judge",
    "check_key",
    "compare",
    "draw",
    "excluded_by",
    "human_agreement",
    "import_verdicts",
    "item_key",
    "read_tuning",
    "read_verdict_sheet",
    "render_sheet",
    "run_items",
    "sample_verdicts",
    "settings_of",
    "sheet_id",
    "sheet_line",
    "tuning_path",
]
