"""Did a transform change anything? Word 3-shingle Jaccard between a variant and its seed.

Words, shingles and Jaccard are :mod:`casework.shingling`'s, the same the leakage scan uses.
Entry point: :func:`near_duplicate` (identical, or Jaccard at or above 0.9).
"""

from __future__ import annotations

from casework.shingling import jaccard, shingles

__all__ = ["NEAR_DUPLICATE", "near_duplicate"]

#: Jaccard similarity at or above which a variant is "nothing changed" and is rejected.
NEAR_DUPLICATE = 0.9


def near_duplicate(a: str, b: str, threshold: float = NEAR_DUPLICATE) -> tuple[bool, float]:
    """Whether ``b`` is a near-duplicate of ``a``: identical, or Jaccard ≥ ``threshold``.

    Two texts without a single word (punctuation only, or empty) are near-duplicates of each
    other: no word changed. Jaccard itself scores such a pair 0.0 (nothing to compare).

    >>> near_duplicate("where is my refund for order ORD-1042", "where is my refund for order ORD-1042?")
    (True, 1.0)
    """
    if a == b:
        return True, 1.0
    sa, sb = shingles(a), shingles(b)
    if not sa and not sb:
        return True, 1.0
    score = jaccard(sa, sb)
    return score >= threshold, score
