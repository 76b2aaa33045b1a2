"""PPI++ against its authors' implementation (``ppi_py``, PyPI ``ppi_python``), stratified and paired.

``ppi_py``'s published worked examples read data sets from Google Drive (no network here), so the
oracle runs on data drawn the way its own test suite draws them (seeded): labels, predictions
correlated with them and a larger unlabelled sample — continuous, and binary like a judge's
verdicts. casework's estimator is written from the paper; the numbers must agree.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy.stats import t as student_t

from casework.agreement._ppi import PPIStratum, ppi_difference, ppi_mean, stratified_ppi
from casework.agreement._rates import clustered_proportion_interval

ppi_py = pytest.importorskip("ppi_py")


def judge_data(
    seed: int, n: int, big_n: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """People's verdicts, the judge's on them (TPR 0.9, TNR 0.8), the judge's on every trial."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.6).astype(float)
    yhat = np.where(y == 1, rng.random(n) < 0.9, rng.random(n) < 0.2).astype(float)
    truth = rng.random(big_n) < 0.6
    unl = np.where(truth, rng.random(big_n) < 0.9, rng.random(big_n) < 0.2).astype(float)
    return y, yhat, unl


def continuous_data(
    seed: int, n: int, big_n: int
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """ppi_py's tests' mean setting: Y normal, predictions Y plus noise, a shifted unlabelled set."""
    rng = np.random.default_rng(seed)
    y = rng.normal(0.5, 1.0, n)
    yhat = y + rng.normal(0.0, 0.5, n)
    unl = rng.normal(0.5, 1.0, big_n) + rng.normal(0.0, 0.5, big_n)
    return y, yhat, unl


@pytest.mark.parametrize("data", [judge_data, continuous_data], ids=["binary", "continuous"])
@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.4], ids=str)
@pytest.mark.parametrize(("n", "big_n"), [(50, 1000), (200, 2000), (30, 60)])
def test_ppi_mean_equals_ppi_py(data: object, lam: float | None, n: int, big_n: int) -> None:
    assert callable(data)
    y, yhat, unl = data(n + big_n, n, big_n)
    ours = ppi_mean(y, yhat, unl, lam=lam, confidence=0.9)
    low, high = ppi_py.ppi_mean_ci(y, yhat, unl, alpha=0.1, lam=lam)
    point = ppi_py.ppi_mean_pointestimate(y, yhat, unl, lam=lam)
    assert ours.estimate == pytest.approx(float(np.ravel(point)[0]), abs=1e-12)
    assert ours.low == pytest.approx(float(low[0]), abs=1e-12)
    assert ours.high == pytest.approx(float(high[0]), abs=1e-12)


@pytest.mark.parametrize("lam", [None, 1.0], ids=str)
def test_one_stratum_of_singleton_cases_is_ppi_py(lam: float | None) -> None:
    y, yhat, unl = judge_data(3, 80, 1200)
    w = np.full(len(unl), 1 / len(unl))
    ours = stratified_ppi(
        [PPIStratum(w, w * unl, len(unl), y, yhat, [-1] * len(y))], lam=lam, small_sample=False
    )
    low, high = ppi_py.ppi_mean_ci(y, yhat, unl, alpha=0.05, lam=lam)
    assert (ours.low, ours.high) == pytest.approx((float(low[0]), float(high[0])), abs=1e-12)


def test_strata_combine_by_weight_each_with_its_own_lambda() -> None:
    (ya, fa, ua), (yb, fb, ub) = judge_data(4, 60, 300), judge_data(5, 40, 200)
    cases = len(ua) + len(ub)
    # Stratum A holds 300 trials and B 200, each trial 1/500 of the figure.
    wa = np.r_[np.full(len(ua), 1 / cases), np.zeros(len(ub))]
    wb = np.r_[np.zeros(len(ua)), np.full(len(ub), 1 / cases)]
    strata = [
        PPIStratum(wa, wa * np.r_[ua, np.zeros(len(ub))], len(ua), ya, fa, [-1] * len(ya)),
        PPIStratum(wb, wb * np.r_[np.zeros(len(ua)), ub], len(ub), yb, fb, [-1] * len(yb)),
    ]
    ours = stratified_ppi(strata, small_sample=False)
    a, b = ppi_mean(ya, fa, ua), ppi_mean(yb, fb, ub)
    assert ours.lam == (a.lam[0], b.lam[0])
    assert ours.estimate == pytest.approx(0.6 * a.estimate + 0.4 * b.estimate, abs=1e-12)
    assert ours.se == pytest.approx(np.hypot(0.6 * a.se, 0.4 * b.se), abs=1e-12)


