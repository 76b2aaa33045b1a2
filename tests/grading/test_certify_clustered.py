"""`judge certify` counts reviewed cases, not reviewed trials, as the unit of its intervals."""

from __future__ import annotations

import pytest
from statsmodels.stats.proportion import proportion_confint

from casework.grading import PROMPT_VERSION
from casework.grading.certify import Compared, Pin, Settings, _tally, certify_counts

PIN = Pin("refunds", "answer_fact", "judge-1", PROMPT_VERSION, "r-1")


def test_several_trials_of_a_case_count_as_one_case() -> None:
    # 10 passing cases of 3 trials: the judge is right on every trial of 8, wrong on all of 2;
    # 10 failing cases of 3 trials, all right.
    cases = [(3, 0, 0, 0)] * 8 + [(0, 3, 0, 0)] * 2 + [(0, 0, 3, 0)] * 10
    r = certify_counts(PIN, 24, 6, 30, 0, Settings(tpr=0.5), current=True, cases=cases)
    # As statsmodels' Wilson interval of 8 passing cases in 10 (the trials add nothing).
    low, high = proportion_confint(8, 10, alpha=0.05, method="wilson")
    assert (r.tpr.low, r.tpr.high) == pytest.approx((low, high), abs=1e-12)
    flat = certify_counts(PIN, 24, 6, 30, 0, Settings(tpr=0.5), current=True)
    assert flat.tpr.low is not None and flat.tpr.low > low + 0.1
    data = r.as_json()
    assert data["reviewed_cases"] == 20
    assert data["case_counts"] == [list(c) for c in cases]
    assert str(data["interval"]).startswith("wilson, effective sample size")
    with pytest.raises(ValueError, match="cases: the per-case counts must sum"):
        certify_counts(PIN, 25, 6, 30, 0, Settings(), current=True, cases=cases)


def test_one_trial_per_case_is_the_plain_interval() -> None:
    cases = [(1, 0, 0, 0)] * 45 + [(0, 1, 0, 0)] * 5 + [(0, 0, 1, 0)] * 18 + [(0, 0, 0, 1)] * 2
    r = certify_counts(PIN, 45, 5, 18, 2, Settings(), current=True, cases=cases)
    plain = certify_counts(PIN, 45, 5, 18, 2, Settings(), current=True)
    assert (r.tpr.low, r.tnr.low) == pytest.approx((plain.tpr.low, plain.tnr.low), abs=1e-12)


def test_the_tally_keeps_each_reviewed_case() -> None:
    compared = [
        Compared(PIN, True, True, "c1"),
        Compared(PIN, False, True, "c1"),
        Compared(PIN, False, False, "c2"),
    ]
    assert _tally(compared) == {PIN: {"c1": [1, 1, 0, 0], "c2": [0, 0, 1, 0]}}
