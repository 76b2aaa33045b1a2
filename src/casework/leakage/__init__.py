"""Leakage: near-duplicates across splits, rows copied into prompts, rows inside training corpora.

Entry points: :func:`scan_dataset` (cross-split scan recorded as review flags), :func:`decide`
and :func:`resolve` (the review flow, kept in `datasets/<name>/leakage.jsonl`: :func:`read_flags`),
:func:`unresolved_flags` (for the gate),
:func:`check_prompts`, :func:`scan_corpus`, :func:`embedding_duplicates`; the engines underneath:
:func:`shingle_sets`, :func:`exact_join`, :func:`lsh_join`, :func:`choose_params`.
"""

from casework.leakage.batches import sets_of
from casework.leakage.corpus import CorpusReport, scan_corpus
from casework.leakage.corpus_index import CorpusHit, build_index, score_documents
from casework.leakage.dataset_scan import ScanReport, scan_dataset
from casework.leakage.embed import CosinePair, cosine_pairs, embedding_duplicates
from casework.leakage.flagfile import LEAKAGE_FILE, flag_file, read_flags, write_flags
from casework.leakage.flags import Decision, Flag
from casework.leakage.join import (
    TWO_PREFIX_RATIO,
    choose_prefix_tokens,
    exact_join,
    prefix_length,
    required_overlap,
)
from casework.leakage.lsh import (
    LshParams,
    band_candidates,
    choose_params,
    collision_probability,
    lsh_join,
    prefilter_cutoff,
)
from casework.leakage.minhash import EMPTY, MinHasher, estimate_jaccard
from casework.leakage.pairs import Pairs, dedupe_pairs, intersection_sizes, pairs_within_groups
from casework.leakage.prompt import PromptHit, PromptReport, check_prompts, prompt_scores
from casework.leakage.ray_engine import ray_sketch
from casework.leakage.reading import corpus_files, iter_documents
from casework.leakage.review import ResolveReport, decide, list_flags, resolve, unresolved_flags
from casework.leakage.scan import (
    Engine,
    Method,
    ScanResult,
    SplitPair,
    find_split_pairs,
    shared_shingles,
)

__all__ = [
    "EMPTY",
    "LEAKAGE_FILE",
    "TWO_PREFIX_RATIO",
    "CorpusHit",
    "CorpusReport",
    "CosinePair",
    "Decision",
    "Engine",
    "Flag",
    "LshParams",
    "Method",
    "MinHasher",
    "Pairs",
    "PromptHit",
    "PromptReport",
    "ResolveReport",
    "ScanReport",
    "ScanResult",
    "SplitPair",
    "band_candidates",
    "build_index",
    "check_prompts",
    "choose_params",
    "choose_prefix_tokens",
    "collision_probability",
    "corpus_files",
    "cosine_pairs",
    "decide",
    "dedupe_pairs",
    "embedding_duplicates",
    "estimate_jaccard",
    "exact_join",
    "find_split_pairs",
    "flag_file",
    "intersection_sizes",
    "iter_documents",
    "list_flags",
    "lsh_join",
    "pairs_within_groups",
    "prefilter_cutoff",
    "prefix_length",
    "prompt_scores",
    "ray_sketch",
    "read_flags",
    "required_overlap",
    "resolve",
    "scan_corpus",
    "scan_dataset",
    "score_documents",
    "sets_of",
    "shared_shingles",
    "unresolved_flags",
    "write_flags",
]
