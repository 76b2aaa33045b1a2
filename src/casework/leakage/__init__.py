"""Leakage: near-duplicates across splits, rows copied into prompts, rows inside training corpora.

Entry points: :func:`scan_dataset` (cross-split scan recorded as review flags), :func:`decide`
and :func:`resolve` (the review flow, kept in `datasets/<name>/leakage.jsonl`: :func:`read_flags`),
:func:`unresolved_flags` (for the gate),
:func:`check_prompts`, :func:`scan_corpus`, :func:`embedding_duplicates`; the engines underneath:
:func:`shingle_sets`, :func:`exact_join`, :func:`lsh_join`, :func:`choose_params`.
"""

from casework.leakage.batches import sets_of
from casework.leakage.corpus import CorpusReport, scan_corpus
from casework.leakage.dataset_scan import ScanReport, scan_dataset
from casework.leakage.flags import Decision, Flag
from casework.leakage.join import exact_join
from casework.leakage.lsh import choose_params, lsh_join
from casework.leakage.prompt import PromptReport, check_prompts
from casework.leakage.review import decide, list_flags, resolve
from casework.leakage.scan import Engine, Method

__all__ = [
    "CorpusReport",
    "Decision",
    "Engine",
    "Flag",
    "Method",
    "PromptReport",
    "ScanReport",
    "check_prompts",
    "choose_params",
    "decide",
    "exact_join",
    "list_flags",
    "lsh_join",
    "resolve",
    "scan_corpus",
    "scan_dataset",
    "sets_of",
]
