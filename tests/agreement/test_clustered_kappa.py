"""Cohen's kappa with an interval clustered by case: statsmodels on singleton cases, and coverage.

Seeded simulation: 60 reviewed cases x 3 trials, people's verdicts all-or-nothing per case or
beta-binomial with intra-case correlation 0.5 (pass share 0.6), a judge with TPR 0.85 and TNR
0.80 that misreads whole cases. The true kappa is that of one trial's cell
probabilities. The clustered interval covers 93-97%; the asymptotic interval over items
(Fleiss, Cohen & Everitt; statsmodels) under-covers in the same simulation.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from statsmodels.stats.inter_rater import cohens_kappa

from casework.agreement._rates import kappa_interval
from casework.agreement.clustered_kappa import clustered_kappa_interval
from casework.cli.judge import _cert_line
from casework.grading import PROMPT_VERSION
from casework.grading.certify import Pin, Settings, certify_counts

DOCS = Path(__file__).parents[2] / "docs" / "judge.md"
CASES, K, SHARE, TPR, TNR = 60, 3, 0.6, 0.85, 0.8


def _true_kappa() -> float:
    p = np.array([[SHARE * TPR, SHARE * (1 - TPR)], [(1 - SHARE) * (1 - TNR), (1 - SHARE) * TNR]])
    p_o, p_e = np.trace(p), p.sum(axis=1) @ p.sum(axis=0)
    return float((p_o - p_e) / (1 - p_e))


def test_singleton_cases_give_statsmodels_interval() -> None:
    """SAS PROC FREQ's example (statsmodels' tests): every item its own case."""
    table = np.array([[0, 4, 1], [0, 8, 0], [0, 1, 5]])
    singles = []
    for (i, j), count in np.ndenumerate(table):
        for _ in range(count):
            cell = np.zeros((3, 3), dtype=int)
            cell[i, j] = 1
            singles.append(cell.tolist())
    ours = clustered_kappa_interval(singles, small_sample=False)
    theirs = cohens_kappa(table)
    assert ours.kappa == pytest.approx(theirs.kappa, abs=1e-12)
    assert ours.se == pytest.approx(theirs.std_kappa, abs=1e-12)
    assert (ours.low, ours.high) == pytest.approx((theirs.kappa_low, theirs.kappa_upp), abs=1e-12)
    assert (ours.cases, ours.items) == (19, 19)


def test_edges() -> None:
    assert clustered_kappa_interval([]).kappa is None
    assert clustered_kappa_interval([[[2, 0], [0, 0]]]).kappa is None  # one category each
    one_sided = clustered_kappa_interval([[[2, 1], [0, 0]], [[1, 0], [0, 0]]])
    assert (one_sided.kappa, one_sided.low, one_sided.high) == (0.0, -1.0, 1.0)
    assert kappa_interval([[3, 1], [0, 0]]) == (0.0, -1.0, 1.0)  # the same convention
    with pytest.raises(ValueError, match="tables: need one square table per case"):
        clustered_kappa_interval([[[1, 0, 0], [0, 1, 0]]])
    with pytest.raises(ValueError, match="must not be negative"):
        clustered_kappa_interval([[[1, -1], [0, 1]]])


def _tables(rng: np.random.Generator, scenario: str) -> NDArray[np.int64]:
    """Per-case 2x2 tables (rows: people pass/fail, columns: judge pass/fail)."""
    if scenario == "all-or-nothing":
        truth = (rng.random((CASES, 1)) < SHARE).repeat(K, axis=1)
    else:
        p = rng.beta(SHARE, 1 - SHARE, CASES)  # ICC 1 / (a + b + 1) = 0.5
        truth = rng.random((CASES, K)) < p[:, None]
    # The judge misreads a case whole: one draw decides every trial of it.
    u = rng.random((CASES, 1)).repeat(K, axis=1)
    judge = np.where(truth, u < TPR, u >= TNR)
    tp, fn = (truth & judge).sum(1), (truth & ~judge).sum(1)
    fp, tn = (~truth & judge).sum(1), (~truth & ~judge).sum(1)
    return np.stack([np.stack([tp, fn], 1), np.stack([fp, tn], 1)], 1)


def coverage(scenario: str, sims: int = 2000) -> tuple[float, float]:
    """Coverage of the clustered interval and of the asymptotic one over items."""
    rng = np.random.default_rng(61 if scenario == "all-or-nothing" else 62)
    truth = _true_kappa()
    covered = naive = 0
    for _ in range(sims):
        tables = _tables(rng, scenario)
        k = clustered_kappa_interval(tables.tolist())
        assert k.low is not None and k.high is not None
        covered += k.low <= truth <= k.high
        flat = kappa_interval(tables.sum(axis=0).tolist())
        assert flat.low is not None and flat.high is not None
        naive += flat.low <= truth <= flat.high
    return covered / sims, naive / sims


@pytest.mark.parametrize("scenario", ["all-or-nothing", "beta-binomial ICC 0.5"])
def test_clustered_kappa_covers_and_the_item_level_one_does_not(scenario: str) -> None:
    covered, naive = coverage(scenario)
    assert 0.93 <= covered <= 0.97, covered
    assert naive < 0.90, naive
    row = f"| {scenario} | {covered:.3f} | {naive:.3f} |"
    assert row in DOCS.read_text(encoding="utf-8"), row


def test_judge_certification_clusters_kappa_by_reviewed_case() -> None:
    """`judge certify`: kappa over several trials of one case counts cases, and says so."""
    pin = Pin("refunds", "answer_fact", "judge-1", PROMPT_VERSION, "r-1")
    cases = [(3, 0, 0, 0)] * 8 + [(0, 3, 0, 0)] * 2 + [(0, 0, 3, 0)] * 9 + [(0, 0, 0, 3)]
    r = certify_counts(pin, 24, 6, 27, 3, Settings(), current=True, cases=cases)
    flat = certify_counts(pin, 24, 6, 27, 3, Settings(), current=True)
    assert r.kappa[0] == pytest.approx(flat.kappa[0], abs=1e-12)
    expected = clustered_kappa_interval([[[a, b], [d, c]] for a, b, c, d in cases])
    assert r.kappa == (expected.kappa, expected.low, expected.high)
    assert flat.kappa[1] is not None and r.kappa[1] is not None and r.kappa[1] < flat.kappa[1]
    assert r.as_json()["kappa_interval"] == (
        "clustered by case (20 cases): cluster-robust variance, t interval"
    )
    assert f"[{r.kappa[1]:.3f}, {r.kappa[2]:.3f}] (clustered by case (20 cases))" in _cert_line(r)
    assert "clustered" not in _cert_line(flat)


def test_the_worked_example_of_docs_judge_md() -> None:
    right_pass, right_fail = [[3, 0], [0, 0]], [[0, 0], [0, 3]]
    tables = [right_pass] * 5 + [right_fail] * 3 + [[[0, 3], [0, 0]], [[0, 0], [3, 0]]]
    k = clustered_kappa_interval(tables)
    flat = kappa_interval(np.sum(tables, axis=0).tolist())
    assert k.low is not None and k.high is not None and flat.low is not None
    docs = DOCS.read_text(encoding="utf-8")
    assert f"Kappa over the 30 items is\n**{k.kappa:.3f}**" in docs
    assert f"claims [{flat.low:.3f}, {flat.high:.3f}]" in docs
    assert f"is\n**[{k.low:.3f}, {k.high:.3f}]**" in docs
    assert (
        f"`kappa {k.kappa:.3f} [{k.low:.3f}, {k.high:.3f}] (clustered by\ncase (10 cases))`" in docs
    )
