"""The run log ``runs/<run-id>.jsonl``: a header, one record per trial, an end record.

Records are versioned pydantic models (they are the file format). The log is append-only and
written as trials finish, so an interrupted run keeps every finished trial and can resume.
Entry points: :class:`RunHeader`, :class:`TrialRecord`, :class:`RunEnd`, :func:`read_log`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
)

from casework.dataset.jsonl import problems_from_validation
from casework.decoding import BadJSON, parse_json
from casework.errors import InputError, InputErrors
from casework.grading import Verdict
from casework.names import Name
from casework.runner.metrics import CaseTally
from casework.runner.user_sim import UserSimRecord
from casework.schema import Trajectory

__all__ = [
    "CheckCertification",
    "JudgeInfo",
    "LoadedRun",
    "RunEnd",
    "RunHeader",
    "SliceCalibration",
    "TrialRecord",
    "read_log",
    "tallies",
]


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class SliceCalibration(_Record):
    """The judge's labeller check on one slice, as recorded on a run (`judge labeller-check`)."""

    kappa: float | None
    """Cohen's kappa of the judge's labels against human labels."""
    accuracy: float
    """Share of calibration cases where the judge agreed."""
    n: int
    """Calibration cases."""
    admissible: bool
    """Whether the judge's verdicts of every check kind may gate on this slice (certification)."""


class CheckCertification(_Record):
    """The judge's certification for one check kind on one slice, as recorded on a run.

    Counts compare the judge's verdicts on replies with people's verdicts on the same replies;
    positive means the check passes. The true-positive rate is ``tp / (tp + fn)`` and the
    true-negative rate ``tn / (tn + fp)``.
    """

    tp: int = Field(ge=0)
    """Replies people passed and the judge passed."""
    fn: int = Field(ge=0)
    """Replies people passed and the judge failed."""
    tn: int = Field(ge=0)
    """Replies people failed and the judge failed."""
    fp: int = Field(ge=0)
    """Replies people failed and the judge passed."""
    admissible: bool
    """Whether the certification's lower bounds cleared the configured thresholds."""
    certified_at: AwareDatetime | None = None
    """When the certification was made (UTC), if known."""
    cases: list[tuple[int, int, int, int]] = Field(default_factory=list)
    """``(tp, fn, tn, fp)`` per case people reviewed (empty: not recorded); the corrected
    rate's interval resamples these cases."""


class JudgeInfo(_Record):
    """The judge a run used and its calibration."""

    model: str
    """Judge model id."""
    calibration: dict[str, SliceCalibration] = Field(default_factory=dict)
    """Calibration per slice at the time of the run (missing slice: not calibrated)."""
    prompt_version: str | None = None
    """Version of the judge's prompt the certifications are pinned to (None: not recorded)."""
    certification: dict[str, dict[str, CheckCertification]] = Field(default_factory=dict)
    """Certification per slice and check kind (`outcome`, `answer_fact`) at the time of the run.

    A missing slice or kind means the judge is not certified there; the rates it decided are then
    reported raw only.
    """


class GoldenFailure(_Record):
    """A golden action that failed when the run replayed it (skipped, as τ²-bench does)."""

    case_id: str
    """Case whose oracle holds it."""
    index: int
    """Its index in `oracle.golden_actions`."""
    tool: str
    """The tool it calls."""
    error: str
    """What the tool answered."""

    def warning(self) -> str:
        """One line for the run's header and report."""
        return (
            f"case {self.case_id}: golden action {self.index} ({self.tool}) failed on replay and "
            f"was skipped: {self.error}"
        )


class RunHeader(_Record):
    """First line of a run log: what was run, against what."""

    schema_version: Literal[1] = 1
    """Version of this record format."""
    kind: Literal["run"] = "run"
    """Record kind."""
    run_id: Name
    """Id of the run (also the log's file name)."""
    dataset: Name
    """Dataset name."""
    dataset_ref: str
    """`name@N` of the release run, or `name@working` for unreleased content."""
    dataset_hash: str
    """Content hash of the dataset version: a score without it is meaningless."""
    agent_spec: str
    """Adapter spec of the agent (`python:…`, `http:…`, `cmd:…`)."""
    agent_version: str | None = None
    """Version label of the agent (from `--agent-version` or the agent's trajectories)."""
    k: int
    """Trials per case."""
    seed: int
    """Run seed; trial seeds derive from it, the case id and the trial number."""
    concurrency: int
    """Trials in flight at once."""
    slices: list[str] = Field(default_factory=list)
    """Slices selected (empty: all)."""
    splits: list[str] = Field(default_factory=list)
    """Splits selected (empty: all)."""
    case_ids: list[str]
    """Cases of the run, in order."""
    skipped: dict[str, str] = Field(default_factory=dict)
    """Cases left out and why (no label and no assertions)."""
    judge: JudgeInfo | None = None
    """Judge and its calibration, if one was configured."""
    scoring: dict[str, Literal["tau2"]] = Field(default_factory=dict)
    """Cases scored exactly as τ²-bench's default reward does (`tau2`) instead of by every
    casework check; empty in logs written before scoring modes existed."""
    golden_failures: list[GoldenFailure] = Field(default_factory=list)
    """Golden actions that failed on replay: each was recorded and skipped, as τ²-bench does."""
    timeout_s: float
    """Seconds one trial may take."""
    started_at: AwareDatetime
    """When the run started (UTC)."""
    casework_version: str
    """casework version that ran it."""


