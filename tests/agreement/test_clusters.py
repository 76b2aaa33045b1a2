"""Disagreement clusters: flattening, binning, over-representation with counts and lift."""

from __future__ import annotations

import pytest
from scipy.stats import fisher_exact

from casework.agreement.clusters import Scalar, featurize, flatten, over_represented


def test_flatten_collapses_list_positions_and_record_ids() -> None:
    state = {
        "orders": {"ord_17": {"age_days": 45, "items": [{"sku": "mug"}, {"sku": "cup"}]}},
        "customer": {"tier": "gold", "vip": False, "note": None},
        "2fa": True,
    }
    assert flatten(state) == [
        ("2fa", True),
        ("customer.note", None),
        ("customer.tier", "gold"),
        ("customer.vip", False),
        ("orders.age_days", 45),
        ("orders.items.sku", "mug"),
        ("orders.items.sku", "cup"),
    ]


def test_featurize_bins_numbers_and_names_values() -> None:
    rows: list[dict[str, list[Scalar]]] = [
        {"orders.age_days": [5], "customer.tier": ["gold"], "vip": [True]},
        {"orders.age_days": [20], "customer.tier": ["x" * 41]},
        {"orders.age_days": [40, 10]},
        {"orders.age_days": [60]},
    ]
    feats = featurize(rows)
    # Thresholds: quartiles of 5, 20, 40, 10, 60 (10, 20, 40) rounded to two figures.
    assert feats[0] == {
        "orders.age_days<=10",
        "orders.age_days<=20",
        "orders.age_days<=40",
        "customer.tier=gold",
        "vip=true",
    }
    assert feats[1] == {"orders.age_days>10", "orders.age_days<=20", "orders.age_days<=40"}
    assert "orders.age_days>20" in feats[2] and "orders.age_days<=10" in feats[2]
    assert feats[3] == {"orders.age_days>10", "orders.age_days>20", "orders.age_days>40"}


def test_seed_story_11_of_15() -> None:
    # 60 rows, 15 disagreements; 11 of them and 9 agreeing rows involve old orders.
    old, new = frozenset({"orders.age_days>30"}), frozenset({"orders.age_days<=30"})
    features = [old] * 11 + [new] * 4 + [old] * 9 + [new] * 36
    disagree = [True] * 15 + [False] * 45
    top = over_represented(features, disagree)
    assert top[0].feature == "orders.age_days>30"
    assert (top[0].in_disagreements, top[0].disagreements) == (11, 15)
    assert (top[0].in_rows, top[0].rows) == (20, 60)
    assert top[0].lift == pytest.approx((11 / 15) / (20 / 60))
    _, p = fisher_exact([[11, 4], [9, 36]], alternative="greater")
    assert top[0].p_value == pytest.approx(p, rel=1e-9)
    assert top[0].describe() == (
        "11 of 15 disagreements involve orders.age_days>30 (20 of 60 rows; lift 2.2, p=0.00031)"
    )
    assert len(top) == 1  # the complement is under-represented


def test_filters_support_everywhere_features_and_redundant_copies() -> None:
    features = [frozenset({"all", "a", "a_copy", "rare"})] + [frozenset({"all", "a", "a_copy"})] * 2
    features += [frozenset({"all"})] * 5
    disagree = [True, True, True] + [False] * 5
    top = over_represented(features, disagree, min_support=2)
    assert [c.feature for c in top] == ["a"]  # "all" explains nothing; "rare" has support 1


def test_no_disagreement_and_length_mismatch() -> None:
    assert over_represented([frozenset({"x"})], [False]) == ()
    with pytest.raises(ValueError) as exc:
        over_represented([frozenset()], [True, False])
    assert str(exc.value) == "disagree: must have one flag per row (1). Got 2."


def test_an_integer_past_a_floats_range_is_a_category_not_a_crash() -> None:
    # A case may hold any JSON integer; `float()` of one past 1.8e308 overflows.
    huge = 10**400
    features = featurize([{"amount": [huge]}, {"amount": [3]}, {"amount": [5]}])
    assert f"amount={huge}" in features[0]
    assert any(f.startswith("amount") for f in features[1])
