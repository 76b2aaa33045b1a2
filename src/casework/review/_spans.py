"""Where the shingles two texts share sit in each text, as character spans a page can highlight.

Words are found with the rule of :func:`casework.shingling.tokenize` (maximal runs of letters and
numbers, compared lowercased), keeping each word's position in the original text; a shingle's
span runs from its first word's start to its last word's end.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from casework.shingling import shingles

# Letters and numbers: \w without the underscore (the same classes as tokenize's \p{L}\p{N}).
_WORD = re.compile(r"[^\W_]+")

#: Shared shingles listed one by one in a payload (the highlight covers all of them).
SHINGLES_LISTED = 200


@dataclass(frozen=True)
class SharedSpans:
    """The shingles two texts share and where they sit.

    Attributes:
        shingles: Shared shingles in their order in the left text, each with its spans in the
            left and right text (``[start, end)`` character offsets), at most
            :data:`SHINGLES_LISTED`.
        count: Shared shingles in all.
        left: Merged spans covering every shared shingle in the left text.
        right: The same in the right text.
    """

    shingles: list[dict[str, object]]
    count: int
    left: list[list[int]]
    right: list[list[int]]


def words_with_spans(text: str) -> list[tuple[str, int, int]]:
    """Each word of ``text`` lowercased, with its start and end offset in ``text``."""
    return [(m.group().lower(), m.start(), m.end()) for m in _WORD.finditer(text)]


def _windows(text: str, k: int) -> dict[str, list[list[int]]]:
    words = words_with_spans(text)
    if not words:
        return {}
    if len(words) < k:
        return {" ".join(w for w, _, _ in words): [[words[0][1], words[-1][2]]]}
    found: dict[str, list[list[int]]] = defaultdict(list)
    for i in range(len(words) - k + 1):
        window = words[i : i + k]
        found[" ".join(w for w, _, _ in window)].append([window[0][1], window[-1][2]])
    return found


def _merge(spans: list[list[int]]) -> list[list[int]]:
    out: list[list[int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([start, end])
    return out


def shared_spans(left: str, right: str, k: int) -> SharedSpans:
    """The k-shingles ``left`` and ``right`` share, with their character spans in both texts.

    Example:
        >>> s = shared_spans("Where is my refund?", "so where is my refund", 3)
        >>> s.count, s.left, s.right
        (2, [[0, 18]], [[3, 21]])
    """
    mine, theirs = _windows(left, k), _windows(right, k)
    common = set(shingles(left, k)) & set(shingles(right, k))
    ordered = [s for s in mine if s in common and s in theirs]
    return SharedSpans(
        [{"shingle": s, "left": mine[s], "right": theirs[s]} for s in ordered[:SHINGLES_LISTED]],
        len(ordered),
        _merge([span for s in ordered for span in mine[s]]),
        _merge([span for s in ordered for span in theirs[s]]),
    )
