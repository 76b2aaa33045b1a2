"""Did a transform change anything? Word 3-shingle Jaccard between a variant and its seed.

Entry points: :func:`shingles`, :func:`jaccard`, :func:`near_duplicate` (at or above 0.9).
"""

from __future__ import annotations

import re

__all__ = ["NEAR_DUPLICATE", "jaccard", "near_duplicate", "shingles", "words"]

#: Jaccard similarity at or above which a variant is "nothing changed" and is rejected.
NEAR_DUPLICATE = 0.9

_WORD = re.compile(r"[\w'@.-]+", re.UNICODE)


def words(text: str) -> list[str]:
    """Lower-cased word tokens (identifiers such as `ORD-1042` and emails stay whole)."""
    return [w.strip(".'-") for w in _WORD.findall(text.lower()) if w.strip(".'-")]


def shingles(text: str, k: int = 3) -> set[tuple[str, ...]]:
    """The set of ``k`` consecutive words; a text shorter than ``k`` words is one shingle.

    Broder (1997), "On the resemblance and containment of documents", §2: the 4-shingling of
    (a, rose, is, a, rose, is, a, rose) is {(a, rose, is, a), (rose, is, a, rose), (is, a, rose, is)}.

    >>> sorted(shingles("a rose is a rose is a rose", k=4))
    [('a', 'rose', 'is', 'a'), ('is', 'a', 'rose', 'is'), ('rose', 'is', 'a', 'rose')]
    """
    tokens = words(text)
    if len(tokens) < k:
        return {tuple(tokens)} if tokens else set()
    return {tuple(tokens[i : i + k]) for i in range(len(tokens) - k + 1)}


def jaccard(a: str, b: str, k: int = 3) -> float:
    """Broder's resemblance |S(A) ∩ S(B)| / |S(A) ∪ S(B)| over ``k``-shingle sets.

    Two empty texts are identical (1.0). Worked by hand: the 3-shingles of "a rose is a rose is a
    rose" are {a rose is, rose is a, is a rose}; "a rose is a flower which is a rose" has 7, of
    which those 3 are shared, so the resemblance is 3/7.

    >>> round(jaccard("a rose is a rose is a rose", "a rose is a flower which is a rose"), 4)
    0.4286
    """
    sa, sb = shingles(a, k), shingles(b, k)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def near_duplicate(a: str, b: str, threshold: float = NEAR_DUPLICATE) -> tuple[bool, float]:
    """Whether ``b`` is a near-duplicate of ``a`` (identical, or Jaccard ≥ ``threshold``)."""
    if a == b:
        return True, 1.0
    score = jaccard(a, b)
    return score >= threshold, score
