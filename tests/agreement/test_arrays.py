"""NumPy arrays take a vectorised path: same tables, same kappa, same errors as lists."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from casework.agreement import cohen_kappa
from casework.agreement.table import confusion_matrix

PAIRS = st.integers(1, 60).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(-3, 5), min_size=n, max_size=n),
        st.lists(st.integers(-3, 5), min_size=n, max_size=n),
    )
)


@settings(max_examples=150, deadline=None)
@given(PAIRS, st.sampled_from(["int64", "int8", "uint16", "float64", "U3"]))
def test_arrays_and_lists_give_the_same_table(
    pair: tuple[list[int], list[int]], dtype: str
) -> None:
    a, b = pair
    if dtype == "uint16":
        a, b = [x + 3 for x in a], [x + 3 for x in b]
    as_array = (np.array(a).astype(dtype), np.array(b).astype(dtype))
    as_list = (as_array[0].tolist(), as_array[1].tolist())
    assert confusion_matrix(*as_array) == confusion_matrix(*as_list)


@settings(max_examples=80, deadline=None)
@given(PAIRS)
def test_given_categories_keep_their_order_and_unused_ones(
    pair: tuple[list[int], list[int]],
) -> None:
    a, b = pair
    scale = [5, 4, 3, 2, 1, 0, -1, -2, -3, 9]
    got = confusion_matrix(np.array(a), np.array(b), categories=scale)
    assert got == confusion_matrix(a, b, categories=scale)
    assert got.categories == tuple(scale)


def test_kappa_of_a_million_integer_pairs_matches_scikit_learn() -> None:
    rng = np.random.default_rng(7)
    a = rng.integers(0, 4, 1_000_000)
    b = np.where(rng.random(1_000_000) < 0.7, a, rng.integers(0, 4, 1_000_000))
    assert cohen_kappa(a, b).kappa == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_wide_integer_codes_and_strings_take_the_sorted_path() -> None:
    a, b = np.array([10**12, 3, 3]), np.array([3, 10**12, 3])
    assert confusion_matrix(a, b) == confusion_matrix(a.tolist(), b.tolist())
    s, t = np.array(["refuse", "resolve"]), np.array(["resolve", "resolve"])
    assert confusion_matrix(s, t).categories == ("refuse", "resolve")


def test_array_errors_are_the_list_errors() -> None:
    with pytest.raises(
        ValueError, match=r"^rater_a: paired ratings must not be missing\. Got nan\.$"
    ):
        confusion_matrix(np.array([1.0, np.nan]), np.array([1.0, 2.0]))
    with pytest.raises(ValueError, match=r"^ratings: every rating must be one of the categories"):
        confusion_matrix(np.array([1, 7]), np.array([1, 2]), categories=[1, 2])
    with pytest.raises(ValueError, match=r"^categories: must not repeat a value"):
        confusion_matrix(np.array([1]), np.array([1]), categories=[1, 1])
    with pytest.raises(
        ValueError, match=r"^rater_b: must rate as many rows as rater_a \(2\)\. Got 1\.$"
    ):
        confusion_matrix(np.array([1, 2]), np.array([1]))
