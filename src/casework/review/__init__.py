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
from casework.review._decisions import decide_from_file
from casework.review._disagreement import DISAGREEMENT, disagreement_names
from casework.review._exchange import export_review_sheets, import_review_sheets
from casework.review._generated_case import generated_case_item
from casework.review._kinds import review_kind, review_kinds
from casework.review._leakage_pair import LEAKAGE_PAIR
from casework.review._names import JUDGE_VERDICT
from casework.review._queue import (
    STATUSES,
    add_items,
    decide_task,
    get_task,
    list_tasks,
    sync_leakage,
    sync_review,
)
from casework.review._sample import TUNING_FILE, add_tuning, sample_verdicts
from casework.review._task import ReviewTask
from casework.review._verdicts import import_verdicts

__all__ = [
    "DISAGREEMENT",
    "JUDGE_VERDICT",
    "LEAKAGE_PAIR",
    "STATUSES",
    "TUNING_FILE",
    "ApplyReport",
    "ReviewTask",
    "add_items",
    "add_tuning",
    "apply_decisions",
    "decide_from_file",
    "decide_task",
    "disagreement_names",
    "export_review_sheets",
    "generated_case_item",
    "get_task",
    "import_review_sheets",
    "import_verdicts",
    "list_tasks",
    "review_kind",
    "review_kinds",
    "sample_verdicts",
    "sync_leakage",
    "sync_review",
]
