"""Judge rates against people and corrected pass rates: worked examples, statsmodels as oracle,
edge cases, and the coverage of the corrected rate's interval by simulation."""

from __future__ import annotations

import math
import warnings
from pathlib import Path
from typing import Literal

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

from casework.agreement import kappa_interval
from casework.agreement._rates import (
    ClusteredPart,
    RatePart,
    cluster_corrected_rate,
    combined_corrected_rate,
    corrected_rate,
    more_needed,
    proportion_interval,
    rogan_gladen,
)
from casework.agreement.kappa import normal_quantile

Method = Literal["wilson", "clopper-pearson"]
ORACLE = {"wilson": "wilson", "clopper-pearson": "beta"}


@st.composite
def counts(draw: st.DrawFn) -> tuple[int, int]:
    n = draw(st.integers(1, 2000))
    return draw(st.integers(0, n)), n


@settings(max_examples=300, deadline=None)
@given(
    counts(),
    st.floats(0.5, 0.999),
    st.sampled_from(["wilson", "clopper-pearson"]),
)
def test_interval_matches_statsmodels(
    sn: tuple[int, int], confidence: float, method: Method
) -> None:
    successes, n = sn
    got = proportion_interval(successes, n, confidence=confidence, method=method)
    low, high = proportion_confint(successes, n, alpha=1 - confidence, method=ORACLE[method])
    assert got.low == pytest.approx(float(low), abs=1e-9)
    assert got.high == pytest.approx(float(high), abs=1e-9)
    assert got.estimate == successes / n
    assert got.low is not None and got.high is not None
    assert 0.0 <= got.low <= successes / n <= got.high <= 1.0
    assert (got.method, got.confidence, got.n, got.successes) == (method, confidence, n, successes)


def test_newcombe_worked_examples() -> None:
    # Newcombe (1998), Statistics in Medicine 17, Table I: 81/263 and 15/148.
    w = proportion_interval(81, 263)
    assert (round(w.low or 0, 4), round(w.high or 0, 4)) == (0.2553, 0.3662)
    cp = proportion_interval(81, 263, method="clopper-pearson")
    assert (round(cp.low or 0, 4), round(cp.high or 0, 4)) == (0.2527, 0.3676)
    w2 = proportion_interval(15, 148)
    assert (round(w2.low or 0, 4), round(w2.high or 0, 4)) == (0.0624, 0.1605)


def test_no_rows_gives_no_rate() -> None:
    p = proportion_interval(0, 0)
    assert (p.estimate, p.low, p.high, p.n) == (None, None, None, 0)


@pytest.mark.parametrize(
    ("successes", "n", "confidence", "method"),
    [(-1, 3, 0.95, "wilson"), (4, 3, 0.95, "wilson"), (1, 3, 1.0, "wilson"), (1, 3, 0.95, "x")],
)
def test_bad_input_raises(successes: int, n: int, confidence: float, method: str) -> None:
    with pytest.raises(ValueError):
        proportion_interval(successes, n, confidence=confidence, method=method)  # type: ignore[arg-type]


# --- kappa ---------------------------------------------------------------------------------------


def test_kappa_interval_sas_example() -> None:
    k = kappa_interval([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    assert (round(k.kappa or 0, 4), round(k.low or 0, 4), round(k.high or 0, 4)) == (
        0.4842,
        0.2137,
        0.7547,
    )


@example(cells=[0, 0, 1, 2])  # one side used one category: statsmodels' SE is nan
@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 40), min_size=4, max_size=4))
def test_kappa_interval_matches_statsmodels(cells: list[int]) -> None:
    table = [cells[:2], cells[2:]]
    got = kappa_interval(table)
    rows = [sum(r) for r in table]
    cols = [table[0][j] + table[1][j] for j in range(2)]
    n = sum(rows)
    if n == 0 or sum(r * c for r, c in zip(rows, cols, strict=True)) == n * n:
        assert got == (None, None, None)
        return
    if 0 in rows or 0 in cols:
        # One side used one category: kappa is 0 whatever the other does, and the asymptotic SE
        # is 0/0 (statsmodels gives 0 or nan depending on rounding): the whole range, honestly.
        assert got == (0.0, -1.0, 1.0)
        return
    with warnings.catch_warnings():  # statsmodels divides by a null SE of 0 for its z test
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = cohens_kappa(np.asarray(table), return_results=True)
    assert got.kappa == pytest.approx(float(ref.kappa), abs=1e-9)
    z = normal_quantile(0.95)
    assert got.low == pytest.approx(max(-1.0, ref.kappa - z * ref.std_kappa), abs=1e-9)
    assert got.high == pytest.approx(min(1.0, ref.kappa + z * ref.std_kappa), abs=1e-9)


