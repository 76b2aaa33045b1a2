"""pass@1 corrected for the judge's measured error, on hand-built run logs."""

from __future__ import annotations

import pytest

from casework.agreement._rates import rogan_gladen
from casework.runner import run_results
from casework.runner.analysis import corrected_pass, trial_decisions
from casework.runner.records import CheckCertification
from tests.runner.judged import (
    FAIR,
    LENIENT,
    check,
    judged,
    loaded,
    programmatic,
    standard_trials,
    trial,
)

RG_LENIENT = (0.75 + 0.70 - 1) / (0.95 + 0.70 - 1)  # 0.6923: the judge's 0.75 corrected


def test_corrected_pass_rate_of_a_run() -> None:
    res = run_results(loaded(standard_trials(), {"refunds": {"answer_fact": LENIENT}}))
    overall = res.corrected["all"]
    assert res.overall.pass1 == pytest.approx(0.75)
    assert overall.rate.raw == pytest.approx(0.75)
    assert overall.rate.corrected == pytest.approx((6 + 12 * RG_LENIENT) / 20)
    assert round(overall.rate.corrected or 0, 3) == 0.715
    assert (overall.rate.n, overall.rate.judged) == (20, 12)
    # The interval is a cluster bootstrap over cases (trials of one case move together).
    assert overall.rate.method == "cluster bootstrap over cases, 2000 resamples, seed 0"
    assert overall.rate.low is not None and overall.rate.high is not None
    assert overall.rate.low < (overall.rate.corrected or 0) < overall.rate.high
    assert overall.describe().startswith("corrected pass@1 0.715 [")
    assert overall.describe().endswith("(raw 0.750)")
    # every metrics group holding judged verdicts has its figure, under the same name
    assert set(res.corrected) == {"all", "slice:refunds", "split:dev", "source:real"}
    assert res.corrected["slice:refunds"].rate.corrected == overall.rate.corrected


def test_no_certification_no_corrected_figure() -> None:
    for certs in ({}, {"refunds": {"outcome": FAIR}}, {"billing": {"answer_fact": FAIR}}):
        c = run_results(loaded(standard_trials(), certs)).corrected["all"]
        assert c.rate.raw == pytest.approx(0.75)
        assert (c.rate.corrected, c.rate.low, c.rate.high) == (None, None, None)
        assert c.uncertified == ("refunds/answer_fact",)
        assert "not certified for refunds/answer_fact" in c.describe()
    # and without a judge in the header at all
    bare = run_results(loaded(standard_trials(), judge=False)).corrected["all"]
    assert bare.rate.corrected is None and bare.uncertified == ("refunds/answer_fact",)


def test_a_judge_no_better_than_chance_corrects_nothing() -> None:
    chance = CheckCertification(tp=5, fn=5, tn=5, fp=5, admissible=False)
    c = run_results(loaded(standard_trials(), {"refunds": {"answer_fact": chance}})).corrected
    assert c["all"].rate.corrected is None
    assert c["all"].uncorrectable == ("refunds/answer_fact",) and c["all"].uncertified == ()
    assert "no better than chance" in c["all"].describe()


def test_runs_without_judged_verdicts_have_no_corrected_figure() -> None:
    trials = [programmatic(f"c{i}", n, (i + n) % 3 != 0) for i in range(5) for n in range(2)]
    res = run_results(loaded(trials, {"refunds": {"answer_fact": FAIR}}))
    assert res.corrected == {}
    # a judged check that did not decide (a programmatic failure came first) is not judge-decided
    t = trial("x", 0, [check("state", False), check("answer_facts", False, judged=True)])
    assert [d.kinds for d in trial_decisions([t])] == [()]
    assert run_results(loaded([t])).corrected == {}


