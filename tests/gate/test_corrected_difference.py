"""The judge-corrected difference of two runs of one release, paired by case.

Point estimates against the authors' package (``ppi_py``'s ``ppi_mean_pointestimate``, one run
minus the other) and a hand computation of Rogan–Gladen; coverage in seeded simulations with
trials clustered in cases (all-or-nothing cases, and a beta-binomial with intra-case correlation
0.5), where the same estimators with trials taken as independent under-cover.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from casework.agreement._ppi import PPIStratum, ppi_difference
from casework.agreement._rates import ClusteredPart, cluster_corrected_difference, rogan_gladen
from casework.runner.analysis import TrialDecision
from casework.runner.corrected_difference import corrected_difference
from casework.runner.records import CheckCertification

ppi_py = pytest.importorskip("ppi_py")

DOCS = Path(__file__).parents[2] / "docs"
CASES, K, TRUE_RATE, DROP = 100, 3, 0.7, 0.05
TPR, TNR, N_CAL = 0.9, 0.85, 150


def _decisions(
    passed: NDArray[np.bool_], judged: NDArray[np.bool_], slice_: str = "refunds"
) -> list[TrialDecision]:
    """Decisions of a run: ``passed[c, t]``, judged by ``answer_fact`` where ``judged[c]``."""
    return [
        TrialDecision(
            f"c{c:03d}",
            slice_,
            "dev",
            "mined",
            bool(passed[c, t]),
            ("answer_fact",) if judged[c] else (),
            t,
        )
        for c in range(passed.shape[0])
        for t in range(passed.shape[1])
    ]


def test_ppi_point_estimate_is_ppi_py_run_minus_baseline() -> None:
    rng = np.random.default_rng(21)
    cases = 60
    truth_a, truth_b = rng.random((cases, 2)) < 0.65, rng.random((cases, 2)) < 0.75
    seen_a = np.where(truth_a, rng.random((cases, 2)) < 0.9, rng.random((cases, 2)) < 0.2)
    seen_b = np.where(truth_b, rng.random((cases, 2)) < 0.9, rng.random((cases, 2)) < 0.2)
    every = np.ones(cases, dtype=bool)
    run, base = _decisions(seen_a, every), _decisions(seen_b, every)
    rev_a = {(f"c{c:03d}", t): bool(truth_a[c, t]) for c in range(0, 40) for t in range(2)}
    rev_b = {(f"c{c:03d}", t): bool(truth_b[c, t]) for c in range(20, 60) for t in range(2)}
    got = corrected_difference(
        run, base, {}, {}, estimator="ppi++", run_reviewed=rev_a, baseline_reviewed=rev_b
    )
    assert got is not None and got.estimator == "ppi++" and got.note == ""

    def theirs(seen: NDArray[np.bool_], truth: NDArray[np.bool_], rows: range) -> float:
        y = truth[list(rows)].ravel().astype(float)
        f = seen[list(rows)].ravel().astype(float)
        return float(np.ravel(ppi_py.ppi_mean_pointestimate(y, f, seen.ravel().astype(float)))[0])

    expected = theirs(seen_a, truth_a, range(40)) - theirs(seen_b, truth_b, range(20, 60))
    assert got.corrected == pytest.approx(expected, abs=1e-12)
    assert got.raw == pytest.approx(seen_a.mean() - seen_b.mean(), abs=1e-12)
    assert got.reviewed == (80, 80) and got.method.startswith("PPI++")
    assert got.low is not None and got.high is not None and got.low < expected < got.high
    assert "corrected difference" in got.describe() and "PPI++)" in got.describe()


def test_rogan_gladen_point_estimate_by_hand_and_shared_certification() -> None:
    """Half of each run is programmatic, half judged; RG by hand on each judged half."""
    cert = CheckCertification(tp=90, fn=10, tn=80, fp=20, admissible=True)
    certs = {"refunds": {"answer_fact": cert}}
    judged = np.arange(40) >= 20
    a = np.zeros((40, 2), dtype=bool)
    b = np.zeros((40, 2), dtype=bool)
    a[:14], a[20:32] = True, True  # 14 programmatic and 12 judged cases pass (both trials)
    b[:16], b[20:36] = True, True
    got = corrected_difference(_decisions(a, judged), _decisions(b, judged), certs, certs)
    assert got is not None and got.estimator == "rogan-gladen"
    rg_a = rogan_gladen(24, 40, tp=90, fn=10, tn=80, fp=20)
    rg_b = rogan_gladen(32, 40, tp=90, fn=10, tn=80, fp=20)
    assert rg_a is not None and rg_b is not None
    hand = (0.5 * 14 / 20 + 0.5 * rg_a) - (0.5 * 16 / 20 + 0.5 * rg_b)
    assert got.corrected == pytest.approx(hand, abs=1e-12)
    assert got.raw == pytest.approx((26 - 32) / 40)
    assert got.low is not None and got.high is not None and got.low < hand < got.high
    assert got.method.startswith("paired cluster bootstrap over cases")


def test_without_certification_or_reviewed_trials_it_says_why() -> None:
    judged = np.ones(10, dtype=bool)
    a = np.ones((10, 1), dtype=bool)
    got = corrected_difference(_decisions(a, judged), _decisions(a, judged), {}, {})
    assert got is not None and got.corrected is None
    assert got.problem == (
        "judge not certified for refunds/answer_fact (run), refunds/answer_fact (baseline)"
    )
    assert "(raw; judge not certified" in got.describe()
    chance = CheckCertification(tp=5, fn=5, tn=5, fp=5, admissible=True)
    certs = {"refunds": {"answer_fact": chance}}
    got = corrected_difference(
        _decisions(a, judged), _decisions(a, judged), certs, certs, estimator="ppi++"
    )
    assert got is not None and got.corrected is None and got.estimator == "rogan-gladen"
    assert got.note.startswith("PPI++ needs people's verdicts on both runs' replies")
    assert got.problem.startswith("judge no better than chance on refunds/answer_fact (run)")
    programmatic = np.zeros(10, dtype=bool)
    assert (
        corrected_difference(_decisions(a, programmatic), _decisions(a, programmatic), {}, {})
        is None
    )


# --- coverage --------------------------------------------------------------------------------


def _probabilities(rng: np.random.Generator, scenario: str) -> NDArray[np.float64]:
    if scenario == "all-or-nothing":
        return (rng.random(CASES) < TRUE_RATE).astype(float)
    return rng.beta(TRUE_RATE, 1 - TRUE_RATE, CASES)  # ICC 1 / (a + b + 1) = 0.5


def _judge(rng: np.random.Generator, truth: NDArray[np.int64]) -> NDArray[np.float64]:
    u = rng.random(truth.shape)
    return np.where(truth == 1, u < TPR, u >= TNR).astype(float)


def _two_runs(
    rng: np.random.Generator, scenario: str
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.float64], NDArray[np.float64]]:
    """True verdicts of both runs and the judge's: the run fails 5% of cases outright (shared
    difficulty elsewhere), so the true difference is -0.05."""
    base_p = _probabilities(rng, scenario)
    worse = rng.random(CASES) < DROP / TRUE_RATE
    run_p = np.where(worse, 0.0, base_p)
    ta = (rng.random((CASES, K)) < run_p[:, None]).astype(np.int64)
    tb = (rng.random((CASES, K)) < base_p[:, None]).astype(np.int64)
    return ta, tb, _judge(rng, ta), _judge(rng, tb)


def _rg_parts(
    seen: NDArray[np.float64], cert: tuple[int, int, int, int], units: int
) -> list[ClusteredPart]:
    """One judged part over ``units`` clusters: the cases, or every trial its own (naive)."""
    per_unit = seen.reshape(units, -1).mean(axis=1) / units
    return [ClusteredPart([1 / units] * units, per_unit.tolist(), seen.size, cert)]


def rogan_gladen_coverage(scenario: str, sims: int = 250) -> tuple[float, float]:
    """Coverage of the paired cluster bootstrap, and of the same bootstrap over trials."""
    rng = np.random.default_rng(31)
    covered = naive = 0
    for _ in range(sims):
        _, _, sa, sb = _two_runs(rng, scenario)
        tp, tn = int(rng.binomial(N_CAL, TPR)), int(rng.binomial(N_CAL, TNR))
        cert = (tp, N_CAL - tp, tn, N_CAL - tn)
        d = cluster_corrected_difference(
            _rg_parts(sa, cert, CASES), _rg_parts(sb, cert, CASES), resamples=300, seed=1
        )
        covered += (d.low or 0) <= -DROP <= (d.high or 0)
        flat = cluster_corrected_difference(
            _rg_parts(sa, cert, CASES * K), _rg_parts(sb, cert, CASES * K), resamples=300, seed=1
        )
        naive += (flat.low or 0) <= -DROP <= (flat.high or 0)
    return covered / sims, naive / sims


def _stratum(
    seen: NDArray[np.float64], truth: NDArray[np.int64], reviewed: NDArray[np.int64]
) -> list[PPIStratum]:
    """One judged stratum clustered by case: the reviewed cases' trials carry their case."""
    w = np.full(CASES, 1 / CASES)
    y, f = truth[reviewed].ravel(), seen[reviewed].ravel()
    return [PPIStratum(w, seen.mean(axis=1) * w, seen.size, y, f, np.repeat(reviewed, K))]