def test_kappa_interval_from_ratings_equals_table() -> None:
    human = [True] * 30 + [False] * 20
    judge = [True] * 27 + [False] * 3 + [False] * 16 + [True] * 4
    assert kappa_interval(ratings=(human, judge)) == kappa_interval([[27, 3], [4, 16]])
    assert kappa_interval([[5, 0], [0, 0]]) == (None, None, None)
    with pytest.raises(ValueError):
        kappa_interval()
    with pytest.raises(ValueError):
        kappa_interval([[1, 0], [0, 1]], ratings=(human, judge))


# --- sample-size rule --------------------------------------------------------------------------


def test_more_needed_from_nothing() -> None:
    # Wilson at rate 1: n / (n + z²) >= 0.8 needs n >= 4 z² = 15.37; Clopper–Pearson at rate 1:
    # 0.025 ** (1 / n) >= 0.8 needs n >= ln 0.025 / ln 0.8 = 16.53.
    assert more_needed(0, 0, 0.8) == 16
    assert more_needed(0, 0, 0.8, method="clopper-pearson") == 17
    assert more_needed(10, 10, 0.8) == 6
    assert more_needed(16, 16, 0.8) == 0


def test_more_needed_never_or_capped() -> None:
    assert more_needed(8, 10, 0.8) is None  # observed rate equals the threshold
    assert more_needed(7, 10, 0.8) is None
    assert more_needed(8001, 10_000, 0.8, cap=100) is None
    assert more_needed(8001, 10_000, 0.8, cap=100_000_000) is not None


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 300), st.floats(0.5, 0.95), st.sampled_from(["wilson", "clopper-pearson"]))
def test_more_needed_is_the_fewest(n: int, threshold: float, method: Method) -> None:
    # All verdicts agreeing (rate 1) keeps the counts whole, so the public interval checks it.
    m = more_needed(n, n, threshold, method=method)
    assert m is not None

    def low(total: int) -> float:
        return proportion_interval(total, total, method=method).low or 0.0

    if m == 0:
        assert n > 0 and low(n) >= threshold
    else:
        assert low(n + m) >= threshold
        assert n + m - 1 == 0 or low(n + m - 1) < threshold


def test_more_needed_at_a_rate_below_one() -> None:
    # 45 of 50 (rate 0.9): Wilson lower bound at 0.9 of N rows reaches 0.8 at N = 95
    # (0.9 * 95 = 85.5 "successes"); hand check with the closed form.
    m = more_needed(45, 50, 0.8)
    assert m is not None
    z = normal_quantile(0.95)

    def wilson_low(total: int) -> float:
        p = 0.9
        return (
            p + z * z / (2 * total) - z * math.sqrt(p * (1 - p) / total + z * z / (4 * total**2))
        ) / (1 + z * z / total)

    assert wilson_low(50 + m) >= 0.8 > wilson_low(50 + m - 1)


# --- Rogan–Gladen -----------------------------------------------------------------------------


def test_rogan_gladen_worked_example() -> None:
    # observed 0.60, Se 0.90, Sp 0.80: (0.60 + 0.80 - 1) / (0.90 + 0.80 - 1) = 0.4 / 0.7
    got = rogan_gladen(60, 100, tp=90, fn=10, tn=80, fp=20)
    assert got == pytest.approx(0.4 / 0.7, abs=1e-12)
    assert round(got or 0, 4) == 0.5714
    # a perfect judge changes nothing
    assert rogan_gladen(37, 50, tp=10, fn=0, tn=10, fp=0) == pytest.approx(0.74)


def test_rogan_gladen_clips() -> None:
    # observed 0.10 below 1 - Sp = 0.20: negative before clipping
    assert rogan_gladen(10, 100, tp=90, fn=10, tn=80, fp=20) == 0.0
    # observed 0.95 above Se = 0.90: above 1 before clipping
    assert rogan_gladen(95, 100, tp=90, fn=10, tn=80, fp=20) == 1.0


def test_rogan_gladen_undefined() -> None:
    assert rogan_gladen(0, 0, tp=9, fn=1, tn=8, fp=2) is None  # no trial
    assert rogan_gladen(5, 10, tp=5, fn=5, tn=5, fp=5) is None  # Se + Sp - 1 = 0
    assert rogan_gladen(5, 10, tp=3, fn=7, tn=4, fp=6) is None  # worse than chance
    assert rogan_gladen(5, 10, tp=0, fn=0, tn=4, fp=1) is None  # no passing reply certified
    with pytest.raises(ValueError):
        rogan_gladen(5, 10, tp=-1, fn=0, tn=4, fp=1)
    with pytest.raises(ValueError):
        rogan_gladen(11, 10, tp=1, fn=0, tn=4, fp=1)


# --- the corrected rate's interval --------------------------------------------------------------


