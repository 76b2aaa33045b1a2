"""The JSON output of `casework gate`: the release decision, as a documented model."""

from __future__ import annotations

from typing import ClassVar, Literal

from casework.runner.outputs import CorrectedPassOutput
from casework.schema.output import CommandOutput, OutputPart

__all__ = ["GateDecision", "GateReason"]


class GateReason(OutputPart):
    """One named rule that failed or warned."""

    code: str
    """The rule's stable code."""
    message: str
    """What the rule found."""
    slice: str | None
    """The slice concerned, if one is."""


class GateDecision(CommandOutput):
    """`casework gate`: whether the release passes, and every reason it does not."""

    omit_when_none: ClassVar[frozenset[str]] = frozenset({"corrected_pass_rate"})

    output: Literal["gate-decision"] = "gate-decision"
    """Which output this is."""
    passed: bool
    """Whether the gate passed (the command exits 1 when not)."""
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
