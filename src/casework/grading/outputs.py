"""The JSON outputs of `casework judge labeller-check|certify`, as documented models."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from casework.schema.output import CommandOutput, OutputPart

__all__ = [
    "CalibrationDisagreement",
    "CertificationOutput",
    "Excluded",
    "FlipRateOutput",
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


class FlipRateOutput(OutputPart):
    """How often the judge's repeated verdicts on one slice and check kind disagree."""

    items: int
    """Reviewed items asked again."""
    flipped: int
    """Items whose repeated verdicts are not all the same (or lack one)."""
    samples: int
    """Verdicts asked per item."""
    rate: float
    """`flipped / items`."""


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
    """Cohen's kappa of judge against people, with its interval."""
    kappa_interval: str | None = None
    """How kappa's interval was made: asymptotic over items, or `clustered by case (N cases)`
    when people reviewed several trials of one case."""
    admissible: bool
    """Both lower bounds reach their thresholds."""
    more_needed: dict[str, int | None]
    """Further human verdicts of each class (`pass`, `fail`) the lower bounds need (0: enough;
    null: more verdicts at the current agreement never suffice)."""
    interval: str | None = None
    """How the TPR and TNR intervals were made (clustered by reviewed case)."""
    reviewed_cases: int | None = None
    """Reviewed cases the items come from (the unit of the intervals)."""
    case_counts: list[list[int]] = Field(default_factory=list)
    """`[tp, fn, tn, fp]` per reviewed case."""
    flip: FlipRateOutput | None = None
    """The flip rate of repeated verdicts (`--samples N`, N ≥ 2; null when not measured)."""
    flips_too_often: bool = False
    """The flip rate exceeds `[thresholds] judge_max_flip`, which makes the judge inadmissible."""


class Thresholds(OutputPart):
    """The lower bounds a certification must reach."""

    tpr: float
    """True-positive rate."""
    tnr: float
    """True-negative rate."""
    max_flip: float | None = None
    """Largest flip rate of repeated verdicts (`[thresholds] judge_max_flip`)."""


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
    samples: int = 1
    """Verdicts asked per reviewed item for the flip rate (1: not measured)."""
    excluded: Excluded
    """Items left out."""
    certifications: list[CertificationOutput]
    """One certification per pin found, current ones first."""
