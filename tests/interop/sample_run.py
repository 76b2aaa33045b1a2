"""A run of four cases and six trials with every kind of verdict, for the verdict export tests."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from casework.grading import CheckResult, Verdict
from casework.runner import RunEnd, RunHeader, TrialRecord
from casework.runner.records import LoadedRun, read_log
from casework.schema import Trajectory

AT = datetime(2026, 11, 30, 12, 0, 0, 250000, tzinfo=UTC)


def make_trial(case_id: str, trial: int, checks: list[CheckResult], **extra: Any) -> TrialRecord:
    failed = any(c.status == "fail" for c in checks)
    open_ = any(c.status == "undetermined" for c in checks)
    passed = False if failed else (None if open_ else True)
    judged = any(c.judged for c in checks)
    return TrialRecord(
        run_id="r-7",
        case_id=case_id,
        trial=trial,
        slice="refunds",
        split="dev",
        source="hand",
        seed=trial,
        started_at=AT,
        duration_s=1.5,
        verdict=Verdict(
            passed=passed,
            checks=checks,
            oracle_class="rubric_judge" if judged else "state_assertion",
        ),
        trajectory=Trajectory(**extra),
    )


def ok(name: str = "required_tools") -> CheckResult:
    return CheckResult(name=name, status="pass", evidence=f"{name} held")


def sample_run() -> LoadedRun:
    trials = [
        make_trial("a", 0, [ok(), ok("outcome")]),
        make_trial("a", 1, [ok(), ok("outcome")]),
        make_trial("b", 0, [ok()]),
        make_trial(
            "b",
            1,
            [
                CheckResult(name="required_tools", status="fail", evidence="issue_refund not called"),
                CheckResult(name="outcome", status="fail", evidence="asked instead", judged=True),
            ],
            metadata={"trace_id": "5B8EFFF798038103D269B633813FC60C", "span_id": "eee19b7ec3c1b174"},
        ),
        make_trial("c", 0, [CheckResult(name="answer_facts", status="undetermined", evidence="no judge")]),
        make_trial("d", 0, [CheckResult(name="state", status="fail", evidence="secret order ORD-1")])
        .model_copy(update={"frozen": True}),
    ]  # fmt: skip
    header = RunHeader(
        run_id="r-7",
        dataset="refunds",
        dataset_ref="refunds@2",
        dataset_hash="a" * 64,
        agent_spec="python:agent:run",
        agent_version="v3",
        k=2,
        seed=0,
        concurrency=1,
        case_ids=["a", "b", "c", "d"],
        timeout_s=5.0,
        started_at=AT,
        casework_version="0.1.0",
    )
    end = RunEnd(
        run_id="r-7", finished_at=AT, trials=6, passed=3, failed=2, undetermined=1, errors=0,
        cost_usd=0.0, wall_s=1.0,
    )  # fmt: skip
    return LoadedRun(header, trials, end)


def write_sample_run(project_dir: Path) -> str:
    run = sample_run()
    lines = [run.header.model_dump_json(), *(t.model_dump_json() for t in run.trials)]
    assert run.end is not None
    lines.append(run.end.model_dump_json())
    (project_dir / "runs").mkdir(exist_ok=True)
    (project_dir / "runs" / "r-7.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert len(read_log(project_dir / "runs" / "r-7.jsonl").trials) == 6
    return "r-7"