def _lang_reiczigel_by_hand(
    x: int, n: int, ksens: int, nsens: int, kspec: int, nspec: int
) -> tuple[float, float]:
    """Lang & Reiczigel (2014), written out as in the paper's R script, a second implementation."""
    z = 1.959963984540054
    n_, k_ = n + z**2, x + z**2 / 2
    p = k_ / n_
    se, sp = (ksens + 1) / (nsens + 2), (kspec + 1) / (nspec + 2)
    est = (p + sp - 1) / (se + sp - 1)
    sd = math.sqrt(
        p * (1 - p) / n_
        + se * (1 - se) / (nsens + 2) * est**2
        + sp * (1 - sp) / (nspec + 2) * (1 - est) ** 2
    ) / abs(se + sp - 1)
    d = 2 * z**2 * (est * se * (1 - se) / (nsens + 2) - (1 - est) * sp * (1 - sp) / (nspec + 2))
    return max(0.0, est + d - z * sd), min(1.0, est + d + z * sd)


@pytest.mark.parametrize(
    ("x", "n", "tp", "fn", "tn", "fp"),
    [(60, 100, 90, 10, 80, 20), (12, 260, 50, 50, 199, 1), (130, 200, 49, 51, 160, 40)],
)
def test_corrected_interval_by_hand(x: int, n: int, tp: int, fn: int, tn: int, fp: int) -> None:
    got = corrected_rate(x, n, tp=tp, fn=fn, tn=tn, fp=fp)
    low, high = _lang_reiczigel_by_hand(x, n, tp, tp + fn, tn, tn + fp)
    assert got.low == pytest.approx(low, abs=1e-12)
    assert got.high == pytest.approx(high, abs=1e-12)
    assert got.corrected == rogan_gladen(x, n, tp=tp, fn=fn, tn=tn, fp=fp)
    assert (got.raw, got.n, got.judged, got.method) == (x / n, n, n, "lang-reiczigel")


def test_worked_example_figures() -> None:
    r = corrected_rate(60, 100, tp=90, fn=10, tn=80, fp=20)
    assert (round(r.corrected or 0, 4), round(r.low or 0, 3), round(r.high or 0, 3)) == (
        0.5714,
        0.413,
        0.722,
    )


def test_combined_rate_weights_parts_by_trials() -> None:
    # 40 programmatic trials, 30 passed; 60 judged trials, 36 passed, Se 0.90, Sp 0.80.
    parts = [RatePart(0.4, 30, 40), RatePart(0.6, 36, 60, (90, 10, 80, 20))]
    got = combined_corrected_rate(parts)
    assert got.raw == pytest.approx((30 + 36) / 100)
    assert got.corrected == pytest.approx((30 + 60 * (0.4 / 0.7)) / 100)
    assert (got.n, got.judged) == (100, 60)
    assert got.low is not None and got.high is not None
    assert got.low < (got.corrected or 0) < got.high
    # the judged part alone has the wider interval: programmatic verdicts carry no judge error
    alone = corrected_rate(36, 60, tp=90, fn=10, tn=80, fp=20)
    assert got.high - got.low < (alone.high or 0) - (alone.low or 0)


def test_combined_without_judged_part_is_raw() -> None:
    got = combined_corrected_rate([RatePart(1.0, 7, 10)])
    assert got.raw == got.corrected == 0.7
    assert got.judged == 0


def test_combined_uncorrectable_part_gives_no_figure() -> None:
    got = combined_corrected_rate([RatePart(0.5, 4, 5), RatePart(0.5, 3, 5, (5, 5, 5, 5))])
    assert got.raw == pytest.approx(0.7)
    assert (got.corrected, got.low, got.high) == (None, None, None)
    empty = combined_corrected_rate([])
    assert (empty.raw, empty.corrected, empty.n) == (None, None, 0)


@pytest.mark.parametrize(
    ("truth", "se", "sp", "n", "n_cal"),
    [(0.7, 0.90, 0.85, 200, 100), (0.4, 0.95, 0.80, 150, 60), (0.85, 0.85, 0.90, 300, 80)],
)
def test_corrected_interval_coverage_is_near_nominal(
    truth: float, se: float, sp: float, n: int, n_cal: int
) -> None:
    """Simulate judge certifications and runs; the 95% interval should cover the truth ~95%."""
    rng = np.random.default_rng(20141)
    reps = 1500
    observed_rate = truth * se + (1 - truth) * (1 - sp)
    xs = rng.binomial(n, observed_rate, reps)
    tps = rng.binomial(n_cal, se, reps)
    tns = rng.binomial(n_cal, sp, reps)
    covered = 0
    for x, tp, tn in zip(xs, tps, tns, strict=True):
        r = corrected_rate(
            int(x), n, tp=int(tp), fn=n_cal - int(tp), tn=int(tn), fp=n_cal - int(tn)
        )
        assert r.low is not None and r.high is not None
        covered += r.low <= truth <= r.high
    coverage = covered / reps
    # binomial noise of 1500 draws at 0.95 is ±0.011 (2 sd); the method is near, not exactly, nominal
    assert 0.925 <= coverage <= 0.985, coverage


