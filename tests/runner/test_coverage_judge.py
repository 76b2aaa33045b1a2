"""Coverage of the judge's intervals when people reviewed several trials of one case.

Seeded simulations, numpy-vectorised where the estimator allows (each under 10 s): 100 cases of
k = 3 trials; the judge errs trial by trial, or on whole cases (it misreads a case, so all its
trials). In the same simulation the trial-level interval is shown to under-cover.

The estimator table (docs/judge.md) comes from :func:`estimator_coverage`: Rogan–Gladen with
the cluster bootstrap (certification resampled by case) against PPI++ clustered by case, both
fed the same reviewed sample of 40 cases of the run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from statsmodels.stats.proportion import proportion_confint

from casework.agreement._ppi import PPIStratum, stratified_ppi
from casework.agreement._rates import (
    ClusteredPart,
    cluster_corrected_rate,
    clustered_proportion_interval,
)

CASES, K, TRUE_RATE = 100, 3, 0.7
DOCS = Path(__file__).parents[2] / "docs" / "judge.md"
TPR, TNR = 0.9, 0.85


def tpr_coverage(share_case_level: float, sims: int = 1000) -> tuple[float, float]:
    """Coverage of the clustered TPR interval and of Wilson's over items (60 reviewed cases)."""
    rng = np.random.default_rng(11)
    groups = 60
    # A case is misread whole with this probability, else its trials err independently, so the
    # TPR stays 0.85 whatever the mix.
    miss = 1 - TPR + 0.05
    whole = rng.random((sims, groups)) < share_case_level * miss
    alone = rng.random((sims, groups, K)) < (1 - share_case_level) * miss / (
        1 - share_case_level * miss
    )
    right = ~(whole[:, :, None] | alone)
    x = right.sum(axis=2)
    truth = 1 - miss
    covered = naive = 0
    for row in x:
        p = clustered_proportion_interval(row.tolist(), [K] * groups)
        assert p.low is not None and p.high is not None
        covered += p.low <= truth <= p.high
        low, high = proportion_confint(int(row.sum()), groups * K, method="wilson")
        naive += low <= truth <= high
    return covered / sims, naive / sims


@pytest.mark.parametrize("share", [1.0, 0.6], ids=["whole cases", "mostly whole cases"])
def test_clustered_tpr_interval_covers_and_the_item_level_one_does_not(share: float) -> None:
    covered, naive = tpr_coverage(share)
    assert 0.93 <= covered <= 0.97, covered
    assert naive < 0.90, naive
    assert f"| {covered:.3f} | {naive:.3f} |" in DOCS.read_text(encoding="utf-8")


def one_run(
    rng: np.random.Generator, case_level: bool, reviewed: int = 40
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """True verdicts, the judge's, and the reviewed cases, of one simulated run (beta ICC 0.5)."""
    truth = (rng.random((CASES, K)) < rng.beta(TRUE_RATE, 1 - TRUE_RATE, CASES)[:, None]).astype(
        np.int64
    )
    u = rng.random((CASES, 1)).repeat(K, axis=1) if case_level else rng.random((CASES, K))
    seen = np.where(truth == 1, u < TPR, u >= TNR).astype(np.int64)
    return truth, seen, rng.choice(CASES, reviewed, replace=False)


def per_case_counts(
    truth: NDArray[np.int64], seen: NDArray[np.int64], cases: NDArray[np.int64]
) -> list[tuple[int, int, int, int]]:
    """``(tp, fn, tn, fp)`` of each reviewed case."""
    t, s = truth[cases], seen[cases]
    tp, fn = ((t == 1) & (s == 1)).sum(1), ((t == 1) & (s == 0)).sum(1)
    tn, fp = ((t == 0) & (s == 0)).sum(1), ((t == 0) & (s == 1)).sum(1)
    return [(int(a), int(b), int(c), int(d)) for a, b, c, d in zip(tp, fn, tn, fp, strict=True)]


def estimator_coverage(case_level: bool, sims: int = 200) -> dict[str, tuple[float, float]]:
    """Coverage and mean width of each estimator's interval, and of RG resampling items."""
    rng = np.random.default_rng(12 + case_level)
    w = np.full(CASES, 1 / CASES)
    out: dict[str, list[tuple[bool, float]]] = {"rogan-gladen": [], "items": [], "ppi++": []}
    for _ in range(sims):
        truth, seen, reviewed = one_run(rng, case_level)
        passes = (seen.sum(axis=1) / K * w).tolist()
        counts = per_case_counts(truth, seen, reviewed)
        total = (
            sum(c[0] for c in counts),
            sum(c[1] for c in counts),
            sum(c[2] for c in counts),
            sum(c[3] for c in counts),
        )
        for name, by_case in (("rogan-gladen", counts), ("items", [])):
            part = ClusteredPart(w.tolist(), passes, CASES * K, total, by_case)
            r = cluster_corrected_rate([part], resamples=500)
            assert r.low is not None and r.high is not None
            out[name].append((r.low <= TRUE_RATE <= r.high, r.high - r.low))
        stratum = PPIStratum(
            w,
            passes,
            CASES * K,
            truth[reviewed].ravel(),
            seen[reviewed].ravel(),
            np.repeat(reviewed, K),
        )
        p = stratified_ppi([stratum])
        out["ppi++"].append((p.low <= TRUE_RATE <= p.high, p.high - p.low))
    return {
        k: (float(np.mean([c for c, _ in v])), float(np.mean([x for _, x in v])))
        for k, v in out.items()
    }


@pytest.mark.parametrize("case_level", [False, True], ids=["trial errors", "case errors"])
def test_estimator_table(case_level: bool) -> None:
    """Rogan–Gladen's clustered interval covers at least nominally in both settings; PPI++'s is
    narrower (which is the default: tests/agreement/test_estimator_choice.py)."""
    table = estimator_coverage(case_level)
    rg, ppi = table["rogan-gladen"], table["ppi++"]
    assert 0.93 <= rg[0] <= 0.995, table
    assert 0.88 <= ppi[0] <= 0.97, table
    assert ppi[1] < rg[1], table
    items = table["items"]
    row = (
        f"| {rg[0]:.3f} (mean width {rg[1]:.3f}) | {items[0]:.3f} ({items[1]:.3f}) "
        f"| {ppi[0]:.3f} ({ppi[1]:.3f}) |"
    )
    assert row in DOCS.read_text(encoding="utf-8"), row
    if case_level:
        # Resampling the reviewed items as independent misses what a misread case does.
        assert table["items"][0] < rg[0], table
