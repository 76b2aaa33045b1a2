"""The statistical gate: a run against its baseline paired by case, and the floor's lower bound.

The decision table (ship / block / inconclusive) on constructed pairs of runs, the failing-closed
defaults, the k-of-n case rule, and the paired figures against independent libraries (scipy's
paired t test, statsmodels' Holm correction and McNemar test).
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import ttest_rel
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from casework.gate import GateInputs, evaluate_gate
from casework.gate._statistical import compare_with_baseline
from casework.project import GateConfig, ThresholdsConfig
from casework.runner.metrics import CaseTally
from casework.runner.paired import (
    cases_needed,
    inferiority_p,
    minimum_detectable_effect,
    noninferiority_p,
    paired_difference,
)
from casework.shapes._stats import holm

DOCS = Path(__file__).parents[2] / "docs" / "gate.md"


def tallies(passes: list[int], k: int = 1, slices: list[str] | None = None) -> dict[str, CaseTally]:
    """Cases ``c000…`` with ``k`` trials, ``passes[i]`` of them passing."""
    names = slices or ["refunds"] * len(passes)
    return {
        f"c{i:03}": CaseTally(f"c{i:03}", k, c, slice=s, split="dev")
        for i, (c, s) in enumerate(zip(passes, names, strict=True))
    }


def inputs(run: dict[str, CaseTally], baseline: dict[str, CaseTally] | None) -> GateInputs:
    return GateInputs(
        run_id="new",
        dataset_ref="refunds@2",
        finished=True,
        slices=sorted({t.slice for t in run.values()}),
        slice_kappa={s: 0.9 for t in run.values() for s in [t.slice]},
        run=run,
        baseline=baseline,
        baseline_id="old" if baseline is not None else None,
        dataset_version=2,
        latest_version=2,
    )


def pair(n: int, lost: int, won: int) -> tuple[dict[str, CaseTally], dict[str, CaseTally]]:
    """``n`` cases the baseline passes but ``lost`` + ... : the run loses ``lost`` and wins ``won``."""
    base = [1] * (n - won) + [0] * won
    run = [0] * lost + [1] * (n - won - lost) + [1] * won
    return tallies(run), tallies(base)


FLOOR = GateConfig(min_pass_rate=0.5, max_regression=0.05)


@pytest.mark.parametrize(
    ("n", "lost", "won", "decision", "codes"),
    [
        (400, 0, 0, "ship", []),  # identical runs on many cases: non-inferiority shown
        (400, 4, 4, "ship", []),  # as many lost as won
        (40, 1, 0, "inconclusive", ["inconclusive"]),  # within the margin, too few cases
        (400, 40, 0, "block", ["regression"]),  # a drop of 0.10 > 0.05
        (20, 2, 0, "block", ["regression"]),  # observed drop beyond the margin, few cases
    ],
)
def test_decision_table(n: int, lost: int, won: int, decision: str, codes: list[str]) -> None:
    run, base = pair(n, lost, won)
    report = evaluate_gate(inputs(run, base), FLOOR, ThresholdsConfig())
    assert report.decision == decision
    assert [r.code for r in report.failures] == codes
    assert report.passed is (decision == "ship")
    assert report.comparison is not None and report.comparison.decision == decision


def test_inconclusive_fails_closed_by_default_and_passes_only_when_configured() -> None:
    run, base = pair(40, 1, 0)
    closed = evaluate_gate(inputs(run, base), FLOOR, ThresholdsConfig())
    assert not closed.passed and closed.inconclusive_policy == "fail"
    [reason] = closed.failures
    assert reason.message.endswith('inconclusive fails closed ([gate] inconclusive = "fail")')
    assert "about " in reason.message and " cases would decide it" in reason.message
    opened = evaluate_gate(
        inputs(run, base), FLOOR.model_copy(update={"inconclusive": "pass"}), ThresholdsConfig()
    )
    assert opened.passed and opened.decision == "inconclusive" and opened.failures == []
    assert [w.code for w in opened.warnings] == ["inconclusive"]
    assert opened.warnings[0].message.endswith('inconclusive passes ([gate] inconclusive = "pass")')


def test_more_cases_at_the_same_rates_decide_what_was_inconclusive() -> None:
    """The cases the comparison asks for, at the observed rates, make it decide."""
    run, base = pair(40, 1, 0)
    cmp = compare_with_baseline(run, base, list(run), ["refunds"], FLOOR)
    assert cmp is not None and cmp.decision == "inconclusive" and cmp.cases_needed is not None
    more = cmp.cases_needed
    scaled_run, scaled_base = pair(more, round(more / 40), 0)
    bigger = compare_with_baseline(scaled_run, scaled_base, list(scaled_run), ["refunds"], FLOOR)
    assert bigger is not None and bigger.decision == "ship"


def test_a_slice_that_regresses_blocks_after_holm() -> None:
    """The whole stays within the margin, but one of three slices clearly regressed."""
    slices = ["a"] * 300 + ["b"] * 300 + ["c"] * 60
    base = tallies([1] * 660, slices=slices)
    run = tallies([1] * 600 + [0] * 30 + [1] * 30, slices=slices)
    report = evaluate_gate(inputs(run, base), FLOOR, ThresholdsConfig())
    assert report.decision == "block"
    assert [(r.code, r.slice) for r in report.failures] == [("slice_regressed", "c")]
    cmp = report.comparison
    assert cmp is not None
    raw = [s.p_inferior for s in cmp.slices]
    expected = multipletests(raw, alpha=0.025, method="holm")[1]
    assert [s.p_holm for s in cmp.slices] == pytest.approx(list(expected))
    assert holm(raw) == pytest.approx(list(expected))


def test_k_of_n_rule_counts_flaky_cases() -> None:
    """2 of 3: a case passing 2 of 3 trials passes, 1 of 3 does not, 2 of 2 trials does not."""
    gate = GateConfig(min_pass_rate=0.6, case_rule="k_of_n", k=2, n=3)
    run = tallies([2, 2, 1, 3, 3], k=3) | {"short": CaseTally("short", 2, 2, "refunds", "dev")}
    report = evaluate_gate(inputs(run, None), gate, ThresholdsConfig())
    assert report.passed, report.lines()
    stricter = evaluate_gate(
        inputs(run, None), gate.model_copy(update={"min_pass_rate": 0.7}), ThresholdsConfig()
    )
    assert [str(r) for r in stricter.failures] == [
        "[pass_rate] cases passing 2 of 3 trials 0.667 is below the minimum 0.7"
    ]
    # the mean rule would have passed it (pass@1 0.78)
    mean = evaluate_gate(inputs(run, None), GateConfig(min_pass_rate=0.7), ThresholdsConfig())
    assert mean.passed


def test_floor_on_lower_bound() -> None:
    """pass@1 0.80 on 50 cases: above a 0.75 floor, but its interval's lower bound is not."""
    run = tallies([1] * 40 + [0] * 10)
    point = GateConfig(min_pass_rate=0.75)
    assert evaluate_gate(inputs(run, None), point, ThresholdsConfig()).passed
    bound = point.model_copy(update={"floor_on": "lower_bound"})
    report = evaluate_gate(inputs(run, None), bound, ThresholdsConfig())
    assert report.decision == "inconclusive" and not report.passed
    [reason] = report.failures
    assert reason.code == "pass_rate_inconclusive"
    assert "cluster bootstrap over cases, 2000 resamples, seed 0" in reason.message
    low = float(re.findall(r"\[(0\.\d+),", reason.message)[0])
    assert low < 0.75
    # enough cases at the same rate clear it
    many = tallies([1] * 400 + [0] * 100)
    assert evaluate_gate(inputs(many, None), bound, ThresholdsConfig()).decision == "ship"