def test_naive_interval_ignoring_calibration_undercovers() -> None:
    """The same simulation shows why the calibration's uncertainty must be carried: a Wilson
    interval of the observed rate, mapped through Rogan–Gladen with Se and Sp taken as exact,
    covers the truth clearly less often than 95%."""
    rng = np.random.default_rng(7)
    truth, se, sp, n, n_cal, reps = 0.7, 0.9, 0.85, 400, 40, 1500
    xs = rng.binomial(n, truth * se + (1 - truth) * (1 - sp), reps)
    tps, tns = rng.binomial(n_cal, se, reps), rng.binomial(n_cal, sp, reps)
    naive = carried = 0
    for x, tp, tn in zip(xs, tps, tns, strict=True):
        p = proportion_interval(int(x), n)
        s, c = tp / n_cal, tn / n_cal
        lo = ((p.low or 0) + c - 1) / (s + c - 1)
        hi = ((p.high or 0) + c - 1) / (s + c - 1)
        naive += lo <= truth <= hi
        r = corrected_rate(
            int(x), n, tp=int(tp), fn=n_cal - int(tp), tn=int(tn), fp=n_cal - int(tn)
        )
        carried += (r.low or 0) <= truth <= (r.high or 0)
    assert naive / reps < 0.90
    assert carried / reps > 0.93


def test_the_figures_of_docs_judge_md() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "judge.md").read_text(encoding="utf-8")
    tpr, tnr = proportion_interval(190, 200), proportion_interval(176, 200)
    assert f"Wilson 95% [{tpr.low:.3f}, {tpr.high:.3f}]" in docs
    assert f"Wilson 95% [{tnr.low:.3f}, {tnr.high:.3f}]" in docs
    k = kappa_interval([[190, 10], [24, 176]])
    assert f"kappa {k.kappa:.2f}\n[{k.low:.2f}, {k.high:.2f}]" in docs
    rg = rogan_gladen(78, 120, tp=190, fn=10, tn=176, fp=24)
    assert f"= {rg:.4f}" in docs
    both = combined_corrected_rate(
        [RatePart(0.4, 60, 80), RatePart(0.6, 78, 120, (190, 10, 176, 24))]
    )
    assert f"trial-level one, [{both.low:.3f}, {both.high:.3f}]" in docs
    assert f"= {both.corrected:.3f}" in docs
    # The printed interval: the cluster bootstrap over the example's 100 cases (in the sorted-id
    # order casework.runner.corrected_pass uses), 2 trials each, the first of which passes.
    ids = sorted([f"p{i}" for i in range(40)] + [f"j{i}" for i in range(60)])
    judged = [c.startswith("j") for c in ids]
    passes = [0.01 if int(c[1:]) < (18 if c[0] == "j" else 20) else 0.005 for c in ids]
    parts = [
        ClusteredPart(
            [0.01 * (j == want) for j in judged],
            [p * (j == want) for p, j in zip(passes, judged, strict=True)],
            n,
            cert,
        )
        for want, n, cert in ((False, 80, None), (True, 120, (190, 10, 176, 24)))
    ]
    clustered = cluster_corrected_rate(parts)
    assert clustered.corrected == pytest.approx(both.corrected)
    assert f"**[{clustered.low:.3f}, {clustered.high:.3f}]**" in docs


def test_combined_interval_coverage_is_near_nominal() -> None:
    """Programmatic and judge-decided trials together: the interval covers the true pass rate."""
    rng = np.random.default_rng(18)
    reps, n_prog, n_judged, n_cal = 1500, 100, 150, 80
    q, truth_judged, se, sp = 0.8, 0.6, 0.9, 0.85
    truth = (n_prog * q + n_judged * truth_judged) / (n_prog + n_judged)
    prog = rng.binomial(n_prog, q, reps)
    obs = rng.binomial(n_judged, truth_judged * se + (1 - truth_judged) * (1 - sp), reps)
    tps, tns = rng.binomial(n_cal, se, reps), rng.binomial(n_cal, sp, reps)
    w = n_prog / (n_prog + n_judged)
    covered = 0
    for p, x, tp, tn in zip(prog, obs, tps, tns, strict=True):
        cert = (int(tp), n_cal - int(tp), int(tn), n_cal - int(tn))
        r = combined_corrected_rate(
            [RatePart(w, int(p), n_prog), RatePart(1 - w, int(x), n_judged, cert)]
        )
        covered += (r.low or 0) <= truth <= (r.high or 0)
    assert 0.925 <= covered / reps <= 0.985, covered / reps
