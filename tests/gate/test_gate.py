from __future__ import annotations

from pathlib import Path

import pytest

from casework.gate import GateFinding, GateInputs, evaluate_gate, gate_run, pass_rate
from casework.project import GateConfig, Project, ThresholdsConfig, load_project
from casework.runner import CaseTally, RunRequest, run_agent
from tests.runner.builders import make_project


def _run(
    rates: dict[str, tuple[int, int]], slice_: str = "refunds", split: str = "dev"
) -> dict[str, CaseTally]:
    return {cid: CaseTally(cid, n, c, slice=slice_, split=split) for cid, (n, c) in rates.items()}


GOOD = _run({"a": (3, 3), "b": (3, 3), "c": (3, 2), "d": (3, 3)})


def _inputs(**kw: object) -> GateInputs:
    base: dict[str, object] = {
        "run_id": "r1",
        "dataset_ref": "refunds@2",
        "finished": True,
        "slices": ["refunds"],
        "slice_kappa": {"refunds": 0.8},
        "run": GOOD,
    }
    base.update(kw)
    return GateInputs(**base)  # type: ignore[arg-type]


def test_clean_run_passes() -> None:
    report = evaluate_gate(_inputs(), GateConfig(min_pass_rate=0.8), ThresholdsConfig())
    assert report.passed and report.failures == [] and report.cases == 4
    assert report.pass_rate == pytest.approx((1 + 1 + 2 / 3 + 1) / 4)
    assert report.lines() == ["gate PASSED"]


@pytest.mark.parametrize(
    ("inputs", "code"),
    [
        ({"finished": False}, "run_incomplete"),
        (
            {
                "findings": [
                    GateFinding(
                        "undeclared_tool",
                        "error",
                        "r-1:refund_all: tool is not declared",
                        "refunds",
                    )
                ]
            },
            "undeclared_tool",
        ),
        (
            {"findings": [GateFinding("expired", "error", "r-2: retention ended 2025-01-01")]},
            "expired",
        ),
        ({"slice_kappa": {"refunds": 0.41}}, "kappa_below_gate"),
        ({"inadmissible": {"refunds": 3}}, "judge_inadmissible"),
        ({"run": _run({"a": (3, 0)})}, "pass_rate"),
        ({"run": {}}, "no_verdicts"),
        (
            {
                "baseline": _run({"a": (3, 3), "b": (3, 3), "c": (3, 3), "d": (3, 3)}),
                "baseline_id": "r0",
                "run": _run({"a": (3, 3), "b": (3, 0), "c": (3, 3), "d": (3, 3)}),
            },
            "regression",
        ),
    ],
)
def test_each_failure_reason(inputs: dict[str, object], code: str) -> None:
    report = evaluate_gate(_inputs(**inputs), GateConfig(min_pass_rate=0.5), ThresholdsConfig())
    assert not report.passed
    assert [r.code for r in report.failures] == [code]


def test_regression_message_and_annotations() -> None:
    base = _run({"a": (1, 1), "b": (1, 1), "c": (1, 1), "d": (1, 1)})
    now = _run({"a": (1, 1), "b": (1, 0), "c": (1, 1), "d": (1, 1)})
    report = evaluate_gate(
        _inputs(run=now, baseline=base, baseline_id="r0"),
        GateConfig(max_regression=0.1),
        ThresholdsConfig(),
    )
    assert [str(r) for r in report.failures] == [
        "[regression] pass@1 fell from 1.000 (r0) to 0.750 on 4 shared cases: a drop of 0.250 > 0.1"
    ]
    assert report.github_annotations()[0] == (
        "::error title=casework gate (regression)::pass@1 fell from 1.000 (r0) to 0.750 on 4 shared cases: a drop of 0.250 > 0.1"
    )
    assert any(
        a.startswith("::warning title=casework gate (slice_regression)::")
        for a in report.github_annotations()
    )
    assert report.baseline_pass_rate == 1.0


def test_warnings_do_not_fail() -> None:
    report = evaluate_gate(
        _inputs(
            slice_kappa={},
            findings=[GateFinding("unknown_argument", "warning", "r-1: odd argument")],
        ),
        GateConfig(gating_slices=["refunds", "billing"]),
        ThresholdsConfig(),
    )
    assert report.passed
    assert sorted(w.code for w in report.warnings) == [
        "gating_slice_absent",
        "kappa_unmeasured",
        "unknown_argument",
    ]


def test_non_gating_slices_and_smoke_do_not_gate() -> None:
    run = {**GOOD, **_run({"x": (3, 0)}, slice_="status"), **_run({"y": (3, 0)}, split="smoke")}
    report = evaluate_gate(
        _inputs(
            run=run,
            slices=["refunds", "status"],
            slice_kappa={"refunds": 0.9, "status": 0.1},
            findings=[GateFinding("undeclared_tool", "error", "x: bad", "status")],
        ),
        GateConfig(gating_slices=["refunds"], min_pass_rate=0.9),
        ThresholdsConfig(),
    )
    assert report.passed and report.gating_slices == ["refunds"] and report.cases == 4
    assert [w.code for w in report.warnings] == ["undeclared_tool"]
    assert pass_rate(run, ["x"]) == 0.0 and pass_rate(run, []) is None


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = make_project(tmp_path / "p", config="[gate]\nmin_pass_rate = 0.7\n")
    monkeypatch.chdir(root)
    return load_project(root)


def test_gate_run_reads_runs_and_dataset_checks(project: Project) -> None:
    good = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent="python:tests.runner.sample_agents:good",
            k=2,
            use_judge=False,
            run_id="good",
        ),
    )
    bad = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent="python:tests.runner.sample_agents:sloppy",
            k=2,
            use_judge=False,
            run_id="bad",
        ),
    )
    passed = gate_run(project, good.header.run_id)
    assert passed.passed, passed.lines()
    assert passed.pass_rate == 1.0
    failed = gate_run(project, bad.header.run_id, baseline_ref=good.header.run_id)
    assert not failed.passed
    assert {r.code for r in failed.failures} == {"pass_rate", "regression"}