def test_a_reviewed_trial_is_counted_with_its_case() -> None:
    """Reviewed trials of one case share its influence: a judge erring on whole cases widens it."""
    rng = np.random.default_rng(6)
    cases, k = 60, 3
    truth = (rng.random((cases, 1)) < 0.7).repeat(k, axis=1).astype(float)  # all-or-nothing
    wrong = (rng.random((cases, 1)) < 0.2).repeat(k, axis=1)  # the judge misreads whole cases
    seen = np.where(wrong, 1 - truth, truth)
    w = np.full(cases, 1 / cases)
    passes = seen.mean(axis=1) * w
    reviewed = np.arange(30)
    y, f = truth[reviewed].ravel(), seen[reviewed].ravel()
    clustered = stratified_ppi([PPIStratum(w, passes, cases * k, y, f, np.repeat(reviewed, k))])
    loose = stratified_ppi([PPIStratum(w, passes, cases * k, y, f, [-1] * len(y))])
    assert clustered.estimate == pytest.approx(loose.estimate)
    assert clustered.se > 1.3 * loose.se


def test_difference_is_paired_by_case() -> None:
    rng = np.random.default_rng(8)
    cases = 80
    w = np.full(cases, 1 / cases)
    base = (rng.random(cases) < 0.7).astype(float)
    worse = np.where(rng.random(cases) < 0.1, 0.0, base)  # fails some cases the baseline passes
    y, f = base[:30], base[:30]
    a = [PPIStratum(w, w * worse, cases, worse[:30], worse[:30], np.arange(30))]
    b = [PPIStratum(w, w * base, cases, y, f, np.arange(30))]
    d = ppi_difference(a, b)
    ra, rb = stratified_ppi(a), stratified_ppi(b)
    assert d.estimate == pytest.approx(ra.estimate - rb.estimate)
    # Case difficulty is shared, so the paired interval is far narrower than the unpaired one.
    assert d.se < 0.6 * np.hypot(ra.se, rb.se)
    assert -1.0 <= d.low <= d.estimate <= d.high <= 1.0
    assert ppi_difference(b, b).se == 0.0


@pytest.mark.parametrize(
    ("stratum", "message"),
    [
        (PPIStratum([1.0], [1.0], 1), "human: a judged stratum needs"),
        (PPIStratum([1.0], [1.0], 1, [1.0], [1.0, 0.0], [0]), "judge: needs one"),
        (PPIStratum([1.0], [1.0], 1, [1.0], [1.0], [3]), r"cases: must lie in \[-1, 1\)"),
        (PPIStratum([0.5, 0.5], [1.0], 1, [1.0], [1.0], [0]), "strata: every stratum needs"),
    ],
)
def test_bad_strata_are_named(stratum: PPIStratum, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        stratified_ppi([stratum])


def test_the_worked_examples_of_docs_judge_md() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "judge.md").read_text(encoding="utf-8")
    plain = ppi_mean([1, 1, 0, 1], [1, 0, 0, 1], [1, 1, 1, 0, 1, 1, 0, 1], lam=1.0)
    assert f"6/8 + (3 − 2)/4 = **{plain.estimate:.3f}**" in docs
    tpr = clustered_proportion_interval([3] * 8 + [0] * 2, [3] * 10)
    assert f"TPR {tpr.estimate:.3f} with\n**[{tpr.low:.3f}, {tpr.high:.3f}]**" in docs


def test_the_small_sample_example_of_docs_judge_md() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "judge.md").read_text(encoding="utf-8")
    w = np.full(8, 1 / 8)
    unl = np.array([1, 1, 1, 0, 1, 1, 0, 1], dtype=float)
    stratum = [PPIStratum(w, w * unl, 8, [1, 1, 0, 1], [1, 0, 0, 1], [-1] * 4)]
    plain = stratified_ppi(stratum, lam=1.0, small_sample=False)
    fixed = stratified_ppi(stratum, lam=1.0)
    assert plain.df is None and fixed.df == 3
    assert f"**[{plain.low:.3f}, {plain.high:.3f}]** (SE {plain.se:.3f}, z = 1.96)" in docs
    assert f"corrected, SE {fixed.se:.3f}" in docs
    assert (
        f"t on 3 degrees of freedom ({student_t.ppf(0.975, 3):.2f}):\n**[{fixed.low:.3f}, {fixed.high:.3f}]**"
        in docs
    )
    # CR1 by term: the judge's mean over 8 cases, the rectifier over 4 reviewed replies.
    rect = np.array([1, 1, 0, 1]) - np.array([1, 0, 0, 1])
    judge_var = ((unl - unl.mean()) / 8) ** 2 * 8 / 7
    rect_var = ((rect - rect.mean()) / 4) ** 2 * 4 / 3
    assert fixed.se == pytest.approx(np.sqrt(judge_var.sum() + rect_var.sum()), abs=1e-12)
