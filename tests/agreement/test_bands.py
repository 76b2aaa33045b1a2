"""Bands, provisional marks, gate eligibility and explicit statuses."""

from __future__ import annotations

import pytest

from casework.agreement.bands import BandEdges, band_of, classify


@pytest.mark.parametrize(
    ("value", "band"),
    [
        (-0.2, "ambiguous"),
        (0.52, "ambiguous"),
        (0.5999, "ambiguous"),
        (0.6, "review"),
        (0.79, "review"),
        (0.8, "dependable"),
        (1.0, "dependable"),
    ],
)
def test_band_edges(value: float, band: str) -> None:
    assert band_of(value, BandEdges()) == band


def test_configurable_edges() -> None:
    edges = BandEdges(gate=0.4, dependable=0.7)
    assert band_of(0.5, edges) == "review"
    assert band_of(0.7, edges) == "dependable"


def test_seed_example_is_ambiguous_and_cannot_gate() -> None:
    v = classify(0.519, [(0.33, 0.71)], BandEdges())
    assert (v.band, v.provisional, v.gate_eligible, v.status) == ("ambiguous", True, False, "ok")
    assert v.reason == (
        "kappa 0.52 is below 0.6: the guideline leaves these rows open; "
        "provisional: the CI crosses 0.6"
    )


def test_provisional_when_any_interval_crosses() -> None:
    edges = BandEdges()
    assert not classify(0.9, [(0.82, 0.97)], edges).provisional
    both = classify(0.9, [(0.82, 0.97), (0.79, 1.0)], edges)
    assert both.provisional and both.band == "dependable" and both.gate_eligible
    wide = classify(0.7, [(0.5, 0.9)], edges)
    assert wide.reason.endswith("provisional: the CI crosses 0.6 and 0.8")
    # Touching an edge is not crossing it; missing ends are ignored.
    assert not classify(0.7, [(0.6, 0.8), (None, None)], edges).provisional


@pytest.mark.parametrize(
    "status", ["undefined_single_category", "insufficient_rows", "insufficient_positives"]
)
def test_statuses_have_no_band(status: str) -> None:
    v = classify(0.95, [(0.9, 1.0)], BandEdges(), status=status)  # type: ignore[arg-type]
    assert v.status == status
    assert v.band is None
    assert not v.gate_eligible
    assert v.reason.endswith("; it may not gate")


def test_missing_value_is_undefined() -> None:
    v = classify(None, [], BandEdges())
    assert v.status == "undefined_single_category"
    assert v.band is None


def test_bad_edges() -> None:
    with pytest.raises(ValueError) as exc:
        BandEdges(gate=0.9, dependable=0.8)
    assert (
        str(exc.value) == "edges: need -1 <= gate <= dependable <= 1. Got gate=0.9, dependable=0.8."
    )
