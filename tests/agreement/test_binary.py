"""Agreement on one yes/no question: counts, statuses for rare tools, oracle."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import cohen_kappa_score

from casework.agreement.binary import binary_agreement


def test_counts_and_kappa() -> None:
    first = [True] * 6 + [False] * 14
    second = [True] * 4 + [False, True] + [True] + [False] * 13
    r = binary_agreement(first, second, min_rows=10, min_positives=5)
    assert (r.both_yes, r.only_first, r.only_second, r.both_no) == (5, 1, 1, 13)
    assert r.positives == 7 and r.disagreements == 2
    assert r.p_o == pytest.approx(0.9)
    assert r.kappa.kappa == pytest.approx(cohen_kappa_score(first, second))
    assert r.ac1.q == 2
    assert r.status == "ok"


def test_rare_tool_is_insufficient_positives() -> None:
    first = [True] + [False] * 29
    second = [False] * 30
    r = binary_agreement(first, second, min_rows=10, min_positives=5)
    assert r.status == "insufficient_positives"
    assert r.kappa.kappa == pytest.approx(0.0)  # still reported


def test_never_marked() -> None:
    r = binary_agreement([False] * 20, [False] * 20, min_rows=10, min_positives=5)
    assert r.status == "insufficient_positives"
    assert binary_agreement([False] * 20, [False] * 20, min_positives=0).status == (
        "undefined_single_category"
    )


def test_too_few_rows() -> None:
    r = binary_agreement([True, False], [True, False], min_rows=10)
    assert r.status == "insufficient_rows"
    assert r.kappa.kappa == 1.0
    assert binary_agreement([], []).status == "insufficient_rows"
    assert binary_agreement([], []).p_o is None


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=2, max_size=60))
def test_kappa_matches_sklearn_and_is_symmetric(rows: list[tuple[bool, bool]]) -> None:
    a = [x for x, _ in rows]
    b = [y for _, y in rows]
    r = binary_agreement(a, b)
    s = binary_agreement(b, a)
    assert (r.only_first, r.only_second) == (s.only_second, s.only_first)
    if len(set(a) | set(b)) == 2:
        assert r.kappa.kappa == pytest.approx(cohen_kappa_score(a, b), abs=1e-9)
        assert r.kappa.kappa == pytest.approx(s.kappa.kappa, abs=1e-12)
