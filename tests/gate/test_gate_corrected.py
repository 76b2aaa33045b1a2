"""The gate decides the pass-rate floor on pass@1 corrected for the judge's measured error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from casework.cli import cli
from casework.dataset import load_dataset, release
from casework.gate import GateInputs, evaluate_gate, gate_run
from casework.grading import CheckResult
from casework.grading.verdict import combine
from casework.project import GateConfig, Project, ThresholdsConfig, load_project
from casework.runner import RunHeader, RunRequest, TrialRecord, run_agent
from casework.runner.analysis import trial_decisions
from casework.runner.records import CheckCertification, JudgeInfo, tallies
from tests.runner.builders import make_project
from tests.runner.judged import FAIR, LENIENT, judged, programmatic, standard_trials

GOOD_AGENT = "python:tests.runner.sample_agents:good"


def _inputs(certification: dict[str, dict[str, CheckCertification]], **kw: object) -> GateInputs:
    trials = standard_trials()
    base: dict[str, object] = {
        "run_id": "judged",
        "dataset_ref": "refunds@2",
        "finished": True,
        "slices": ["refunds"],
        "slice_kappa": {"refunds": 0.8},
        "run": tallies(trials, admissible_only=True),
        "dataset_version": 2,
        "latest_version": 2,
        "decisions": trial_decisions(trials, admissible_only=True),
        "certification": certification,
    }
    base.update(kw)
    return GateInputs(**base)  # type: ignore[arg-type]


def test_corrected_below_the_floor_fails_while_raw_is_above() -> None:
    report = evaluate_gate(
        _inputs({"refunds": {"answer_fact": LENIENT}}),
        GateConfig(min_pass_rate=0.74),
        ThresholdsConfig(),
    )
    assert report.pass_rate == pytest.approx(0.75)  # raw: above the floor
    assert report.corrected is not None
    assert round(report.corrected.rate.corrected or 0, 3) == 0.715
    assert not report.passed
    [reason] = report.failures
    assert reason.code == "pass_rate"
    low, high = report.corrected.rate.low, report.corrected.rate.high
    assert reason.message == (
        f"corrected pass@1 0.715 [{low:.3f}, {high:.3f}] (raw 0.750) is below the minimum 0.74 "
        "(corrected for the judge's measured error)"
    )


def test_corrected_above_the_floor_passes_while_raw_is_below() -> None:
    # a strict judge (Sp 0.80 > 1 - Se): its 0.75 is really 0.786, pass@1 0.771
    report = evaluate_gate(
        _inputs({"refunds": {"answer_fact": FAIR}}),
        GateConfig(min_pass_rate=0.76),
        ThresholdsConfig(),
    )
    assert report.passed, report.lines()
    assert report.corrected is not None
    assert report.corrected.rate.corrected == pytest.approx((6 + 12 * 0.55 / 0.7) / 20)


def test_without_certification_judged_verdicts_fail_closed() -> None:
    report = evaluate_gate(_inputs({}), GateConfig(min_pass_rate=0.74), ThresholdsConfig())
    assert not report.passed
    assert [r.code for r in report.failures] == ["judge_not_corrected"]
    assert report.failures[0].message == (
        "pass@1 0.750 (raw; judge not certified for refunds/answer_fact): the judge's measured "
        "error is not recorded on the run, so its verdicts cannot be corrected"
    )
    assert str(report.failures[0]).endswith(
        "cannot be corrected. Next: `casework judge certify` then run again."
    )
    below = evaluate_gate(_inputs({}), GateConfig(min_pass_rate=0.8), ThresholdsConfig())
    assert [r.code for r in below.failures] == ["judge_not_corrected", "pass_rate"]


def test_inadmissible_verdicts_still_fail_closed() -> None:
    report = evaluate_gate(
        _inputs({"refunds": {"answer_fact": FAIR}}, inadmissible={"refunds": 2}),
        GateConfig(min_pass_rate=0.5),
        ThresholdsConfig(),
    )
    assert [r.code for r in report.failures] == ["judge_inadmissible"]


def test_smoke_and_non_gating_slices_stay_out_of_the_corrected_figure() -> None:
    trials = [
        *standard_trials(),
        *(judged(f"s{i}", 0, False, split="smoke") for i in range(4)),
        *(judged(f"o{i}", 0, False, slice_="other") for i in range(4)),
    ]
    inputs = _inputs(
        {"refunds": {"answer_fact": LENIENT}},
        slices=["refunds", "other"],
        run=tallies(trials, admissible_only=True),
        decisions=trial_decisions(trials, admissible_only=True),
    )
    report = evaluate_gate(
        inputs, GateConfig(min_pass_rate=0.5, gating_slices=["refunds"]), ThresholdsConfig()
    )
    assert report.corrected is not None
    assert (report.corrected.rate.n, report.corrected.rate.judged) == (20, 12)
    assert round(report.corrected.rate.corrected or 0, 3) == 0.715
    assert report.passed  # "other" is not certified, but it does not gate


# --- on a real project, through gate_run and the CLI --------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = make_project(tmp_path / "p", config="[gate]\nmin_pass_rate = 0.78\n")
    monkeypatch.chdir(root)
    project = load_project(root)
    ds = load_dataset(project, "refunds")
    release(project, "refunds", ds.cases, "first", labels=ds.labels)
    return project


def _judged_log(project: Project, certification: dict[str, dict[str, CheckCertification]]) -> str:
    """A real run of the good agent, its verdicts then resting on an answer-facts judge that
    fails 2 of the 10 trials (raw pass@1 0.8), with certification counts in the header."""
    run_agent(
        project,
        RunRequest(dataset="refunds", agent=GOOD_AGENT, k=2, use_judge=False, run_id="plain"),
    )
    lines = (project.root / "runs" / "plain.jsonl").read_text(encoding="utf-8").splitlines()
    out = []
    for number, line in enumerate(lines):
        obj = json.loads(line)
        if obj["kind"] == "run":
            header = RunHeader.model_validate(obj)
            judge = JudgeInfo(model="judge-1", prompt_version="p1", certification=certification)
            line = header.model_copy(update={"judge": judge}).model_dump_json()
        elif obj["kind"] == "trial":
            t = TrialRecord.model_validate(obj)
            fact = CheckResult(
                name="answer_facts",
                status="fail" if number in (1, 2) else "pass",
                evidence="judge",
                judged=True,
            )
            kept = [c for c in t.verdict.checks if c.name != "answer_facts"]
            verdict = combine([*kept, fact])
            line = t.model_copy(update={"verdict": verdict}).model_dump_json()
        out.append(line)
    path = project.root / "runs" / "judged.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return str(path)


def test_gate_run_decides_on_the_corrected_figure(project: Project) -> None:
    both = {"refunds": {"answer_fact": LENIENT}, "SECRET-SLICE": {"answer_fact": LENIENT}}
    log = _judged_log(project, both)
    report = gate_run(project, log)
    assert report.pass_rate == pytest.approx(0.8)
    assert report.corrected is not None
    assert report.corrected.rate.corrected == pytest.approx((0.8 + 0.7 - 1) / 0.65)
    assert [r.code for r in report.failures] == ["pass_rate"]
    assert report.failures[0].message.startswith("corrected pass@1 0.769 [")

    runner = CliRunner()
    result = runner.invoke(
        cli, ["--project", str(project.root), "gate", "--run", log, "--format", "json"]
    )
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["pass_rate"] == pytest.approx(0.8)
    fixed = data["corrected_pass_rate"]
    assert fixed["raw"] == pytest.approx(0.8)
    assert fixed["corrected"] == pytest.approx(0.5 / 0.65)
    assert fixed["interval"][0] < fixed["corrected"] < fixed["interval"][1]
    assert (fixed["trials"], fixed["judged"], fixed["method"]) == (
        10,
        10,
        "cluster bootstrap over cases, 2000 resamples, seed 0",
    )
    text = runner.invoke(cli, ["--project", str(project.root), "gate", "--run", log])
    assert "pass@1 0.800 on 5 gating cases; corrected pass@1 0.769 [" in text.stdout
    assert "corrected pass@1 0.769" in text.stderr


def test_gate_run_without_a_certified_slice_fails_closed(project: Project) -> None:
    log = _judged_log(project, {"refunds": {"answer_fact": LENIENT}})
    report = gate_run(project, log)
    assert not report.passed
    assert report.corrected is not None and report.corrected.rate.corrected is None
    assert report.corrected.uncertified == ("SECRET-SLICE/answer_fact",)
    assert "judge_not_corrected" in {r.code for r in report.failures}


def test_gate_json_of_a_run_without_judged_verdicts_has_no_corrected_key(project: Project) -> None:
    run_agent(
        project,
        RunRequest(dataset="refunds", agent=GOOD_AGENT, k=1, use_judge=False, run_id="plain"),
    )
    result = CliRunner().invoke(
        cli, ["--project", str(project.root), "gate", "--run", "plain", "--format", "json"]
    )
    data = json.loads(result.stdout)
    assert "corrected_pass_rate" not in data
    assert gate_run(project, "plain").corrected is None
    # The refusal's answer fact needs a judge: its trial is undetermined, which fails the gate.
    assert result.exit_code == 1
    assert [f["code"] for f in data["failures"]] == ["undetermined"]


def test_the_worked_example_of_docs_judge_md() -> None:
    """docs/judge.md's example: the gate's message there is what the gate says."""
    trials = []
    for i in range(40):  # 80 programmatic trials, 60 passing
        trials += [programmatic(f"p{i}", n, i < 20 or n == 0) for n in range(2)]
    for i in range(60):  # 120 judged trials, 78 passing
        trials += [judged(f"j{i}", n, i < 18 or n == 0) for n in range(2)]
    assert sum(t.passed is True for t in trials) == 138
    cert = CheckCertification(tp=190, fn=10, tn=176, fp=24, admissible=True)
    report = evaluate_gate(
        _inputs(
            {"refunds": {"answer_fact": cert}},
            run=tallies(trials),
            decisions=trial_decisions(trials),
        ),
        GateConfig(min_pass_rate=0.69),
        ThresholdsConfig(),
    )
    assert report.pass_rate == pytest.approx(0.69)
    [reason] = report.failures
    docs = (Path(__file__).parents[2] / "docs" / "judge.md").read_text(encoding="utf-8")
    assert f"    FAIL {reason}\n" in docs
    assert str(reason) == (
        "[pass_rate] corrected pass@1 0.683 [0.627, 0.738] (raw 0.690) is below the minimum "
        "0.69 (corrected for the judge's measured error)"
    )
