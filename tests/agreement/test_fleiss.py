"""Fleiss' kappa: Fleiss (1971) Table 1, statsmodels and irrCAC as oracles, edge cases."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from irrCAC.raw import CAC
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from casework.agreement import cohen_kappa, fleiss_kappa, gwet_ac1
from casework.agreement.fleiss import fleiss_kappa_from_ratings
from tests.agreement.data import FLEISS_1971
from tests.agreement.strategies import frame, raw_ratings


def test_fleiss_1971_diagnoses() -> None:
    r = fleiss_kappa_from_ratings(FLEISS_1971)
    assert r.kappa == pytest.approx(0.4302, abs=1e-4)
    assert r.kappa == pytest.approx(0.4302445, abs=1e-7)  # R irr, kappam.fleiss
    assert (r.n_units, r.n_pairable, r.n_ratings) == (30, 30, 180)
    assert r.p_o is not None and r.p_e is not None
    assert r.kappa == pytest.approx((r.p_o - r.p_e) / (1 - r.p_e))


def test_perfect_and_degenerate() -> None:
    assert fleiss_kappa_from_ratings([["a", "a", "a"], ["b", "b", "b"]]).kappa == 1.0
    single = fleiss_kappa_from_ratings([["a", "a"], ["a", "a"]])
    assert single.status == "undefined_single_category"
    assert single.kappa is None
    assert single.p_o == 1.0
    assert fleiss_kappa_from_ratings([["a"], ["b"]]).status == "insufficient_rows"
    assert fleiss_kappa([[0, 0], [0, 0]]).status == "insufficient_rows"


def test_bad_table() -> None:
    with pytest.raises(ValueError) as exc:
        fleiss_kappa([1, 2, 3])  # type: ignore[list-item]
    assert str(exc.value) == (
        "counts: must be a units x categories table of non-negative counts. Got shape (3,)."
    )


@settings(max_examples=120, deadline=None)
@given(raw_ratings(missing=False, min_raters=2, max_raters=6))
def test_complete_data_matches_statsmodels(rows: list[list[int | None]]) -> None:
    assume(len({v for r in rows for v in r}) >= 2)
    ours = fleiss_kappa_from_ratings(rows)
    table, _ = aggregate_raters(rows)
    assert ours.kappa == pytest.approx(sm_fleiss_kappa(table), abs=1e-9)


@settings(max_examples=120, deadline=None)
@given(raw_ratings())
def test_missing_data_matches_irrcac(rows: list[list[int | None]]) -> None:
    assume(sum(1 for r in rows if sum(v is not None for v in r) >= 2) >= 2)
    assume(len({v for r in rows for v in r if v is not None}) >= 2)
    ours = fleiss_kappa_from_ratings(rows)
    ref = CAC(frame(rows), digits=12).fleiss()["est"]
    assert ours.kappa == pytest.approx(ref["coefficient_value"], abs=1e-9)
    assert ours.p_o == pytest.approx(ref["pa"], abs=1e-9)
    assert ours.p_e == pytest.approx(ref["pe"], abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(raw_ratings(missing=False, min_raters=2, max_raters=2))
def test_two_raters_scotts_pi_not_cohen(rows: list[list[int | None]]) -> None:
    # With two raters Fleiss' kappa is Scott's pi: pooled margins. It equals Cohen's kappa
    # exactly when both raters have the same margins, e.g. after symmetrising the data.
    assume(len({v for r in rows for v in r}) >= 2)
    both = rows + [[b, a] for a, b in rows]
    a = [r[0] for r in both]
    b = [r[1] for r in both]
    assert fleiss_kappa_from_ratings(both).kappa == pytest.approx(cohen_kappa(a, b).kappa, abs=1e-9)
    assert gwet_ac1(both).status == "ok"
