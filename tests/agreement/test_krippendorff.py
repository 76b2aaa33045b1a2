"""Krippendorff's nominal alpha: the 2011 example, `krippendorff` and irrCAC as oracles."""

from __future__ import annotations

import krippendorff
import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import assume, given, settings
from irrCAC.raw import CAC

from casework.agreement import krippendorff_alpha_nominal
from tests.agreement.data import KRIPPENDORFF_2011
from tests.agreement.strategies import frame, raw_ratings


def reliability(rows: list[list[int | None]]) -> npt.NDArray[np.float64]:
    """Observers by units, NaN for missing: the `krippendorff` package's layout."""
    return np.array([[np.nan if v is None else v for v in row] for row in rows], float).T


def test_krippendorff_2011_example() -> None:
    r = krippendorff_alpha_nominal(KRIPPENDORFF_2011)
    assert r.alpha == pytest.approx(0.7434, abs=1e-4)
    # 11 pairable units, 40 pairable values (unit 12 has a single value).
    assert (r.n_units, r.n_values) == (11, 40)


def test_example_as_strings_and_missing_order_do_not_matter() -> None:
    shuffled = [list(reversed(row)) for row in KRIPPENDORFF_2011]
    as_text = [[None if v is None else f"v{v}" for v in row] for row in KRIPPENDORFF_2011]
    base = krippendorff_alpha_nominal(KRIPPENDORFF_2011).alpha
    assert krippendorff_alpha_nominal(shuffled).alpha == pytest.approx(base)
    assert krippendorff_alpha_nominal(as_text).alpha == pytest.approx(base)


def test_degenerate() -> None:
    single = krippendorff_alpha_nominal([["a", "a"], ["a", "a", None]])
    assert single.status == "undefined_single_category"
    assert single.alpha is None
    assert krippendorff_alpha_nominal([["a", None], ["b"]]).status == "insufficient_rows"
    assert krippendorff_alpha_nominal([["a", "a"], ["b", "b"]]).alpha == 1.0


@settings(max_examples=150, deadline=None)
@given(raw_ratings())
def test_matches_krippendorff_package_and_irrcac(rows: list[list[int | None]]) -> None:
    pairable = [r for r in rows if sum(v is not None for v in r) >= 2]
    assume(len(pairable) >= 1)
    assume(len({v for r in pairable for v in r if v is not None}) >= 2)
    ours = krippendorff_alpha_nominal(rows)
    ref = krippendorff.alpha(reliability_data=reliability(rows), level_of_measurement="nominal")
    assert ours.alpha == pytest.approx(ref, abs=1e-9)
    if len(pairable) >= 2:
        cac = CAC(frame(rows), digits=12).krippendorff()["est"]
        assert ours.alpha == pytest.approx(cac["coefficient_value"], abs=1e-9)
