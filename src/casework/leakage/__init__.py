"""Leakage: near-duplicates across splits, rows copied into prompts, rows inside training corpora.

Entry points: :func:`scan_dataset` (cross-split scan recorded as review flags), :func:`decide`
and :func:`resolve` (the review flow), :func:`unresolved_flags` (for the gate),
:func:`check_prompts`, :func:`scan_corpus`, :func:`embedding_duplicates`; the engines underneath:
:func:`shingle_sets`, :func:`exact_join`, :func:`lsh_join`, :func:`choose_params`.
"""

from casework.leakage.corpus import (
    CorpusHit,
    CorpusReport,
    build_index,
    scan_corpus,
    score_documents,
)
from casework.leakage.embed import CosinePair, Embedder, cosine_pairs, embedding_duplicates
from casework.leakage.join import exact_join
from casework.leakage.lsh import LshParams, choose_params, collision_probability, lsh_join
from casework.leakage.minhash import MinHasher
from casework.leakage.pairs import Pairs
from casework.leakage.prompt import PromptHit, PromptReport, check_prompts, prompt_scores
from casework.leakage.review import (
    Flag,
    ResolveReport,
    ScanReport,
    decide,
    list_flags,
    resolve,
    scan_dataset,
    unresolved_flags,
)
from casework.leakage.scan import ScanResult, SplitPair, find_split_pairs
from casework.leakage.sets import ShingleSets
from casework.leakage.shingles import (
    containment,
    jaccard,
    shingle_hash,
    shingle_hashes,
    shingle_sets,
    shingles,
    tokenize,
)

__all__ = [
    "CorpusHit",
    "CorpusReport",
    "CosinePair",
    "Embedder",
    "Flag",
    "LshParams",
    "MinHasher",
    "Pairs",
    "PromptHit",
    "PromptReport",
    "ResolveReport",
    "ScanReport",
    "ScanResult",
    "ShingleSets",
    "SplitPair",
    "build_index",
    "check_prompts",
    "choose_params",
    "collision_probability",
    "containment",
    "cosine_pairs",
    "decide",
    "embedding_duplicates",
    "exact_join",
    "find_split_pairs",
    "jaccard",
    "list_flags",
    "lsh_join",
    "prompt_scores",
    "resolve",
    "scan_corpus",
    "scan_dataset",
    "score_documents",
    "shingle_hash",
    "shingle_hashes",
    "shingle_sets",
    "shingles",
    "tokenize",
    "unresolved_flags",
]
