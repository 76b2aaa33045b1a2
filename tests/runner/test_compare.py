from __future__ import annotations

import pytest
from scipy.stats import binomtest

from casework.runner.compare import compare_tallies, mcnemar_statistic, retirement, sign_test
from casework.runner.metrics import CaseTally


def _run(rates: dict[str, tuple[int, int]]) -> dict[str, CaseTally]:
    return {cid: CaseTally(cid, n, c, slice="s") for cid, (n, c) in rates.items()}


def test_discrimination_and_inversions_on_constructed_runs() -> None:
    better = _run({"a": (3, 3), "b": (3, 3), "c": (3, 2), "d": (3, 0), "e": (3, 1), "f": (3, 3)})
    worse = _run({"a": (3, 0), "b": (3, 1), "c": (3, 2), "d": (3, 0), "e": (3, 3), "g": (3, 3)})
    cmp = compare_tallies(better, worse)
    assert cmp.cases == 5
    assert [d.case_id for d in cmp.discriminating] == ["a", "b"]
    assert [d.case_id for d in cmp.inverted] == ["e"]
    assert [d.case_id for d in cmp.tied] == ["c", "d"]
    assert cmp.discrimination_rate == pytest.approx(2 / 5)
    assert cmp.inversion_rate == pytest.approx(1 / 5)
    assert cmp.mean_delta == pytest.approx((1 + 2 / 3 + 0 + 0 - 2 / 3) / 5)
    assert cmp.only_better == ["f"] and cmp.only_worse == ["g"]
    assert cmp.p_value == pytest.approx(binomtest(2, 3, 0.5).pvalue)


def test_sign_test_is_exact_mcnemar_with_one_trial_per_case() -> None:
    # Agresti (2002), Table 10.1: 794 both approve, 150 approve→disapprove, 86 disapprove→approve,
    # 570 both disapprove. McNemar's statistic is 17.36.
    better: dict[str, CaseTally] = {}
    worse: dict[str, CaseTally] = {}
    cells = [(794, 1, 1), (150, 1, 0), (86, 0, 1), (570, 0, 0)]
    i = 0
    for count, b, w in cells:
        for _ in range(count):
            better[f"c{i}"] = CaseTally(f"c{i}", 1, b)
            worse[f"c{i}"] = CaseTally(f"c{i}", 1, w)
            i += 1
    cmp = compare_tallies(better, worse)
    assert len(cmp.discriminating) == 150 and len(cmp.inverted) == 86
    assert round(mcnemar_statistic(150, 86), 2) == 17.36
    assert cmp.p_value == pytest.approx(binomtest(86, 236, 0.5).pvalue)
    assert cmp.p_value < 1e-4
    assert sign_test(0, 0) == 1.0


def test_retirement_finds_cases_that_separate_nothing() -> None:
    a = _run({"p": (3, 3), "f": (3, 0), "x": (3, 3), "y": (3, 1)})
    b = _run({"p": (3, 3), "f": (3, 0), "x": (3, 2), "y": (3, 1)})
    r = retirement([a, b])
    assert r.all_pass == ["p"] and r.all_fail == ["f"] and r.retire == ["f", "p"]
    assert r.compared == 4
    with pytest.raises(ValueError, match="at least two runs"):
        retirement([a])
