"""The gate fails closed on undetermined trials of gating cases (an oracle that could not decide)."""

from __future__ import annotations

from pathlib import Path

import pytest

from casework.dataset import load_dataset, release
from casework.gate import evaluate_gate, gate_run
from casework.gate._decision import GateContext, rule_undetermined
from casework.project import GateConfig, ThresholdsConfig, load_project
from casework.runner import RunRequest, load_run, run_agent
from casework.runner.metrics import CaseTally
from tests.gate.test_gate import GOOD, _inputs, judgeless_cases
from tests.runner.builders import make_project, refund_case


def test_undetermined_trials_of_gating_cases_fail_per_slice() -> None:
    run = {
        **GOOD,
        "r": CaseTally("r", 0, 0, slice="refunds", split="dev", undetermined=3),
        "s": CaseTally("s", 2, 2, slice="refunds", split="dev", undetermined=1),
        # Retired and non-gating cases do not gate, undetermined or not.
        "old": CaseTally("old", 0, 0, slice="refunds", split="smoke", undetermined=3),
        "x": CaseTally("x", 0, 0, slice="status", split="dev", undetermined=3),
    }
    report = evaluate_gate(
        _inputs(run=run, slices=["refunds", "status"]),
        GateConfig(gating_slices=["refunds"], min_pass_rate=0.5),
        ThresholdsConfig(),
    )
    assert not report.passed
    assert [str(r) for r in report.failures] == [
        "[undetermined] slice 'refunds': 4 trial(s) of 2 gating case(s) are undetermined (r, s): "
        "their oracle could not decide (a rubric needs a judge). Next: `casework report` to see "
        "the checks' evidence."
    ]
    assert report.failures[0].slice == "refunds"


def test_rule_is_silent_when_every_trial_is_decided() -> None:
    ctx = GateContext.of(_inputs(), GateConfig(min_pass_rate=0.5), ThresholdsConfig())
    assert list(rule_undetermined(ctx)) == []


def _rubric_case() -> dict[str, object]:
    """A refund case whose oracle is a rubric judge (no state assertions to decide it)."""
    data = refund_case("r-9", "o1", 12.0)
    data["oracle"] = {"class": "rubric_judge", "rubric": "The reply says the refund amount."}
    return data


def test_a_rubric_case_run_without_a_judge_fails_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = make_project(
        tmp_path / "p", [*judgeless_cases(), _rubric_case()], "[gate]\nmin_pass_rate = 0.7\n"
    )
    monkeypatch.chdir(root)
    project = load_project(root)
    ds = load_dataset(project, "refunds")
    release(project, "refunds", ds.cases, "first", labels=ds.labels)
    request = RunRequest(
        dataset="refunds",
        agent="python:tests.runner.sample_agents:good",
        k=2,
        use_judge=False,
        run_id="good",
    )
    run_agent(project, request)
    verdicts = {t.case_id: t.verdict for t in load_run(project, "good").trials}
    # Before: the rubric case passed on its tool calls and reported outcome, and the gate passed.
    assert verdicts["r-9"].passed is None and verdicts["r-9"].oracle_class == "rubric_judge"
    report = gate_run(project, "good")
    assert not report.passed
    assert [r.code for r in report.failures] == ["undetermined"]
    assert "2 trial(s) of 1 gating case(s) are undetermined (r-9)" in report.failures[0].message