class TrialRecord(_Record):
    """One trial: the trajectory, the verdict and its evidence."""

    schema_version: Literal[1] = 1
    """Version of this record format."""
    kind: Literal["trial"] = "trial"
    """Record kind."""
    run_id: str
    """Run this trial belongs to."""
    case_id: str
    """Case run."""
    trial: int
    """Trial number, 0-based."""
    slice: str
    """The case's slice."""
    split: str
    """The case's split."""
    source: str
    """The case's source."""
    satisfiable: bool = True
    """Whether the case's task can be completed."""
    frozen: bool = False
    """Whether the case is frozen: reports show it only as a count, never its content."""
    seed: int
    """Seed the agent got."""
    started_at: AwareDatetime
    """When the trial started (UTC)."""
    duration_s: float
    """Wall time of the agent call, in seconds."""
    verdict: Verdict
    """Pass/fail with per-check evidence."""
    trajectory: Trajectory
    """What the agent did."""
    user_sim: UserSimRecord | None = Field(default=None, exclude_if=lambda v: v is None)
    """The simulated user's seed, model, turns and stop reason (cases with a `user_scenario`
    only; left out otherwise)."""

    @property
    def passed(self) -> bool | None:
        """The verdict (None: undetermined)."""
        return self.verdict.passed


class RunEnd(_Record):
    """Last line of a finished run log."""

    schema_version: Literal[1] = 1
    """Version of this record format."""
    kind: Literal["end"] = "end"
    """Record kind."""
    run_id: str
    """Run that finished."""
    finished_at: AwareDatetime
    """When it finished (UTC)."""
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


@dataclass
class LoadedRun:
    """A run read back from its log or the workbench."""

    header: RunHeader
    trials: list[TrialRecord]
    end: RunEnd | None = None
    source: str = ""
    valid_bytes: int | None = None
    """Bytes of the log up to the last whole record (a torn tail after it is cut on resume)."""

    @property
    def finished(self) -> bool:
        """True when the run completed (has an end record)."""
        return self.end is not None

    @property
    def label(self) -> str:
        """How to name the system in comparisons: agent version, else spec."""
        return self.header.agent_version or self.header.agent_spec

    def done(self) -> set[tuple[str, int]]:
        """``(case_id, trial)`` pairs already recorded."""
        return {(t.case_id, t.trial) for t in self.trials}


def tallies(
    trials: Iterable[TrialRecord], *, admissible_only: bool = False
) -> dict[str, CaseTally]:
    """Per-case tallies of a run's trials (undetermined verdicts counted apart).

    Args:
        trials: Trial records.
        admissible_only: Count only verdicts that may gate (others are left out entirely).
    """
    acc: dict[str, list[Any]] = {}
    for t in trials:
        if admissible_only and not t.verdict.admissible:
            continue
        entry = acc.setdefault(t.case_id, [0, 0, 0, t.slice, t.split, t.source])
        if t.verdict.passed is None:
            entry[2] += 1
        else:
            entry[0] += 1
            entry[1] += int(t.verdict.passed)
    return {
        cid: CaseTally(cid, n, c, slice=s, split=sp, source=src, undetermined=u)
        for cid, (n, c, u, s, sp, src) in acc.items()
    }


def read_log(path: Path, shown: str | None = None) -> LoadedRun:
    """Read a run log; a torn last line (a crash mid-write) is ignored.

    Raises:
        InputError: The file is missing, has no header, or has a bad line before the last.
    """
    name = shown or str(path)
    if not path.is_file():
        raise InputError(name, None, None, "run log not found")
    data = path.read_bytes()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    valid = 0
    header: RunHeader | None = None
    trials: dict[tuple[str, int], TrialRecord] = {}
    end: RunEnd | None = None
    for number, raw in enumerate(lines, start=1):
        last = number == len(lines)
        try:
            obj = parse_json(raw)
            kind = obj.get("kind") if isinstance(obj, dict) else None
            if kind == "run":
                header = RunHeader.model_validate(obj)
            elif kind == "trial":
                rec = TrialRecord.model_validate(obj)
                trials[(rec.case_id, rec.trial)] = rec
            elif kind == "end":
                end = RunEnd.model_validate(obj)
            else:
                raise InputError(name, number, "kind", "expected 'run', 'trial' or 'end'", kind)
        except (BadJSON, ValidationError) as exc:
            if last:
                break  # torn write at a crash: the trial simply runs again on resume
            if isinstance(exc, ValidationError):
                raise InputErrors(problems_from_validation(exc, name, number)) from exc
            raise InputError(name, number, None, f"bad run log line: {exc}") from exc
        valid += len(raw) + 1
    if header is None:
        raise InputError(name, 1, None, "run log has no header record")
    if end is not None and end.agent_version and not header.agent_version:
        header = header.model_copy(update={"agent_version": end.agent_version})
    trial_list = sorted(trials.values(), key=lambda t: (t.trial, t.case_id))
    return LoadedRun(header, trial_list, end, source=name, valid_bytes=min(valid, len(data)))
