"""The JSON outputs of `casework run` and `casework results …`, as documented models."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar, Literal

from pydantic import AwareDatetime, RootModel

from casework.schema.output import CommandOutput, OutputPart

__all__ = [
    "CorrectedPassOutput",
    "GroupMetricsOutput",
    "RunComparison",
    "RunListRow",
    "RunListing",
    "RunResultsOutput",
    "RunSummary",
    "SimulatorAuditOutput",
    "SimulatorCaseOutput",
    "SimulatorSliceOutput",
    "SliceComparison",
]


class RunSummary(CommandOutput):
    """What `casework run` did: the run's id, its log and the counts of its end record."""

    output: Literal["run-summary"] = "run-summary"
    """Which output this is."""
    kind: Literal["end"] = "end"
    """The run log record these counts come from (its end record), kept for older readers."""
    run_id: str
    """The run's id (`casework results show RUN_ID`)."""
    log: str
    """Path of the run log (`runs/<run-id>.jsonl`)."""
    finished_at: AwareDatetime
    """When the run finished (UTC)."""
    trials: int
    """Trials recorded."""
    passed: int
    """Trials that passed."""
    failed: int
    """Trials that failed."""
    undetermined: int
    """Trials with an undetermined verdict."""
    errors: int
    """Trials where the agent failed (crash, timeout, bad output)."""
    cost_usd: float
    """Summed cost the agent reported."""
    wall_s: float
    """Wall time of the last session of the run (after any resume), in seconds."""
    agent_version: str | None = None
    """Agent version, when the header had none and the trajectories reported one."""


class RunListRow(OutputPart):
    """One run of `casework results list`."""

    run_id: str
    """The run's id."""
    dataset: str
    """Dataset the run was on."""
    agent: str
    """Agent spec (`python:…`, `http:…`, `cmd:…`, `import:…`)."""
    agent_version: str | None
    """Agent version, when known."""
    k: int
    """Trials per case."""
    started_at: datetime
    """When the run started."""
    finished: bool
    """Whether the run has its end record."""
    stored: str
    """`workbench`, or `file PATH` for a run that exists only as a log file."""


class RunListing(RootModel[list[RunListRow]]):
    """`casework results list`: the runs, those in the workbench first (a JSON list)."""


class GroupMetricsOutput(OutputPart):
    """Metrics of one group of cases (`all`, `slice:refunds`, `split:dev` …)."""

    group: str
    """Group name."""
    cases: int
    """Cases with at least one graded trial."""
    trials: int
    """Graded trials."""
    undetermined: int
    """Trials left undecided."""
    pass1: float | None
    """pass@1: mean per-case pass rate."""
    pass_hat: dict[str, float | None]
    """pass^k by k."""
    pass_at: dict[str, float | None]
    """pass@k by k."""
    stability: float | None
    """Share of cases with the same verdict in every trial."""
    ci_pass1: list[float] | None
    """Bootstrap 95% interval of pass@1 over cases, as [low, high]."""


class CorrectedPassOutput(OutputPart):
    """A pass rate corrected for the judge's measured error (Rogan–Gladen or PPI++)."""

    raw: float | None
    """The pass rate as the verdicts say."""
    corrected: float | None
    """The corrected rate (null: not correctable)."""
    interval: list[float | None] | None
    """The corrected rate's 95% interval, as [low, high]."""
    method: str
    """How the interval was made."""
    trials: int
    """Trials behind the rate."""
    judged: int
    """Of them, trials a judge decided."""
    uncertified: list[str]
    """Judge kinds that decided verdicts without a certification."""
    uncorrectable: list[str]
    """Judge kinds whose certification cannot correct the rate."""
    estimator: Literal["rogan-gladen", "ppi++"] = "rogan-gladen"
    """The estimator used: `rogan-gladen` (certification counts) or `ppi++` (people's verdicts
    on the run's own trials; `[judge] estimator`)."""
    reviewed: int = 0
    """Trials with people's verdicts PPI++ used (0 for Rogan–Gladen)."""
    note: str | None = None
    """Why the configured estimator was not used (PPI++ without reviewed trials falls back to
    Rogan–Gladen); null when it was."""


class CorrectedDifferenceOutput(OutputPart):
    """pass@1 of one run minus another's over their shared cases, corrected for the judge."""

    cases: int
    """Shared cases."""
    raw: float
    """The raw difference (the verdicts as they are)."""
    corrected: float | None
    """The corrected difference (null: not correctable, see `problem`)."""
    interval: list[float] | None
    """Its 95% interval, as [low, high] (null: not correctable)."""
    estimator: Literal["rogan-gladen", "ppi++"]
    """The estimator used (`[judge] estimator`)."""
    method: str
    """How the interval was made."""
    reviewed: list[int]
    """Trials with people's verdicts PPI++ used, in each run ([0, 0] for Rogan–Gladen)."""
    note: str | None = None
    """Why the configured estimator was not used; null when it was."""
    problem: str | None = None
    """Why there is no corrected difference; null when there is one."""


