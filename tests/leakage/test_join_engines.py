"""The exact join's two candidate filters (one or two shared prefix shingles) find the same pairs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casework.leakage import exact_join
from casework.leakage.join import TWO_PREFIX_RATIO, choose_prefix_tokens
from casework.shingling._sets import I64, ShingleSets
from casework.shingling._shingles import shingle_sets
from tests.leakage.corpora import planted
from tests.leakage.test_join import brute_force, corpus

THRESHOLDS = st.sampled_from([0.3, 0.5, 0.7, 0.8, 0.9, 1.0])


def _same(a: ShingleSets, threshold: float, groups: I64 | None = None) -> None:
    one = exact_join(a, threshold, groups=groups, prefix_tokens=1)
    two = exact_join(a, threshold, groups=groups, prefix_tokens=2)
    auto = exact_join(a, threshold, groups=groups)
    for other in (two, auto):
        assert other.left.tolist() == one.left.tolist()
        assert other.right.tolist() == one.right.tolist()
        assert other.shared.tolist() == one.shared.tolist()
        assert other.jaccard.tolist() == one.jaccard.tolist()


@settings(max_examples=200, deadline=None)
@given(corpus, THRESHOLDS, st.integers(1, 3))
def test_two_shingle_prefix_equals_brute_force(texts: list[str], threshold: float, k: int) -> None:
    sets = shingle_sets(texts, k)
    found = exact_join(sets, threshold, prefix_tokens=2)
    assert found.as_set() == set(brute_force(sets, threshold))
    _same(sets, threshold)


@settings(max_examples=60, deadline=None)
@given(corpus, st.lists(st.integers(0, 2), min_size=25, max_size=25), THRESHOLDS)
def test_two_shingle_prefix_across_groups(texts: list[str], codes: list[int], t: float) -> None:
    sets = shingle_sets(texts)
    groups = codes[: len(texts)]
    found = exact_join(sets, t, groups=np.array(groups, dtype=np.int64), prefix_tokens=2)
    assert found.as_set() == set(brute_force(sets, t, groups))


@pytest.mark.parametrize("threshold", [0.5, 0.8])
def test_both_filters_agree_on_the_planted_corpus(threshold: float) -> None:
    sets = shingle_sets(planted(600, seed=5))
    _same(sets, threshold)
    assert len(exact_join(sets, threshold, prefix_tokens=2)) > 20


def test_the_choice_is_deterministic_and_follows_the_estimate() -> None:
    distinct = shingle_sets([f"word{i} other{i} third{i} fourth{i}" for i in range(50)])
    assert choose_prefix_tokens(distinct, 0.8) == 1  # rare prefixes: no pair to enumerate
    # Every row's prefix holds the same common shingles: quadratic for one shared shingle.
    common = shingle_sets([f"a b c d e f g h i j k l {i}" for i in range(400)], 1)
    assert choose_prefix_tokens(common, 0.5) == 2
    assert choose_prefix_tokens(common, 0.5) == choose_prefix_tokens(common, 0.5)
    assert TWO_PREFIX_RATIO > 1
    _same(common, 0.5)


def test_prefix_tokens_is_checked() -> None:
    with pytest.raises(ValueError, match=r"prefix_tokens must be 1, 2 or None\. Got 3\."):
        exact_join(shingle_sets(["a b c", "a b c"]), 0.8, prefix_tokens=3)
