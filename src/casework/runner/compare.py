"""Paired comparison of two runs on the same cases: discrimination, inverted cases, a paired test.

Pure functions over per-case tallies. Entry points: :func:`compare_tallies`, :func:`sign_test`,
:func:`retirement`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from casework.runner.metrics import CaseTally, bootstrap_ci

__all__ = [
    "CaseDelta",
    "Comparison",
    "Retirement",
    "compare_tallies",
    "mcnemar_statistic",
    "retirement",
    "sign_test",
]


@dataclass(frozen=True)
class CaseDelta:
    """One case's pass rates under both systems."""

    case_id: str
    better: float
    worse: float
    slice: str = ""

    @property
    def delta(self) -> float:
        """Better's pass rate minus worse's."""
        return self.better - self.worse


@dataclass(frozen=True)
class Comparison:
    """Paired comparison of a known-better and a known-worse system.

    Attributes:
        cases: Cases graded in both runs.
        discriminating: Cases where the better system's pass rate is higher.
        inverted: Cases where the worse system's pass rate is higher.
        tied: Cases with equal pass rates (they separate nothing).
        mean_delta: Mean per-case difference in pass rate (better − worse).
        ci_delta: Bootstrap 95% CI of ``mean_delta`` over cases.
        p_value: Two-sided exact sign test on the per-case differences (ties dropped).
        only_better: Case ids graded only in the better run.
        only_worse: Case ids graded only in the worse run.
    """

    cases: int
    discriminating: list[CaseDelta]
    inverted: list[CaseDelta]
    tied: list[CaseDelta]
    mean_delta: float
    ci_delta: tuple[float, float] | None
    p_value: float
    only_better: list[str]
    only_worse: list[str]

    @property
    def discrimination_rate(self) -> float:
        """Share of cases that separate the better from the worse system."""
        return len(self.discriminating) / self.cases if self.cases else 0.0

    @property
    def inversion_rate(self) -> float:
        """Share of cases that rank the systems the wrong way round."""
        return len(self.inverted) / self.cases if self.cases else 0.0


def sign_test(positive: int, negative: int) -> float:
    """Two-sided exact sign test p-value for ``positive`` vs ``negative`` paired differences.

    With one trial per case this is exactly McNemar's exact test on the discordant pairs
    (McNemar 1947; Agresti, *Categorical Data Analysis*, 2nd ed. 2002, §10.1). Agresti's
    Table 10.1 (presidential approval, discordant counts 150 and 86) gives a McNemar statistic
    of 17.36 (:func:`mcnemar_statistic`); the exact p-value is far below 0.001.
    """
    from scipy.stats import binomtest  # scipy.stats takes ~0.3 s to import: only when used

    total = positive + negative
    if total == 0:
        return 1.0
    return float(binomtest(positive, total, 0.5, alternative="two-sided").pvalue)


def mcnemar_statistic(b: int, c: int) -> float:
    """McNemar's chi-squared statistic ``(b − c)² / (b + c)`` (no continuity correction).

    >>> round(mcnemar_statistic(150, 86), 2)  # Agresti (2002), Table 10.1
    17.36
    """
    return (b - c) ** 2 / (b + c) if b + c else 0.0


def compare_tallies(
    better: Mapping[str, CaseTally], worse: Mapping[str, CaseTally], *, seed: int = 0
) -> Comparison:
    """Pair two runs case by case (cases with graded trials in both)."""
    shared = sorted(cid for cid in better.keys() & worse.keys() if better[cid].n and worse[cid].n)
    deltas = [
        CaseDelta(cid, better[cid].rate, worse[cid].rate, better[cid].slice) for cid in shared
    ]
    disc = [d for d in deltas if d.delta > 0]
    inv = [d for d in deltas if d.delta < 0]
    tied = [d for d in deltas if d.delta == 0]
    mean = sum(d.delta for d in deltas) / len(deltas) if deltas else 0.0
    return Comparison(
        cases=len(deltas),
        discriminating=disc,
        inverted=inv,
        tied=tied,
        mean_delta=mean,
        ci_delta=bootstrap_ci([d.delta for d in deltas], seed=seed),
        p_value=sign_test(len(disc), len(inv)),
        only_better=sorted(cid for cid in better if cid not in worse),
        only_worse=sorted(cid for cid in worse if cid not in better),
    )


@dataclass(frozen=True)
class Retirement:
    """Which cases separate nothing across the compared systems.

    Attributes:
        all_pass: Cases every system passed in every trial.
        all_fail: Cases every system failed in every trial (possible label errors).
        compared: Cases graded under every system.
    """

    all_pass: list[str]
    all_fail: list[str]
    compared: int

    @property
    def retire(self) -> list[str]:
        """Cases to move to the smoke split."""
        return sorted(self.all_pass + self.all_fail)


def retirement(runs: Sequence[Mapping[str, CaseTally]]) -> Retirement:
    """Cases that every run passes (or every run fails) in every trial.

    Raises:
        ValueError: Fewer than two runs (one system separates nothing by definition).
    """
    if len(runs) < 2:
        raise ValueError("retirement needs at least two runs of different systems")
    shared = set(runs[0])
    for run in runs[1:]:
        shared &= set(run)
    shared = {cid for cid in shared if all(run[cid].n for run in runs)}
    all_pass = sorted(cid for cid in shared if all(run[cid].c == run[cid].n for run in runs))
    all_fail = sorted(cid for cid in shared if all(run[cid].c == 0 for run in runs))
    return Retirement(all_pass, all_fail, len(shared))
