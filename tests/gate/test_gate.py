from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from casework.dataset import load_dataset, release
from casework.errors import UsageError
from casework.gate import RULES, GateInputs, GateRule, evaluate_gate, gate_run
from casework.gate._decision import GateContext, GateFinding, pass_rate
from casework.project import GateConfig, Project, ThresholdsConfig, load_project
from casework.runner import RunRequest, run_agent
from casework.runner.metrics import CaseTally
from tests.runner.builders import default_cases, make_project

GOOD_AGENT = "python:tests.runner.sample_agents:good"


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
        "dataset_version": 2,
        "latest_version": 2,
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
        ({"dataset_version": None}, "unreleased_version"),
        ({"dataset_version": 1}, "old_version"),
        ({"slices": ["refunds"], "run": GOOD}, None),
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
def test_each_failure_reason(inputs: dict[str, object], code: str | None) -> None:
    report = evaluate_gate(_inputs(**inputs), GateConfig(min_pass_rate=0.5), ThresholdsConfig())
    assert report.passed is (code is None)
    assert [r.code for r in report.failures] == ([code] if code else [])


def test_the_gate_fails_closed() -> None:
    """No floor, a gating slice the run lacks, an old or unreleased version: each fails alone."""
    floorless = evaluate_gate(_inputs(), GateConfig(), ThresholdsConfig())
    assert [r.code for r in floorless.failures] == ["no_floor"]
    absent = evaluate_gate(
        _inputs(),
        GateConfig(min_pass_rate=0.5, gating_slices=["refunds", "billing"]),
        ThresholdsConfig(),
    )
    assert [r.code for r in absent.failures] == ["gating_slice_absent"]
    assert "billing" in absent.failures[0].message
    old = evaluate_gate(
        _inputs(dataset_version=1), GateConfig(min_pass_rate=0.5), ThresholdsConfig()
    )
    assert [str(r) for r in old.failures] == [
        "[old_version] run r1 is on release #1, not the latest #2; run on the latest release"
    ]
    allowed = evaluate_gate(
        _inputs(dataset_version=1, allow_old_version="hotfix of 1.4"),
        GateConfig(min_pass_rate=0.5),
        ThresholdsConfig(),
    )
    assert allowed.passed
    assert [str(r) for r in allowed.warnings] == [
        "[old_version] run r1 is on release #1, not the latest #2; allowed: hotfix of 1.4"
    ]
    # The pure inputs default to "on no release": a caller that forgets to say fails.
    bare = GateInputs(run_id="r", dataset_ref="d@1", finished=True, slices=["refunds"], run=GOOD)
    assert "unreleased_version" in {
        r.code
        for r in evaluate_gate(bare, GateConfig(min_pass_rate=0.5), ThresholdsConfig()).failures
    }


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.__name__)
def test_each_rule_stands_alone_and_is_silent_on_a_clean_run(rule: GateRule) -> None:
    ctx = GateContext.of(_inputs(), GateConfig(min_pass_rate=0.5), ThresholdsConfig())
    assert list(rule(ctx)) == []
    report = evaluate_gate(_inputs(finished=False), GateConfig(), ThresholdsConfig(), rules=[rule])
    codes = {r.code for r in report.failures}
    assert codes <= {"run_incomplete", "no_floor"}


def test_regression_message_and_annotations() -> None:
    base = _run({"a": (1, 1), "b": (1, 1), "c": (1, 1), "d": (1, 1)})
    now = _run({"a": (1, 1), "b": (1, 0), "c": (1, 1), "d": (1, 1)})
    report = evaluate_gate(
        _inputs(run=now, baseline=base, baseline_id="r0"),
        GateConfig(max_regression=0.1, min_pass_rate=0.5),
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
        GateConfig(gating_slices=["refunds"], min_pass_rate=0.5),
        ThresholdsConfig(),
    )
    assert report.passed
    assert sorted(w.code for w in report.warnings) == [
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


def judgeless_cases() -> list[dict[str, Any]]:
    """The default cases, decidable without a judge: the refusal's answer fact left out.

    With it, the refusal's trials of a run without a judge are undetermined, which fails the gate.
    """
    cases = default_cases()
    for case in cases:
        if case["id"] == "u-1":
            case["label"]["answer_facts"] = []
    return cases


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = make_project(tmp_path / "p", judgeless_cases(), "[gate]\nmin_pass_rate = 0.7\n")
    monkeypatch.chdir(root)
    return load_project(root)


def _release(project: Project, message: str) -> None:
    ds = load_dataset(project, "refunds")
    release(project, "refunds", ds.cases, message, labels=ds.labels)


def test_gate_run_reads_runs_and_dataset_checks(project: Project) -> None:
    _release(project, "first")
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


def test_gate_run_fails_closed_on_unreleased_and_old_versions(project: Project) -> None:
    def run(run_id: str) -> str:
        request = RunRequest(
            dataset="refunds", agent=GOOD_AGENT, k=1, use_judge=False, run_id=run_id
        )
        return run_agent(project, request).header.run_id

    unreleased = gate_run(project, run("on-working"))
    assert [r.code for r in unreleased.failures] == ["unreleased_version"]
    _release(project, "first")
    on_first = run("on-first")
    assert gate_run(project, on_first).passed
    # A later release (here: one case retired to smoke) makes the run on #1 an old version.
    ds = load_dataset(project, "refunds")
    retired = [
        c.model_copy(update={"split": "smoke"}) if i == 0 else c for i, c in enumerate(ds.cases)
    ]
    release(project, "refunds", retired, "retire one", labels=ds.labels)
    old = gate_run(project, on_first)
    assert [str(r) for r in old.failures] == [
        "[old_version] run on-first is on release #1, not the latest #2; run on the latest release"
    ]
    allowed = gate_run(project, on_first, allow_old_version="only a retirement since")
    assert allowed.passed and [r.code for r in allowed.warnings if r.code == "old_version"]
    with pytest.raises(UsageError, match=r"^allow_old_version: give the reason"):
        gate_run(project, on_first, allow_old_version="  ")


def test_a_provenance_only_release_keeps_the_run_current(project: Project) -> None:
    _release(project, "first")
    request = RunRequest(dataset="refunds", agent=GOOD_AGENT, k=1, use_judge=False, run_id="r1")
    run_agent(project, request)
    ds = load_dataset(project, "refunds")
    noted = [
        c.model_copy(
            update={"provenance": c.provenance.model_copy(update={"discriminates": ["b > a"]})}
        )
        for c in ds.cases
    ]
    assert release(project, "refunds", noted, "compare notes", labels=ds.labels) is not None
    report = gate_run(project, "r1")
    assert report.passed, report.lines()
    assert "old_version" not in {r.code for r in [*report.failures, *report.warnings]}