def test_what_decides_a_verdict() -> None:
    trials = [
        trial("a", 0, [check("state", True), check("outcome", True, judged=True)]),
        trial("a", 1, [check("state", True), check("unsatisfiable", False, judged=True)]),
        trial("b", 0, [check("state", None), check("answer_facts", False, judged=True)]),
        trial("b", 1, [check("state", None), check("answer_facts", True, judged=True)]),
        trial(
            "c",
            0,
            [check("outcome", True, judged=True), check("answer_facts", True, judged=True)],
        ),
        trial(
            "c", 1, [check("outcome", False, judged=True), check("answer_facts", True, judged=True)]
        ),
        trial("d", 0, [check("state", True), check("my_rubric", True, judged=True)]),
    ]
    kinds = [(d.case_id, d.kinds) for d in trial_decisions(trials)]
    assert kinds == [
        ("a", ("outcome",)),
        ("a", ("outcome",)),
        ("b", ("answer_fact",)),  # a programmatic undetermined plus a judged failure: judged
        ("c", ("answer_fact", "outcome")),
        ("c", ("outcome",)),  # the failure rests on the outcome check only
        ("d", ("my_rubric",)),  # a judged check of no certified kind keeps its name
    ]  # b/1 is undetermined (a pass with an undetermined check) and left out


def test_several_judged_kinds_use_the_weakest_certification() -> None:
    weak = CheckCertification(tp=8, fn=2, tn=6, fp=4, admissible=True)  # Youden 0.4
    both = [check("outcome", True, judged=True), check("answer_facts", True, judged=True)]
    trials = [
        trial(f"c{i}", 0, both if i < 7 else [*both[:1], check("answer_facts", False, judged=True)])
        for i in range(10)
    ]
    certs = {"refunds": {"outcome": FAIR, "answer_fact": weak}}
    c = corrected_pass(trial_decisions(trials), certs)
    assert c is not None
    # 7 passes (outcome + answer_fact: the weaker answer_fact corrects) and 3 failures resting
    # on answer_fact alone: all 10 corrected with answer_fact's counts.
    assert c.rate.corrected == pytest.approx(rogan_gladen(7, 10, tp=8, fn=2, tn=6, fp=4))
    swapped = corrected_pass(
        trial_decisions(trials), {"refunds": {"outcome": weak, "answer_fact": FAIR}}
    )
    assert swapped is not None
    # now outcome is the weaker: the 7 passes use outcome's, the 3 failures answer_fact's counts
    expected = 0.7 * rogan_gladen(7, 7, tp=8, fn=2, tn=6, fp=4)  # type: ignore[operator]
    expected += 0.3 * rogan_gladen(0, 3, tp=90, fn=10, tn=80, fp=20)  # type: ignore[operator]
    assert swapped.rate.corrected == pytest.approx(expected)


def test_unequal_trials_per_case_keep_raw_equal_to_pass1() -> None:
    trials = [
        programmatic("p", 0, True),
        programmatic("p", 1, False),
        programmatic("p", 2, False),
        judged("j", 0, True),
        trial("j", 1, [check("state", True), check("answer_facts", None, judged=True)]),
        judged("q", 0, False),
        judged("q", 1, True),
    ]
    res = run_results(loaded(trials, {"refunds": {"answer_fact": FAIR}}, k=3))
    c = res.corrected["all"]
    assert c.rate.raw == pytest.approx(res.overall.pass1)
    # weights 1/(3 cases x decided trials): p 1/9 each, j 1/3, q 1/6 each
    judged_weight = 1 / 3 + 2 * (1 / 6)
    observed = (1 / 3 * 1 + 1 / 6 * 0 + 1 / 6 * 1) / judged_weight  # 0.75
    rg = rogan_gladen(observed * 3, 3, tp=90, fn=10, tn=80, fp=20)
    assert rg is not None
    assert c.rate.corrected == pytest.approx(1 / 9 + judged_weight * rg)


def test_per_slice_certifications_correct_their_own_slice() -> None:
    trials = [judged(f"r{i}", 0, i < 6) for i in range(8)]
    trials += [judged(f"b{i}", 0, i < 6, slice_="billing") for i in range(8)]
    certs = {"refunds": {"answer_fact": FAIR}, "billing": {"answer_fact": LENIENT}}
    res = run_results(loaded(trials, certs, k=1))
    r = res.corrected["slice:refunds"].rate.corrected
    b = res.corrected["slice:billing"].rate.corrected
    assert r == pytest.approx(rogan_gladen(6, 8, tp=90, fn=10, tn=80, fp=20))
    assert b == pytest.approx(rogan_gladen(6, 8, tp=95, fn=5, tn=70, fp=30))
    assert res.corrected["all"].rate.corrected == pytest.approx((r + b) / 2)  # type: ignore[operator]
