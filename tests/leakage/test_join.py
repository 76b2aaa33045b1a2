from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casework.leakage import exact_join
from casework.leakage.join import prefix_length, required_overlap
from casework.leakage.pairs import dedupe_pairs, intersection_sizes, pairs_within_groups
from casework.shingling._sets import ShingleSets
from casework.shingling._shingles import shingle_sets
from tests.leakage.corpora import planted


def brute_force(
    sets: ShingleSets, threshold: float, groups: list[int] | None = None
) -> dict[tuple[int, int], float]:
    rows = [set(sets.row(i).tolist()) for i in range(len(sets))]
    out = {}
    for i, j in itertools.combinations(range(len(rows)), 2):
        if groups is not None and groups[i] == groups[j]:
            continue
        a, b = rows[i], rows[j]
        union = len(a | b)
        if union and len(a & b) / union >= threshold:
            out[(i, j)] = len(a & b) / union
    return out


vocab = st.sampled_from(
    ["refund", "order", "where", "is", "my", "please", "help", "broken", "mug", "1234"]
)
corpus = st.lists(st.lists(vocab, min_size=0, max_size=9).map(" ".join), min_size=2, max_size=25)


@settings(max_examples=120, deadline=None)
@given(corpus, st.sampled_from([0.3, 0.5, 0.7, 0.8, 0.9, 1.0]), st.integers(1, 3))
def test_exact_join_equals_brute_force(texts: list[str], threshold: float, k: int) -> None:
    sets = shingle_sets(texts, k)
    found = exact_join(sets, threshold)
    expected = brute_force(sets, threshold)
    assert found.as_set() == set(expected)
    for a, b, j in zip(
        found.left.tolist(), found.right.tolist(), found.jaccard.tolist(), strict=True
    ):
        assert j == pytest.approx(expected[(a, b)])


@settings(max_examples=60, deadline=None)
@given(corpus, st.lists(st.integers(0, 2), min_size=25, max_size=25))
def test_exact_join_across_groups_equals_brute_force(texts: list[str], codes: list[int]) -> None:
    sets = shingle_sets(texts)
    groups = codes[: len(texts)]
    found = exact_join(sets, 0.6, groups=np.array(groups, dtype=np.int64))
    assert found.as_set() == set(brute_force(sets, 0.6, groups))


def test_exact_join_on_planted_corpus() -> None:
    sets = shingle_sets(planted(400, seed=4))
    found = exact_join(sets, 0.8)
    assert found.as_set() == set(brute_force(sets, 0.8))
    assert len(found) > 20


def test_filters_match_their_definitions() -> None:
    assert prefix_length(10, 0.8) == 3
    assert prefix_length(0, 0.8) == 0
    assert prefix_length(5, 1.0) == 1
    assert required_overlap(10, 10, 0.8) == 9
    assert required_overlap(4, 6, 0.5) == 4


def test_threshold_is_checked() -> None:
    with pytest.raises(ValueError, match=r"threshold must be in \(0, 1\]. Got 0.0."):
        exact_join(shingle_sets(["a b c", "a b c"]), 0.0)


def test_intersection_sizes_and_pairs() -> None:
    rows = [[1, 3, 5], [3, 5, 7, 9], [], [1, 2, 3, 4, 5]]
    offsets = np.array([0, 3, 7, 7, 12], dtype=np.int64)
    values = np.array([v for r in rows for v in r], dtype=np.int64)
    left = np.array([0, 0, 1, 2], dtype=np.int64)
    right = np.array([1, 3, 3, 0], dtype=np.int64)
    assert intersection_sizes(values, offsets, left, right).tolist() == [2, 3, 2, 0]
    a, b = pairs_within_groups(
        np.array([5, 6, 7, 8], dtype=np.int64), np.array([1, 2, 1, 1], dtype=np.int64)
    )
    assert sorted(zip(a.tolist(), b.tolist(), strict=True)) == [(5, 7), (5, 8), (7, 8)]
    a, b = dedupe_pairs(np.array([1, 1, 2, 3]), np.array([2, 2, 2, 4]), 10)
    assert list(zip(a.tolist(), b.tolist(), strict=True)) == [(1, 2), (3, 4)]
