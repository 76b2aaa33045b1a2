"""Cohen's kappa: published examples, oracles (scikit-learn, statsmodels), degenerate cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa

from casework.agreement import cohen_kappa
from casework.agreement.kappa import cohen_kappa_from_table, one_vs_rest_kappa
from casework.agreement.table import confusion_matrix

# The casework design notes' worked example: 60 rows relabelled blind, p_o 0.75, p_e 0.48,
# "kappa is (0.75 - 0.48) / 0.52 = 0.52"; 15 disagreements, escalate against clarify.
SEED_TABLE = [
    # first \ second: resolve, clarify, escalate
    [4, 0, 0],
    [0, 29, 7],
    [0, 8, 12],
]

SAS_TABLE = [[0, 4, 1], [0, 8, 0], [0, 1, 5]]


def ratings_of(table: list[list[int]], names: list[str]) -> tuple[list[str], list[str]]:
    a: list[str] = []
    b: list[str] = []
    for i, row in enumerate(table):
        for j, count in enumerate(row):
            a += [names[i]] * count
            b += [names[j]] * count
    return a, b


def test_seed_worked_example() -> None:
    a, b = ratings_of(SEED_TABLE, ["resolve", "clarify", "escalate"])
    k = cohen_kappa(a, b)
    assert k.n == 60
    assert k.p_o == pytest.approx(0.75, abs=1e-12)
    assert k.p_e == pytest.approx(0.48, abs=1e-12)
    assert k.kappa is not None
    assert k.kappa == pytest.approx((0.75 - 0.48) / 0.52, abs=1e-4)
    assert round(k.kappa, 2) == 0.52
    assert confusion_matrix(a, b).n - confusion_matrix(a, b).agreements == 15
    assert k.status == "ok"


def test_sas_example_from_statsmodels() -> None:
    k = cohen_kappa_from_table(SAS_TABLE)
    assert k.kappa == pytest.approx(0.4842, abs=1e-4)
    # statsmodels prints std_kappa as "ASE" (0.1380) and std_kappa0 as "ASE under H0" (0.1484).
    assert k.se == pytest.approx(0.1380, abs=1e-4)
    assert k.se0 == pytest.approx(0.1484, abs=1e-4)
    assert k.ci_low == pytest.approx(0.2137, abs=1e-4)
    assert k.ci_high == pytest.approx(0.7547, abs=1e-4)
    assert k.z == pytest.approx(3.2626, abs=1e-4)
    assert k.p_value == pytest.approx(0.0011, abs=1e-4)


def test_perfect_agreement_is_one() -> None:
    k = cohen_kappa(["a", "b", "c", "a"], ["a", "b", "c", "a"])
    assert k.kappa == 1.0
    assert k.kappa_max == 1.0
    assert k.p_o == 1.0


def test_single_category_is_undefined_not_nan() -> None:
    k = cohen_kappa(["resolve"] * 5, ["resolve"] * 5)
    assert k.status == "undefined_single_category"
    assert k.p_o == 1.0
    assert k.p_e == 1.0
    assert k.kappa is None
    assert k.se is None
    assert k.ci_low is None


def test_no_rows() -> None:
    k = cohen_kappa([], [])
    assert k.status == "insufficient_rows"
    assert k.n == 0
    assert k.p_o is None
    assert k.kappa is None


def test_one_rater_constant_is_zero_kappa() -> None:
    k = cohen_kappa(["a", "a", "a", "a"], ["a", "b", "a", "b"])
    assert k.status == "ok"
    assert k.kappa == pytest.approx(0.0)


def test_unused_categories_change_nothing() -> None:
    a, b = ratings_of(SAS_TABLE, ["x", "y", "z"])
    plain = cohen_kappa(a, b)
    wider = cohen_kappa(a, b, categories=["x", "y", "z", "w"])
    assert wider.kappa == pytest.approx(plain.kappa)
    assert wider.se == pytest.approx(plain.se)


def test_bad_input_messages() -> None:
    with pytest.raises(ValueError) as exc:
        cohen_kappa(["a", "b"], ["a"])
    assert str(exc.value) == "rater_b: must rate as many rows as rater_a (2). Got 1."
    with pytest.raises(ValueError) as exc:
        cohen_kappa(["a", None], ["a", "b"])
    assert str(exc.value) == "rater_a: paired ratings must not be missing. Got None."
    with pytest.raises(ValueError) as exc:
        cohen_kappa(["a"], ["q"], categories=["a", "b"])
    assert str(exc.value) == (
        "ratings: every rating must be one of the categories ('a', 'b'). Got 'q'."
    )
    with pytest.raises(ValueError) as exc:
        cohen_kappa_from_table([[1, 2, 3]])
    assert str(exc.value) == "table: must be a square table of counts. Got shape (1, 3)."
    with pytest.raises(ValueError) as exc:
        cohen_kappa(["a"], ["a"], confidence=1.0)
    assert str(exc.value) == "confidence: must lie strictly between 0 and 1. Got 1.0."


def test_one_vs_rest() -> None:
    a, b = ratings_of(SEED_TABLE, ["resolve", "clarify", "escalate"])
    per = {
        c.category: c
        for c in one_vs_rest_kappa(a, b, categories=["resolve", "clarify", "escalate", "refuse"])
    }
    assert per["resolve"].kappa.kappa == 1.0
    assert per["refuse"].kappa.status == "undefined_single_category"
    esc = per["escalate"]
    assert (esc.first, esc.second, esc.both) == (20, 19, 12)
    binary_a = [x == "escalate" for x in a]
    binary_b = [x == "escalate" for x in b]
    assert esc.kappa.kappa == pytest.approx(cohen_kappa_score(binary_a, binary_b), abs=1e-12)


pairs = st.integers(min_value=1, max_value=4).flatmap(
    lambda k: st.lists(
        st.tuples(st.integers(0, k - 1), st.integers(0, k - 1)), min_size=2, max_size=80
    )
)


@settings(max_examples=150, deadline=None)
@given(pairs)
def test_matches_sklearn_and_statsmodels(rows: list[tuple[int, int]]) -> None:
    a = [x for x, _ in rows]
    b = [y for _, y in rows]
    k = cohen_kappa(a, b)
    if len(set(a) | set(b)) == 1:
        assert k.status == "undefined_single_category"
        return
    assert k.kappa == pytest.approx(cohen_kappa_score(a, b), abs=1e-9)
    table = confusion_matrix(a, b).array()
    with np.errstate(divide="ignore", invalid="ignore"):  # statsmodels divides by a zero se0
        ref = cohens_kappa(table)
    assert k.kappa == pytest.approx(ref.kappa, abs=1e-9)
    assert k.kappa_max == pytest.approx(ref.kappa_max, abs=1e-9)
    # statsmodels takes the square root of a variance that rounding can push below 0 (NaN);
    # casework clips it at 0. Elsewhere the two agree.
    se_ref = float(np.sqrt(max(ref.var_kappa, 0.0)))
    assert k.se == pytest.approx(se_ref, abs=1e-9)
    if not np.isnan(ref.std_kappa):
        assert k.ci_low == pytest.approx(ref.kappa_low, abs=1e-9)
        assert k.ci_high == pytest.approx(ref.kappa_upp, abs=1e-9)
    if k.z is None:  # one rater used one category: the null variance is 0
        assert k.se0 == 0.0
        assert np.isnan(ref.std_kappa0) or ref.std_kappa0 < 1e-6
    else:
        assert k.se0 == pytest.approx(ref.std_kappa0, abs=1e-9)
        assert k.p_value == pytest.approx(ref.pvalue_two_sided, abs=1e-9)


@settings(max_examples=80, deadline=None)
@given(pairs)
def test_symmetric_in_raters(rows: list[tuple[int, int]]) -> None:
    a = [x for x, _ in rows]
    b = [y for _, y in rows]
    k1, k2 = cohen_kappa(a, b), cohen_kappa(b, a)
    assert k1.status == k2.status
    if k1.kappa is not None and k2.kappa is not None:
        assert k1.kappa == pytest.approx(k2.kappa, abs=1e-12)
        assert k1.se == pytest.approx(k2.se, abs=1e-12)
        assert k1.kappa <= k1.kappa_max + 1e-12  # type: ignore[operator]
