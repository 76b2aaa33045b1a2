"""Words, k-shingles and set similarity: the one definition every stage measures text with.

Leakage scans and synthetic-variant checks both measure "how alike are two texts" with these:
:func:`tokenize` (lowercase, maximal runs of Unicode letters and numbers), :func:`shingles`,
:func:`jaccard` and :func:`containment` (both 0.0 on empty sets), and the vectorised batch path
:func:`shingle_sets` over Arrow buffers with stable 64-bit :func:`shingle_hash` values.
"""

from casework.shingling._shingles import containment, jaccard, shingles, tokenize

__all__ = [
    "containment",
    "jaccard",
    "shingles",
    "tokenize",
]
