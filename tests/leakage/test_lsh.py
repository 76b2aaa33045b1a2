from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casework.leakage import choose_params, exact_join, lsh_join
from casework.leakage.lsh import LshParams, band_candidates, collision_probability, prefilter_cutoff
from casework.leakage.minhash import EMPTY, MinHasher, estimate_jaccard
from casework.shingling._shingles import shingle_sets
from tests.leakage.corpora import planted


def test_s_curve_reproduces_mining_of_massive_datasets() -> None:
    # MMDS 3rd ed., Figure 3.11: b = 20, r = 5.
    table = {0.2: 0.006, 0.3: 0.047, 0.4: 0.186, 0.5: 0.470, 0.6: 0.802, 0.7: 0.975, 0.8: 0.9996}
    for s, value in table.items():
        assert collision_probability(s, 20, 5) == pytest.approx(value, abs=6e-4)


def test_datasketch_default_misses_most_pairs_at_the_threshold() -> None:
    # datasketch picks 9 x 13 for threshold 0.8 at 128 permutations.
    assert collision_probability(0.8, 9, 13) == pytest.approx(0.40, abs=0.01)


def test_params_for_the_default_threshold() -> None:
    params = choose_params(0.8, 256)
    assert params == LshParams(0.8, 26, 8)
    assert params.recall(0.8) >= 0.99
    assert params.num_perm == 208
    assert next(s for s, _ in params.curve()) == 0.5


@settings(max_examples=60, deadline=None)
@given(st.floats(0.3, 1.0), st.sampled_from([64, 128, 256, 512]))
def test_chosen_params_reach_recall_within_budget(threshold: float, num_perm: int) -> None:
    try:
        params = choose_params(threshold, num_perm)
    except ValueError as exc:
        assert "too small" in str(exc)
        return
    assert params.num_perm <= num_perm
    assert params.recall(threshold) >= 0.99
    # Recall only grows with similarity.
    assert params.recall(min(1.0, threshold + 0.05)) >= params.recall(threshold)


def test_params_errors() -> None:
    with pytest.raises(
        ValueError, match=r"num_perm 16 is too small to reach recall 0\.99 at Jaccard 0\.1\."
    ):
        choose_params(0.1, 16)
    with pytest.raises(ValueError, match=r"threshold must be in \(0, 1\]. Got 1.5."):
        choose_params(1.5)


def test_minhash_is_deterministic_and_seeded() -> None:
    sets = shingle_sets(["where is my refund for order 1", "", "hi"])
    a = MinHasher(64, seed=3).signatures(sets)
    b = MinHasher(64, seed=3, threads=1).signatures(sets)
    c = MinHasher(64, seed=4).signatures(sets)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    assert (a[1] == EMPTY).all()
    assert a.shape == (3, 64) and a.dtype == np.uint32


def test_minhash_estimates_jaccard() -> None:
    sets = shingle_sets(planted(600, seed=1, share=0.3))
    pairs = exact_join(sets, 0.4)
    sig = MinHasher(256, seed=5).signatures(sets)
    est = estimate_jaccard(sig, pairs.left, pairs.right)
    error = est - pairs.jaccard
    assert len(pairs) > 100
    assert abs(error.mean()) < 0.02
    theory = np.sqrt((pairs.jaccard * (1 - pairs.jaccard)).mean() / 256)
    assert error.std() < 1.5 * theory


corpus = st.lists(
    st.lists(
        st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h"]), min_size=0, max_size=10
    ).map(" ".join),
    min_size=1,
    max_size=20,
)


@settings(max_examples=60, deadline=None)
@given(corpus, st.data())
def test_lsh_never_misses_an_exact_duplicate(texts: list[str], data: st.DataObject) -> None:
    copies = data.draw(st.lists(st.integers(0, len(texts) - 1), min_size=1, max_size=5))
    rows = texts + [texts[i] for i in copies]
    sets = shingle_sets(rows)
    found, _ = lsh_join(sets, 0.9, num_perm=128)
    got = found.as_set()
    for n, i in enumerate(copies):
        j = len(texts) + n
        if len(sets.row(i)):
            assert (min(i, j), max(i, j)) in got


def test_lsh_recall_and_precision_on_a_planted_corpus() -> None:
    sets = shingle_sets(planted(3000, seed=7, share=0.15))
    truth = exact_join(sets, 0.8)
    found, params = lsh_join(sets, 0.8)
    assert params == choose_params(0.8, 256)
    assert len(truth) > 200
    assert found.as_set() <= truth.as_set()  # precision 1.0: every pair verified exactly
    assert len(found.as_set() & truth.as_set()) / len(truth) >= 0.99
    assert np.all(found.jaccard >= 0.8)


def test_groups_restrict_candidates_to_cross_group_pairs() -> None:
    texts = ["where is my refund now", "where is my refund now", "where is my refund now"]
    sets = shingle_sets(texts)
    params = choose_params(0.8, 128)
    sig = MinHasher(params.num_perm).signatures(sets)
    left, right = band_candidates(sig, params, np.array([0, 0, 1], dtype=np.int64))
    assert sorted(zip(left.tolist(), right.tolist(), strict=True)) == [(0, 2), (1, 2)]


def test_prefilter_keeps_pairs_at_the_threshold() -> None:
    cutoff = prefilter_cutoff(208, 0.8)
    assert 0.6 < cutoff < 0.75