class SimulatorSliceOutput(OutputPart):
    """The simulated user's error rate in one slice, pooled over its cases."""

    errors: int
    """Trials with a mechanical finding or a current review blaming the simulated user."""
    trials: int
    """Trials with a simulated user (and reviews of other runs on the same scenario)."""
    rate: float | None
    """``errors / trials``."""
    low: float | None
    """Lower end of the 95% interval, clustered by case (cluster-robust Wilson)."""
    high: float | None
    """Upper end of that interval."""


class SimulatorCaseOutput(OutputPart):
    """The simulated user's record on one (non-frozen) case."""

    trials: int
    """Trials with a simulated user."""
    flagged: int
    """Trials with a finding or a current review blaming the simulated user."""
    reasons: dict[str, int]
    """Each finding or review (``check: message``) and the trials it was seen in."""


class SimulatorAuditOutput(OutputPart):
    """The simulated user audited in one run (docs/review.md, "The simulated user, audited")."""

    threshold: float
    """``[thresholds] simulator_max_error``: a case above it is quarantined from gating."""
    slices: dict[str, SimulatorSliceOutput]
    """Error rate per slice with its case-level interval."""
    quarantined: list[str]
    """Non-frozen cases above the threshold (left out of gating until re-released)."""
    quarantined_frozen: int
    """Frozen cases above the threshold: counted, never named."""
    stale_reviews: int
    """Reviews left out: made on another scenario or simulator."""
    cases: dict[str, SimulatorCaseOutput]
    """Per non-frozen case with a simulated user."""


class RunResultsOutput(CommandOutput):
    """`casework results show`: a run's metrics per slice, split and source."""

    omit_when_none: ClassVar[frozenset[str]] = frozenset({"corrected_pass1", "simulator"})

    output: Literal["run-results"] = "run-results"
    """Which output this is."""
    run_id: str
    """The run's id."""
    dataset: str
    """Dataset reference (`name@version`)."""
    dataset_hash: str
    """Content hash of the dataset version the run was on."""
    agent: str
    """Agent spec."""
    agent_version: str | None
    """Agent version, when known."""
    k: int
    """Trials per case."""
    finished: bool
    """Whether the run has its end record."""
    groups: list[GroupMetricsOutput]
    """Metrics per group, `all` first."""
    flaky: list[str]
    """Cases whose verdict flips across trials."""
    inadmissible: int
    """Trials whose verdict rests on a judge not certified for it."""
    corrected_pass1: dict[str, CorrectedPassOutput] | None = None
    """pass@1 per group corrected for the judge's error (only when a judge decided verdicts)."""
    simulator: SimulatorAuditOutput | None = None
    """The simulated user's error rate per slice and the quarantined cases (only for runs with
    simulated users)."""


class SliceComparison(OutputPart):
    """Two runs compared within one slice."""

    cases: int
    """Shared cases of the slice."""
    discrimination_rate: float | None
    """Share of those cases on which the runs' verdicts differ."""
    inverted: int
    """Cases the worse run passes more often."""


class RunComparison(CommandOutput):
    """`casework results compare`: two runs paired case by case."""

    omit_when_none: ClassVar[frozenset[str]] = frozenset({"corrected_difference"})

    output: Literal["run-comparison"] = "run-comparison"
    """Which output this is."""
    better: str
    """The run expected to be better."""
    worse: str
    """The run expected to be worse."""
    cases: int
    """Shared cases."""
    discrimination_rate: float | None
    """Share of shared cases on which the runs' verdicts differ."""
    inversion_rate: float | None
    """Share of shared cases the worse run passes more often."""
    discriminating: list[str]
    """Cases that tell the runs apart."""
    inverted: list[str]
    """Cases the worse run passes more often."""
    tied: int
    """Cases with equal pass rates."""
    mean_delta: float | None
    """Mean per-case pass-rate difference (better − worse)."""
    ci_delta: list[float] | None
    """95% interval of the mean difference."""
    p_value: float | None
    """Exact sign test p-value."""
    by_slice: dict[str, SliceComparison]
    """The comparison per slice."""
    release: int | None
    """Release number where `discriminates` was recorded, if one was made."""
    corrected_difference: CorrectedDifferenceOutput | None = None
    """pass@1 (better − worse) corrected for the judge's measured error (only when a judge
    decided shared verdicts of either run)."""


class RetireOutput(CommandOutput):
    """`casework dataset retire`: cases that separate no compared system, moved to split smoke."""

    output: Literal["dataset-retire"] = "dataset-retire"
    """Which output this is."""
    compared: int
    """Cases compared."""
    all_pass: list[str]
    """Cases every system passes."""
    all_fail: list[str]
    """Cases every system fails."""
    moved: list[str]
    """Cases moved to split smoke (or that would be, on a dry run)."""
    possible_label_errors: list[str]
    """Cases every system fails: worth a second look at their labels."""
    release: int | None
    """The new release number, if one was made."""
