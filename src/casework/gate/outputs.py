"""The JSON output of `casework gate`: the release decision, as a documented model."""

from __future__ import annotations

from typing import ClassVar, Literal

from casework.runner.outputs import CorrectedDifferenceOutput, CorrectedPassOutput
from casework.schema.output import CommandOutput, OutputPart

__all__ = ["GateComparison", "GateDecision", "GateReason", "SliceDifference"]


class GateReason(OutputPart):
    """One named rule that failed or warned."""

    code: str
    """The rule's stable code."""
    message: str
    """What the rule found."""
    slice: str | None
    """The slice concerned, if one is."""


class SliceDifference(OutputPart):
    """One gating slice against the baseline, paired by case."""

    slice: str
    """The slice."""
    cases: int
    """Shared cases of the slice."""
    difference: float | None
    """The run's per-case value minus the baseline's (null: no shared case)."""
    interval: list[float] | None
    """Its 95% interval, as [low, high]."""
    p_inferior: float
    """One-sided p-value that the slice regressed by more than the margin."""
    p_holm: float
    """``p_inferior`` adjusted with Holm across the gating slices."""
    regressed: bool
    """Whether the slice shows a regression beyond the margin (Holm-adjusted)."""


class GateComparison(OutputPart):
    """The run against the baseline over the shared gating cases, paired by case."""

    omit_when_none: ClassVar[frozenset[str]] = frozenset({"corrected"})

    decision: Literal["ship", "block", "inconclusive"]
    """What the comparison supports on its own."""
    rule: str
    """The per-case value compared (`pass@1`, or `cases passing K of N trials`)."""
    cases: int
    """Shared gating cases."""
    run_rate: float
    """The run's mean per-case value on them."""
    baseline_rate: float
    """The baseline's."""
    difference: float
    """``run_rate - baseline_rate``."""
    interval: list[float]
    """The difference's 95% interval, as [low, high]."""
    method: str
    """How the interval was made."""
    margin: float
    """The non-inferiority margin (`[gate] max_regression`)."""
    p_noninferior: float
    """One-sided p-value of non-inferiority (small: no worse than the margin)."""
    p_inferior: float
    """One-sided p-value of inferiority (small: worse than the margin)."""
    minimum_detectable_effect: float | None
    """Smallest true difference detected with 80% power (null: one case)."""
    cases_needed: int | None
    """Cases in all that would decide an inconclusive comparison (null: decided, or none would)."""
    slices: list[SliceDifference]
    """Each gating slice, Holm-corrected across them."""
    corrected: CorrectedDifferenceOutput | None = None
    """pass@1 of the run minus the baseline's corrected for the judge's measured error, which
    decides when present (only when a judge decided shared gating verdicts of either run)."""


class GateDecision(CommandOutput):
    """`casework gate`: whether the release passes, and every reason it does not."""

    omit_when_none: ClassVar[frozenset[str]] = frozenset({"corrected_pass_rate", "comparison"})

    output: Literal["gate-decision"] = "gate-decision"
    """Which output this is."""
    passed: bool
    """Whether the gate passed (the command exits 1 when not)."""
    decision: Literal["ship", "block", "inconclusive"] = "ship"
    """`ship`, `block` (a failure) or `inconclusive` (not enough evidence either way)."""
    inconclusive: Literal["fail", "pass"] = "fail"
    """What an inconclusive result does (`[gate] inconclusive`; default: fails closed)."""
    comparison: GateComparison | None = None
    """The run against `--baseline`, paired by case (only with a baseline sharing cases)."""
    pass_rate: float | None
    """pass@1 over the gating cases."""
    corrected_pass_rate: CorrectedPassOutput | None = None
    """pass@1 corrected for the judge's error (only when a judge decided gating verdicts)."""
    baseline_pass_rate: float | None
    """pass@1 of the baseline run, if one was given."""
    cases: int
    """Gating cases."""
    gating_slices: list[str]
    """Slices the gate decides on."""
    failures: list[GateReason]
    """Rules that failed."""
    warnings: list[GateReason]
    """Rules that warned."""
