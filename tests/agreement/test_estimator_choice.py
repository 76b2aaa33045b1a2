"""Which judge-corrected estimator is the default: the one whose interval covers best.

Seeded simulation on strongly clustered data: 100 cases x 3 trials whose pass probabilities are
all-or-nothing or beta-binomial with intra-case correlation 0.5 around 0.70; a judge with TPR
0.90 and TNR 0.85 erring trial by trial or on whole cases; people reviewing every trial of 40
cases of the run. Each estimator is fed the same reviewed cases: Rogan–Gladen with the cluster
bootstrap (the reviewed cases resampled), and PPI++ clustered by case, with the plain sandwich
and a normal quantile, and with the small-sample corrections (CR1, t on reviewed cases - 1).
docs/judge.md shows the table this computes; the default is the estimator whose worst coverage
is nearest 0.95, and the project's `[judge] estimator` default must name it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from casework.agreement._ppi import PPIStratum, stratified_ppi
from casework.agreement._rates import ClusteredPart, cluster_corrected_rate
from casework.project import JudgeConfig

CASES, K, TRUE_RATE, TPR, TNR, REVIEWED = 100, 3, 0.7, 0.9, 0.85, 40
DOCS = Path(__file__).parents[2] / "docs" / "judge.md"
SETTINGS = [
    ("all-or-nothing", False),
    ("all-or-nothing", True),
    ("beta-binomial ICC 0.5", False),
    ("beta-binomial ICC 0.5", True),
]


def one_run(
    rng: np.random.Generator, scenario: str, case_errors: bool
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """True verdicts, the judge's, and the reviewed cases of one simulated run."""
    if scenario == "all-or-nothing":
        p = (rng.random(CASES) < TRUE_RATE).astype(float)
    else:
        p = rng.beta(TRUE_RATE, 1 - TRUE_RATE, CASES)
    truth = (rng.random((CASES, K)) < p[:, None]).astype(np.int64)
    u = rng.random((CASES, 1)).repeat(K, axis=1) if case_errors else rng.random((CASES, K))
    seen = np.where(truth == 1, u < TPR, u >= TNR).astype(np.int64)
    return truth, seen, rng.choice(CASES, REVIEWED, replace=False)


def ppi_coverage(scenario: str, case_errors: bool, sims: int = 1000) -> dict[str, float]:
    """Coverage of PPI++'s interval, plain sandwich and small-sample corrected."""
    rng = np.random.default_rng(41 + 2 * case_errors + (scenario == "all-or-nothing"))
    w = np.full(CASES, 1 / CASES)
    hits = {"plain": 0, "corrected": 0}
    for _ in range(sims):
        truth, seen, reviewed = one_run(rng, scenario, case_errors)
        stratum = PPIStratum(
            w,
            seen.mean(axis=1) * w,
            CASES * K,
            truth[reviewed].ravel(),
            seen[reviewed].ravel(),
            np.repeat(reviewed, K),
        )
        for name, small in (("plain", False), ("corrected", True)):
            p = stratified_ppi([stratum], small_sample=small)
            hits[name] += p.low <= TRUE_RATE <= p.high
    return {k: v / sims for k, v in hits.items()}


def rg_coverage(scenario: str, case_errors: bool, sims: int = 200) -> float:
    """Coverage of Rogan–Gladen's cluster bootstrap (the reviewed cases resampled too)."""
    rng = np.random.default_rng(51 + 2 * case_errors + (scenario == "all-or-nothing"))
    w = [1 / CASES] * CASES
    covered = 0
    for _ in range(sims):
        truth, seen, reviewed = one_run(rng, scenario, case_errors)
        t, s = truth[reviewed], seen[reviewed]
        counts = [
            (int(a), int(b), int(c), int(d))
            for a, b, c, d in zip(
                ((t == 1) & (s == 1)).sum(1),
                ((t == 1) & (s == 0)).sum(1),
                ((t == 0) & (s == 0)).sum(1),
                ((t == 0) & (s == 1)).sum(1),
                strict=True,
            )
        ]
        total = tuple(int(x) for x in np.sum(counts, axis=0))
        part = ClusteredPart(w, (seen.mean(axis=1) / CASES).tolist(), CASES * K, total, counts)  # type: ignore[arg-type]
        r = cluster_corrected_rate([part], resamples=400)
        covered += (r.low or 0) <= TRUE_RATE <= (r.high or 0)
    return covered / sims


@pytest.fixture(scope="module")
def table() -> dict[tuple[str, bool], tuple[float, float, float]]:
    out = {}
    for scenario, case_errors in SETTINGS:
        ppi = ppi_coverage(scenario, case_errors)
        out[(scenario, case_errors)] = (
            rg_coverage(scenario, case_errors),
            ppi["plain"],
            ppi["corrected"],
        )
    return out


def test_the_table_in_docs_judge_md(table: dict[tuple[str, bool], tuple[float, ...]]) -> None:
    docs = DOCS.read_text(encoding="utf-8")
    for (scenario, case_errors), (rg, plain, fixed) in table.items():
        errors = "on whole cases" if case_errors else "trial by trial"
        row = f"| {scenario} | {errors} | {rg:.3f} | {plain:.3f} | {fixed:.3f} |"
        assert row in docs, row


def test_the_default_estimator_covers_best(
    table: dict[tuple[str, bool], tuple[float, ...]],
) -> None:
    worst = {
        "rogan-gladen": max(abs(rg - 0.95) for rg, _, _ in table.values()),
        "ppi++": max(abs(fixed - 0.95) for _, _, fixed in table.values()),
    }
    best = min(worst, key=lambda k: worst[k])
    assert JudgeConfig().estimator == best, worst
    # The corrections are what bring PPI++ into the 93–97% band; the plain sandwich is lower.
    assert all(0.93 <= fixed <= 0.97 for _, _, fixed in table.values()), table
    assert np.mean([p for _, p, _ in table.values()]) < np.mean([f for _, _, f in table.values()])
