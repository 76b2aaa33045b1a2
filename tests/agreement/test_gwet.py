"""Gwet's AC1/AC2: irrCAC's published example, irrCAC as oracle on random data, edge cases."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from irrCAC.raw import CAC
from irrCAC.weights import Weights

from casework.agreement import cohen_kappa, gwet_ac1
from casework.agreement.gwet import gwet_ac2
from tests.agreement.data import KRIPPENDORFF_2011
from tests.agreement.strategies import frame, raw_ratings


def test_irrcac_raw_4raters_example() -> None:
    # irrCAC docs: AC1 0.77544, se 0.14295, CI (0.46081, 1), pa 0.81818, pe 0.19032.
    r = gwet_ac1(KRIPPENDORFF_2011)
    assert r.name == "AC1"
    assert r.coefficient == pytest.approx(0.7754, abs=1e-4)
    assert r.p_a == pytest.approx(0.81818, abs=1e-5)
    assert r.p_e == pytest.approx(0.19032, abs=1e-5)
    assert r.se == pytest.approx(0.14295, abs=1e-5)
    assert r.ci_low == pytest.approx(0.46081, abs=1e-5)
    assert r.ci_high == 1.0
    assert (r.n_units, r.n_pairable, r.q) == (12, 11, 5)


def test_skewed_slice_kappa_collapses_ac1_does_not() -> None:
    # 48 of 50 rows both "resolve", two rows split: kappa near 0, AC1 near 1 (Gwet 2008's paradox).
    a = ["resolve"] * 49 + ["refuse"]
    b = ["resolve"] * 48 + ["refuse", "resolve"]
    kappa = cohen_kappa(a, b).kappa
    ac1 = gwet_ac1(list(zip(a, b, strict=True))).coefficient
    assert kappa is not None and ac1 is not None
    assert kappa < 0
    assert ac1 > 0.9


def test_scale_categories_count_in_chance_agreement() -> None:
    pairs = [["a", "a"], ["a", "b"], ["b", "b"], ["a", "a"]]
    two = gwet_ac1(pairs)
    four = gwet_ac1(pairs, categories=["a", "b", "c", "d"])
    assert two.q == 2 and four.q == 4
    assert four.p_e is not None and two.p_e is not None
    assert four.p_e == pytest.approx(two.p_e / 3)


def test_degenerate() -> None:
    assert gwet_ac1([["a", None], [None, "b"]]).status == "insufficient_rows"
    assert gwet_ac1([]).status == "insufficient_rows"
    one = gwet_ac1([["a", "a"], ["a", "a"]])
    assert one.status == "undefined_single_category"
    assert one.coefficient is None
    # Everyone in one class of a two-class scale: AC1 is defined and perfect.
    assert gwet_ac1([["a", "a"], ["a", "a"]], categories=["a", "b"]).coefficient == 1.0


def test_ac2_weights_shape_error() -> None:
    with pytest.raises(ValueError) as exc:
        gwet_ac2([["a", "b"]], [[1.0]], categories=["a", "b"])
    assert str(exc.value) == (
        "weights: must be a 2 x 2 matrix (one row and column per category). Got shape (1, 1)."
    )


@settings(max_examples=120, deadline=None)
@given(raw_ratings())
def test_ac1_matches_irrcac(rows: list[list[int | None]]) -> None:
    assume(sum(1 for r in rows if sum(v is not None for v in r) >= 2) >= 2)
    cats = sorted({v for r in rows for v in r if v is not None})
    assume(len(cats) >= 2)
    ours = gwet_ac1(rows)
    ref = CAC(frame(rows), digits=12).gwet()["est"]
    assert ours.coefficient == pytest.approx(ref["coefficient_value"], abs=1e-9)
    assert ours.p_a == pytest.approx(ref["pa"], abs=1e-9)
    assert ours.p_e == pytest.approx(ref["pe"], abs=1e-9)
    if ref["se"] > 1e-9:
        assert ours.se == pytest.approx(ref["se"], abs=1e-9)
        assert ours.ci_low == pytest.approx(ref["confidence_interval"][0], abs=1e-9)
        assert ours.ci_high == pytest.approx(ref["confidence_interval"][1], abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(raw_ratings())
def test_ac2_quadratic_matches_irrcac(rows: list[list[int | None]]) -> None:
    assume(sum(1 for r in rows if sum(v is not None for v in r) >= 2) >= 2)
    cats = [0.0, 1.0, 2.0, 3.0]
    weights = np.asarray(Weights(cats)["quadratic"])
    ours = gwet_ac2(rows, weights, categories=[0, 1, 2, 3])
    ref = CAC(frame(rows), weights="quadratic", categories=cats, digits=12).gwet()["est"]
    assert ours.name == "AC2"
    assert ours.coefficient == pytest.approx(ref["coefficient_value"], abs=1e-9)
