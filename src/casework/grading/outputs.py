"""The JSON outputs of `casework judge labeller-check|certify`, as documented models."""

from __future__ import annotations

from typing import Literal

from casework.schema.output import CommandOutput, OutputPart

__all__ = [
    "CalibrationDisagreement",
    "CertificationOutput",
    "Excluded",
    "Interval",
    "JudgeCertify",
    "JudgeLabellerCheck",
    "Rate",
    "Thresholds",
]


class CalibrationDisagreement(OutputPart):
    """A calibration case where the judge and people differ."""

    case_id: str
    """The case."""
    human: str
    """The people's outcome."""
    judge: str
    """The judge's outcome."""
    reason: str
    """The judge's reason (empty when it gave none)."""


class JudgeLabellerCheck(CommandOutput):
    """`casework judge labeller-check`: the judge measured as a labeller on one slice."""

    output: Literal["judge-labeller-check"] = "judge-labeller-check"
    """Which output this is."""
    slice: str
    """The slice."""
    judge_model: str
    """The judge's model."""
    n: int
    """Cases compared."""
    kappa: float | None
    """Cohen's kappa of the judge's outcomes against the people's (null when undefined)."""
    accuracy: float
    """Share of cases where the judge gave the people's outcome."""
    threshold: float
    """The kappa the judge must reach."""
    admissible: bool
    """Whether kappa reached the threshold."""
    categories: list[str]
    """Outcome categories, in the order of `confusion`'s rows and columns."""
    confusion: list[list[int]]
    """Rows: human outcome; columns: judge outcome."""
    disagreements: list[CalibrationDisagreement]
    """Cases where they differ."""
    failed: list[str]
    """Case ids the judge gave no usable answer for (left out of the statistics)."""


class Rate(OutputPart):
    """A rate with its confidence interval."""

    estimate: float | None
    """The observed share (null with no items)."""
    low: float | None
    """The interval's lower bound."""
    high: float | None
    """The interval's upper bound."""
    n: int
    """Items it is measured on."""


class Interval(OutputPart):
    """A statistic with its confidence interval."""

    estimate: float | None
    """The statistic (null when undefined)."""
    low: float | None
    """The interval's lower bound."""
    high: float | None
    """The interval's upper bound."""


class CertificationOutput(OutputPart):
    """The judge's verdicts on one slice and check kind measured against people's verdicts."""

    slice: str
    """The slice."""
    kind: str
    """The check kind judged (`answer_fact`, `rubric` …)."""
    judge_model: str
    """The judge model the verdicts were given under."""
    prompt_version: str
    """The judge prompt version they were given under."""
    rubric_digest: str | None
    """Digest of the rubric they were given under, if any."""
    current: bool
    """Pinned to the judge as configured now (else stale)."""
    tp: int
    """Human pass, judge pass."""
    fn: int
    """Human pass, judge fail."""
    tn: int
    """Human fail, judge fail."""
    fp: int
    """Human fail, judge pass."""
    n_pass: int
    """Items people passed (`tp + fn`)."""
    n_fail: int
    """Items people failed (`tn + fp`)."""
    tpr: Rate
    """True-positive rate with its interval."""
    tnr: Rate
    """True-negative rate with its interval."""
    kappa: Interval
    """Cohen's kappa of judge against people, with its asymptotic interval."""
    admissible: bool
    """Both lower bounds reach their thresholds."""
    more_needed: dict[str, int | None]
    """Further human verdicts of each class (`pass`, `fail`) the lower bounds need (0: enough;
    null: more verdicts at the current agreement never suffice)."""


class Thresholds(OutputPart):
    """The lower bounds a certification must reach."""

    tpr: float
    """True-positive rate."""
    tnr: float
    """True-negative rate."""


class Excluded(OutputPart):
    """Items left out of every certification."""

    contested: int
    """Items whose two people disagree (adjudicate them first)."""
    unpinned: int
    """Items from runs that recorded no prompt version (never certify a judge)."""


class JudgeCertify(CommandOutput):
    """`casework judge certify`: the judge's verdicts measured against people's, per pin."""

    output: Literal["judge-certify"] = "judge-certify"
    """Which output this is."""
    method: str
    """The interval method."""
    confidence: float
    """The intervals' confidence level."""
    thresholds: Thresholds
    """The lower bounds to reach."""
    judge: dict[str, str | None]
    """The judge as configured now: `model` and `prompt_version`."""
    excluded: Excluded
    """Items left out."""
    certifications: list[CertificationOutput]
    """One certification per pin found, current ones first."""