def _flat(
    seen: NDArray[np.float64], truth: NDArray[np.int64], reviewed: NDArray[np.int64]
) -> list[PPIStratum]:
    """The same with every trial its own case (the naive, unclustered estimator)."""
    w = np.full(seen.size, 1 / seen.size)
    y, f = truth[reviewed].ravel(), seen[reviewed].ravel()
    return [PPIStratum(w, seen.ravel() * w, seen.size, y, f, np.full(len(y), -1))]


def ppi_coverage(scenario: str, sims: int = 1000) -> tuple[float, float]:
    """Coverage of PPI++'s paired difference (40 reviewed cases per run), and unclustered."""
    rng = np.random.default_rng(32)
    covered = naive = 0
    for _ in range(sims):
        ta, tb, sa, sb = _two_runs(rng, scenario)
        ra, rb = rng.choice(CASES, 40, replace=False), rng.choice(CASES, 40, replace=False)
        d = ppi_difference(_stratum(sa, ta, ra), _stratum(sb, tb, rb))
        covered += d.low <= -DROP <= d.high
        f = ppi_difference(_flat(sa, ta, ra), _flat(sb, tb, rb), small_sample=False)
        naive += f.low <= -DROP <= f.high
    return covered / sims, naive / sims


SCENARIOS = ["all-or-nothing", "beta-binomial ICC 0.5"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_rogan_gladen_difference_covers(scenario: str) -> None:
    covered, naive = rogan_gladen_coverage(scenario)
    assert 0.93 <= covered <= 0.97, covered
    if scenario == "all-or-nothing":
        assert naive < 0.93, naive
    # With the judge's errors trial by trial, the beta-binomial's trials of one case differ
    # enough that the trial-level bootstrap's pairing of trial j with trial j is near nominal
    # (docs/gate.md shows the figure).
    row = f"| Rogan–Gladen, paired cluster bootstrap | {scenario} | {covered:.3f} | {naive:.3f} |"
    assert row in (DOCS / "gate.md").read_text(encoding="utf-8"), row


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_ppi_difference_covers_and_the_trial_level_one_does_not(scenario: str) -> None:
    covered, naive = ppi_coverage(scenario)
    assert 0.93 <= covered <= 0.97, covered
    assert naive < 0.90, naive
    row = f"| PPI++, paired by case | {scenario} | {covered:.3f} | {naive:.3f} |"
    assert row in (DOCS / "gate.md").read_text(encoding="utf-8"), row


def test_the_worked_examples_of_the_docs() -> None:
    """docs/judge.md's plain-PPI difference, through ppi_difference with every item its own case."""
    judge_a, judge_b = [1, 1, 1, 0, 1, 1, 0, 1], [1, 1, 0, 0, 1, 1, 0, 1]
    w = np.full(8, 1 / 8)

    def run(unlabelled: list[int], people: list[int], judge: list[int]) -> list[PPIStratum]:
        return [PPIStratum(w, w * np.array(unlabelled), 8, people, judge, [-1] * 4)]

    d = ppi_difference(
        run(judge_a, [1, 1, 0, 1], [1, 0, 0, 1]), run(judge_b, [1, 0, 0, 1], [1, 0, 1, 1]), lam=1.0
    )
    docs = (DOCS / "judge.md").read_text(encoding="utf-8")
    a = 6 / 8 + (3 - 2) / 4
    b = 5 / 8 + (2 - 3) / 4
    assert d.estimate == pytest.approx(a - b, abs=1e-12)
    assert f"5/8 + (2 − 3)/4 = **{b:.3f}**" in docs
    assert f"A is\n**{a - b:+.3f}** ahead of B" in docs
    assert f"only 6/8 − 5/8 = {np.mean(judge_a) - np.mean(judge_b):+.3f}" in docs
