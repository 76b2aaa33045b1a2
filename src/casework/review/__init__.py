"""The review queue: every human decision is a kind of one generic item, and people decide them.

`casework judge sample` draws judge-decided findings from runs onto blind sheets (stratified by
slice, check kind and the judge's verdict; never tuning records or items drawn before) and
`review import` stores people's answers and their agreement: those are the queue's
``judge-verdict`` items, which :func:`casework.grading.certify_judge` then measures the judge
against. Entry points: :func:`sample_verdicts`, :func:`import_verdicts`, :func:`add_tuning`.

The review queue (one generic item model, kinds plug in): every human decision is a kind.
:func:`sync_review` builds a dataset's ``leakage-pair`` (open leakage flags), ``disagreement``
(open disagreements between blind labels) and ``judge-verdict`` (sampled, unanswered judge
verdicts) items; :func:`generated_case_item` + :func:`add_items` build ``generated-case`` items;
:func:`list_tasks`, :func:`get_task` and :func:`decide_task` serve pages and `casework review`;
:func:`decide_from_file` decides items of any kind from a decisions file, all lines or none;
:func:`export_review_sheets` / :func:`import_review_sheets` carry decisions on sheets;
:func:`apply_decisions` releases a dataset's decided work as one version; :func:`register_kind`
adds a kind.
"""

from casework.review._apply import ApplyReport, apply_decisions
from casework.review._decisions import (
    DecisionsRead,
    ReviewDecision,
    decide_from_file,
    read_decisions,
)
from casework.review._disagreement import DISAGREEMENT, disagreement_names
from casework.review._exchange import (
    ReviewImport,
    export_review_sheets,
    import_review_sheets,
    sheet_kind,
)
from casework.review._generated_case import add_to_working_tree, generated_case_item
from casework.review._items import (
    ReviewItem,
    assign_reviewers,
    draw,
    excluded_by,
    item_key,
    run_items,
    sheet_id,
)
from casework.review._kinds import register_kind, review_kind, review_kinds
from casework.review._leakage_pair import LEAKAGE_PAIR, leakage_pair_items, pair_subject
from casework.review._names import JUDGE_VERDICT
from casework.review._queue import (
    STATUSES,
    AddReport,
    SyncReport,
    add_items,
    decide_task,
    get_task,
    list_tasks,
    sync_disagreements,
    sync_judge_verdicts,
    sync_leakage,
    sync_review,
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
    verdict_signature,
)
from casework.review._spans import SharedSpans, shared_spans, words_with_spans
from casework.review._task import NewItem, ReviewKind, ReviewTask
from casework.review._verdicts import (
    HumanAgreement,
    VerdictImport,
    human_agreement,
    import_verdicts,
)

__all__ = [
    "CSV_COLUMNS",
    "DISAGREEMENT",
    "JUDGE_VERDICT",
    "LEAKAGE_PAIR",
    "QUESTIONS",
    "STATUSES",
    "TUNING_FILE",
    "AddReport",
    "ApplyReport",
    "DecisionsRead",
    "HumanAgreement",
    "NewItem",
    "ReviewDecision",
    "ReviewImport",
    "ReviewItem",
    "ReviewKind",
    "ReviewTask",
    "SampleReport",
    "SharedSpans",
    "SheetFormat",
    "SheetVerdict",
    "SyncReport",
    "VerdictImport",
    "add_items",
    "add_to_working_tree",
    "add_tuning",
    "apply_decisions",
    "assign_reviewers",
    "check_key",
    "decide_from_file",
    "decide_task",
    "disagreement_names",
    "draw",
    "excluded_by",
    "export_review_sheets",
    "generated_case_item",
    "get_task",
    "human_agreement",
    "import_review_sheets",
    "import_verdicts",
    "item_key",
    "leakage_pair_items",
    "list_tasks",
    "pair_subject",
    "read_decisions",
    "read_tuning",
    "read_verdict_sheet",
    "register_kind",
    "render_sheet",
    "review_kind",
    "review_kinds",
    "run_items",
    "sample_verdicts",
    "shared_spans",
    "sheet_id",
    "sheet_kind",
    "sheet_line",
    "sync_disagreements",
    "sync_judge_verdicts",
    "sync_leakage",
    "sync_review",
    "tuning_path",
    "verdict_signature",
    "words_with_spans",
]
