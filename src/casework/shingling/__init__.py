"""Words, k-shingles and set similarity: the one definition every stage measures text with.

Leakage scans and synthetic-variant checks both measure "how alike are two texts" with these:
:func:`tokenize` (lowercase, maximal runs of Unicode letters and numbers), :func:`shingles`,
:func:`jaccard` and :func:`containment` (both 0.0 on empty sets), and the vectorised batch path
:func:`shingle_sets` over Arrow buffers with stable 64-bit :func:`shingle_hash` values.
"""

from casework.shingling._sets import (
    I64,
    U64,
    ShingleSets,
    gather_segments,
    segment_ids,
    sort_unique_segments,
)
from casework.shingling._shingles import (
    DEFAULT_K,
    DEFAULT_SEED,
    Tokens,
    containment,
    jaccard,
    shingle_hash,
    shingle_hashes,
    shingle_sets,
    shingles,
    tokenize,
    tokenize_batch,
)

__all__ = [
    "DEFAULT_K",
    "DEFAULT_SEED",
    "I64",
    "U64",
    "ShingleSets",
    "Tokens",
    "containment",
    "gather_segments",
    "jaccard",
    "segment_ids",
    "shingle_hash",
    "shingle_hashes",
    "shingle_sets",
    "shingles",
    "sort_unique_segments",
    "tokenize",
    "tokenize_batch",
]
