"""Hand-built run logs whose verdicts rest on judged checks, with certifications in the header."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from casework.grading import CheckResult
from casework.grading.verdict import combine
from casework.runner import RunEnd, RunHeader, TrialRecord
from casework.runner.records import CheckCertification, JudgeInfo, LoadedRun
from casework.schema import Trajectory

T0 = datetime(2026, 1, 1, tzinfo=UTC)

#: Se 0.95, Sp 0.70: a lenient judge (it passes 30% of the replies people fail).
LENIENT = CheckCertification(tp=95, fn=5, tn=70, fp=30, admissible=True)
#: Se 0.90, Sp 0.80.
FAIR = CheckCertification(tp=90, fn=10, tn=80, fp=20, admissible=True)


def check(name: str, passed: bool | None, *, judged: bool = False) -> CheckResult:
    status = "undetermined" if passed is None else ("pass" if passed else "fail")
    return CheckResult(name=name, status=status, evidence="e", judged=judged)


def trial(
    case_id: str,
    number: int,
    checks: list[CheckResult],
    *,
    slice_: str = "refunds",
    split: str = "dev",
    source: str = "hand",
) -> TrialRecord:
    return TrialRecord(
        run_id="judged",
        case_id=case_id,
        trial=number,
        slice=slice_,
        split=split,
        source=source,
        seed=number,
        started_at=T0,
        duration_s=0.1,
        verdict=combine(checks),
        trajectory=Trajectory(final_reply="ok"),
    )


def programmatic(case_id: str, number: int, passed: bool, **kw: str) -> TrialRecord:
    """A trial decided by the state check alone."""
    return trial(case_id, number, [check("state", passed)], **kw)


def judged(
    case_id: str, number: int, passed: bool, name: str = "answer_facts", **kw: str
) -> TrialRecord:
    """A trial whose programmatic checks passed and whose judged check decides."""
    return trial(case_id, number, [check("state", True), check(name, passed, judged=True)], **kw)


def loaded(
    trials: list[TrialRecord],
    certification: dict[str, dict[str, CheckCertification]] | None = None,
    *,
    k: int = 2,
    judge: bool = True,
) -> LoadedRun:
    header = RunHeader(
        run_id="judged",
        dataset="refunds",
        dataset_ref="refunds@1",
        dataset_hash="h" * 64,
        agent_spec="python:a:b",
        k=k,
        seed=0,
        concurrency=1,
        case_ids=sorted({t.case_id for t in trials}),
        judge=JudgeInfo(model="judge-1", certification=certification or {}) if judge else None,
        timeout_s=60.0,
        started_at=T0,
        casework_version="0.1.0",
    )
    passed = sum(t.passed is True for t in trials)
    failed = sum(t.passed is False for t in trials)
    end = RunEnd(
        run_id="judged",
        finished_at=T0,
        trials=len(trials),
        passed=passed,
        failed=failed,
        undetermined=len(trials) - passed - failed,
        errors=0,
        cost_usd=0.0,
        wall_s=1.0,
    )
    return LoadedRun(header, trials, end, source="judged.jsonl")


def standard_trials() -> list[TrialRecord]:
    """10 cases x 2 trials on `refunds`: 4 cases decided programmatically (6 of 8 trials pass),
    6 cases decided by the answer-facts judge (9 of 12 pass). Raw pass@1 is 15 / 20 = 0.75."""
    out = []
    prog = [(True, True), (True, False), (True, True), (False, True)]
    for i, pair in enumerate(prog):
        out += [programmatic(f"p{i}", n, v) for n, v in enumerate(pair)]
    jud = [(True, True), (True, False), (True, True), (False, True), (True, True), (True, False)]
    for i, pair in enumerate(jud):
        out += [judged(f"j{i}", n, v) for n, v in enumerate(pair)]
    return out


def write_log(run: LoadedRun, path: Path) -> str:
    """The run as a run log file; returns its path as a string (a run reference)."""
    lines = [run.header.model_dump_json(), *(t.model_dump_json() for t in run.trials)]
    if run.end is not None:
        lines.append(run.end.model_dump_json())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)
