"""The statistical part of the gate: a run against its baseline, paired by case, and the floor.

Pure. :func:`compare_with_baseline` decides `ship`, `block` or `inconclusive` from the paired
difference in pass@1 (:mod:`casework.runner.paired`), a non-inferiority test against
``[gate] max_regression`` and Holm's correction across the gating slices; :func:`case_values`
applies ``[gate] case_rule``; :func:`floor_interval` gives the interval the floor is checked on
with ``[gate] floor_on = "lower_bound"``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from casework.project import GateConfig
from casework.runner.corrected_difference import CorrectedDifference
from casework.runner.metrics import CaseTally, bootstrap_ci
from casework.runner.paired import (
    PairedDifference,
    cases_needed,
    inferiority_p,
    minimum_detectable_effect,
    noninferiority_p,
    paired_difference,
)
from casework.shapes._stats import holm

Decision = Literal["ship", "block", "inconclusive"]

#: The interval of pass@1 over cases that ``floor_on = "lower_bound"`` reads.
FLOOR_INTERVAL = "cluster bootstrap over cases, 2000 resamples, seed 0"


def case_value(tally: CaseTally, gate: GateConfig) -> float:
    """A case's value under ``gate.case_rule``: its pass rate, or 1/0 for ``k`` passes of ``n``.

    Under ``k_of_n`` a case with fewer than ``n`` decided trials does not pass (fail closed);
    extra trials beyond ``n`` count too (``c >= k``).
    """
    if gate.case_rule == "k_of_n":
        return float(tally.n >= gate.n and tally.c >= gate.k)
    return tally.rate


def case_values(
    tallies: Mapping[str, CaseTally], ids: Sequence[str], gate: GateConfig
) -> list[float]:
    """:func:`case_value` of each graded case of ``ids`` (in order), skipping ungraded ones."""
    return [case_value(tallies[c], gate) for c in ids if c in tallies and tallies[c].n]


def rule_name(gate: GateConfig) -> str:
    """The case rule as people read it: ``pass@1`` or ``cases passing 2 of 3 trials``."""
    return f"cases passing {gate.k} of {gate.n} trials" if gate.case_rule == "k_of_n" else "pass@1"


def floor_interval(values: Sequence[float]) -> tuple[float, float] | None:
    """The 95% interval of the mean per-case value: a bootstrap over cases (seed 0)."""
    return bootstrap_ci(values)


@dataclass(frozen=True)
class SliceComparison:
    """One gating slice against the baseline.

    Attributes:
        slice: The slice.
        difference: The paired difference over its shared cases (``None``: none shared).
        p_inferior: One-sided p-value that it regressed by more than the margin.
        p_holm: ``p_inferior`` adjusted with Holm across the gating slices.
        regressed: ``p_holm`` is below the one-sided level: the slice shows a regression.
    """

    slice: str
    difference: PairedDifference | None
    p_inferior: float
    p_holm: float
    regressed: bool


@dataclass(frozen=True)
class BaselineComparison:
    """The run against its baseline, paired by case, and the decision it supports.

    Attributes:
        decision: ``ship`` (non-inferiority shown), ``block`` (the difference is below
            ``-margin``, or a slice shows a regression) or ``inconclusive`` (neither).
        margin: The non-inferiority margin (``[gate] max_regression``).
        rule: The per-case value compared (``pass@1`` or the k-of-n rule).
        overall: The paired difference over the shared gating cases.
        p_noninferior: One-sided p-value of non-inferiority (small: the run is no worse than
            ``-margin``).
        p_inferior: One-sided p-value of inferiority (small: it is worse than ``-margin``).
        slices: Each gating slice, with Holm's correction across them.
        mde: Minimum detectable effect at 80% power (``None``: one case).
        cases_needed: Cases in all that would decide an inconclusive comparison if the
            observed difference and spread held (``None``: decided, or no sample decides it).
        corrected: The difference corrected for the judge's measured error, when a judge
            decided shared gating verdicts of either run (``None``: no judge did); when present
            the decision reads it instead of the raw ``overall``.
    """

    decision: Decision
    margin: float
    rule: str
    overall: PairedDifference
    p_noninferior: float
    p_inferior: float
    slices: tuple[SliceComparison, ...]
    mde: float | None
    cases_needed: int | None
    corrected: CorrectedDifference | None = None

    def describe(self) -> str:
        """One sentence: the difference, its interval, the margin and the decision."""
        d = self.overall
        text = (
            f"{self.rule} difference {d.difference:+.3f} [{d.low:+.3f}, {d.high:+.3f}] on "
            f"{d.cases} shared cases (margin -{self.margin:g}; p non-inferior "
            f"{self.p_noninferior:.3g})"
        )
        if self.corrected is not None:
            text += f"; pass@1 {self.corrected.describe()}, which decides"
        text += f": {self.decision}"
        if self.mde is not None:
            text += f"; minimum detectable effect {self.mde:.3f}"
        if self.decision == "inconclusive" and self.cases_needed is not None:
            text += f"; about {self.cases_needed} cases would decide it"
        return text


def compare_with_baseline(
    run: Mapping[str, CaseTally],
    baseline: Mapping[str, CaseTally],
    shared: Sequence[str],
    gating: Sequence[str],
    gate: GateConfig,
    *,
    confidence: float = 0.95,
    corrected: CorrectedDifference | None = None,
) -> BaselineComparison | None:
    """Decide ship / block / inconclusive from the shared gating cases of two runs.

    ``ship`` needs the interval of the difference to lie above ``-margin`` (non-inferiority at
    one-sided level ``(1 - confidence) / 2``) and no slice to show a regression; ``block`` is an
    observed difference below ``-margin`` or a slice whose Holm-adjusted inferiority p-value is
    below the one-sided level; anything else is ``inconclusive``.

    With ``corrected`` (a judge decided shared verdicts: :mod:`casework.runner.corrected_difference`)
    the overall difference and its interval are the corrected ones, and a difference that could
    not be corrected is ``block`` (fail closed). The p-values, the minimum detectable effect,
    the cases needed and the per-slice Holm tests stay on the raw paired differences.

    Returns:
        ``None`` when the runs share no graded gating case.
    """
    margin = gate.max_regression
    a, b = case_values(run, shared, gate), case_values(baseline, shared, gate)
    overall = paired_difference(a, b, confidence=confidence)
    if overall is None:
        return None
    level = (1 - confidence) / 2
    per_slice = []
    for s in gating:
        ids = [c for c in shared if run[c].slice == s]
        per_slice.append(
            (
                s,
                paired_difference(
                    case_values(run, ids, gate),
                    case_values(baseline, ids, gate),
                    confidence=confidence,
                ),
            )
        )
    p_inf = [1.0 if d is None else inferiority_p(d, margin) for _, d in per_slice]
    adjusted = holm(p_inf) if p_inf else []
    slices = tuple(
        SliceComparison(s, d, p, q, q < level)
        for (s, d), p, q in zip(per_slice, p_inf, adjusted, strict=True)
    )
    p_non = noninferiority_p(overall, margin)
    point, low = overall.difference, overall.low
    if corrected is not None:
        point, low = (
            (corrected.corrected, corrected.low)
            if corrected.corrected is not None and corrected.low is not None
            else (-math.inf, -math.inf)  # not correctable: fails closed
        )
    decision: Decision
    if point < -margin or any(s.regressed for s in slices):
        decision = "block"
    elif (low > -margin) if corrected is not None else (p_non < level):
        decision = "ship"
    else:
        decision = "inconclusive"
    needed = cases_needed(overall, margin) if decision == "inconclusive" else None
    return BaselineComparison(
        decision,
        margin,
        rule_name(gate),
        overall,
        p_non,
        inferiority_p(overall, margin),
        slices,
        minimum_detectable_effect(overall),
        needed,
        corrected,
    )