def test_paired_figures_against_scipy_and_statsmodels() -> None:
    rng = np.random.default_rng(5)
    a = rng.integers(0, 4, 120) / 3
    b = np.clip(a + rng.choice([-1 / 3, 0, 1 / 3], 120, p=[0.2, 0.6, 0.2]), 0, 1)
    d = paired_difference(a.tolist(), b.tolist())
    assert d is not None
    # Without the adjustment the t statistic is scipy's paired one.
    t = ttest_rel(a, b)
    n = len(a)
    raw_se = float(np.std(a - b, ddof=1)) / math.sqrt(n)
    assert d.difference / raw_se == pytest.approx(float(t.statistic))
    # The adjusted centre shrinks toward 0 by n / (n + 2).
    assert d.centre == pytest.approx(d.difference * n / (n + 2))
    assert -1 <= d.low <= d.difference <= d.high <= 1 or d.low <= d.centre <= d.high
    # The tests and the interval agree: non-inferiority at 2.5% iff the interval clears -margin.
    for margin in (0.0, 0.02, 0.05, 0.1):
        assert (noninferiority_p(d, margin) < 0.025) is (d.low > -margin)
        assert (inferiority_p(d, margin) < 0.025) is (d.high < -margin)
    # One trial per case: the paired comparison agrees with McNemar's test on discordant pairs.
    x = (rng.random(300) < 0.8).astype(float)
    y = np.where(rng.random(300) < 0.1, 1 - x, x)
    one = paired_difference(x.tolist(), y.tolist())
    assert one is not None
    table = [
        [int(((x == 1) & (y == 1)).sum()), int(((x == 1) & (y == 0)).sum())],
        [int(((x == 0) & (y == 1)).sum()), int(((x == 0) & (y == 0)).sum())],
    ]
    mc = mcnemar(table, exact=False, correction=False)
    two_sided = 2 * min(noninferiority_p(one, 0.0), inferiority_p(one, 0.0))
    assert two_sided == pytest.approx(float(mc.pvalue), abs=0.03)
    assert minimum_detectable_effect(one) == pytest.approx((1.959964 + 0.841621) * one.se, 1e-5)


def test_gate_md_worked_example() -> None:
    """docs/gate.md's worked example: 200 cases, the run loses 6 and wins 2."""
    run, base = pair(200, 6, 2)
    gate = GateConfig(min_pass_rate=0.5, max_regression=0.03)
    report = evaluate_gate(inputs(run, base), gate, ThresholdsConfig())
    cmp = report.comparison
    assert cmp is not None
    d = cmp.overall
    docs = DOCS.read_text(encoding="utf-8")
    for figure in (
        f"d̄ = {d.difference:+.3f}",
        f"d̃ = {d.centre:+.4f}",
        f"SE = {d.se:.4f}",
        f"[{d.low:+.3f}, {d.high:+.3f}]",
        f"p = {cmp.p_noninferior:.3f}",
        f"MDE = {cmp.mde:.3f}",
        f"about {cmp.cases_needed} cases",
        f"decision: {report.decision}",
    ):
        assert figure in docs, figure
    assert cases_needed(d, 0.03) == cmp.cases_needed
