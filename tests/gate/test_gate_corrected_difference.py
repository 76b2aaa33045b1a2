"""`gate --baseline` and `results compare` with judged verdicts: the judge-corrected difference.

Two runs with the same raw verdicts, the run's judge lenient (Se 0.95, Sp 0.70) and the
baseline's fair (Se 0.90, Sp 0.80): raw, nothing changed; corrected, the run is 0.056 worse. The
gate decides on the corrected difference, and fails closed when it cannot be corrected or the
baseline's verdicts rest on an inadmissible judge.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from casework.cli import cli
from casework.gate import GateInputs, evaluate_gate
from casework.project import GateConfig, Project, ThresholdsConfig
from casework.runner.analysis import trial_decisions
from casework.runner.records import CheckCertification, LoadedRun, tallies
from tests.gate.test_gate_corrected import _judged_log, project
from tests.runner.builders import make_project
from tests.runner.judged import FAIR, LENIENT, loaded, standard_trials, write_log

__all__ = ["project"]  # the fixture, shared with test_gate_corrected

Certs = dict[str, dict[str, CheckCertification]]
#: Corrected pass@1 of standard_trials: (6 + 12 * RG) / 20 with each judge's Se and Sp.
RUN_FIXED = (6 / 8 * 8 + 12 * (0.75 + 0.70 - 1) / (0.95 + 0.70 - 1)) / 20
BASE_FIXED = (6 / 8 * 8 + 12 * (0.75 + 0.80 - 1) / (0.90 + 0.80 - 1)) / 20


def _inputs(run_certs: Certs, base_certs: Certs, **kw: object) -> GateInputs:
    trials = standard_trials()
    base: dict[str, object] = {
        "run_id": "new",
        "dataset_ref": "refunds@2",
        "finished": True,
        "slices": ["refunds"],
        "slice_kappa": {"refunds": 0.8},
        "run": tallies(trials, admissible_only=True),
        "dataset_version": 2,
        "latest_version": 2,
        "decisions": trial_decisions(trials, admissible_only=True),
        "certification": run_certs,
        "baseline": tallies(trials, admissible_only=True),
        "baseline_id": "old",
        "baseline_decisions": trial_decisions(trials, admissible_only=True),
        "baseline_certification": base_certs,
    }
    base.update(kw)
    return GateInputs(**base)  # type: ignore[arg-type]


GATE = GateConfig(min_pass_rate=0.5, max_regression=0.03)


def test_the_corrected_difference_decides_where_the_raw_one_ships() -> None:
    lenient, fair = {"refunds": {"answer_fact": LENIENT}}, {"refunds": {"answer_fact": FAIR}}
    same = evaluate_gate(_inputs(fair, fair), GATE, ThresholdsConfig())
    assert same.decision == "ship", same.lines()  # one judge: raw and corrected agree
    assert same.comparison is not None and same.comparison.corrected is not None
    assert same.comparison.corrected.corrected == pytest.approx(0.0)
    report = evaluate_gate(_inputs(lenient, fair), GATE, ThresholdsConfig())
    cmp = report.comparison
    assert cmp is not None and cmp.overall.difference == 0.0  # raw: nothing changed
    fixed = cmp.corrected
    assert fixed is not None and fixed.estimator == "rogan-gladen"
    assert fixed.corrected == pytest.approx(RUN_FIXED - BASE_FIXED, abs=1e-12)
    assert round(RUN_FIXED - BASE_FIXED, 3) == -0.056
    assert report.decision == "block" and cmp.decision == "block"
    [reason] = report.failures
    assert reason.code == "regression"
    assert reason.message.startswith(
        "against old on 10 shared cases: pass@1 corrected difference -0.056 ["
    )
    assert reason.message.endswith(
        "(raw +0.000, Rogan–Gladen) is a drop beyond 0.03 (corrected for the judge's measured "
        "error)"
    )
    assert "corrected difference -0.056" in cmp.describe()


def test_a_difference_that_cannot_be_corrected_fails_closed() -> None:
    fair = {"refunds": {"answer_fact": FAIR}}
    report = evaluate_gate(_inputs(fair, {}), GATE, ThresholdsConfig())
    assert report.decision == "block"
    codes = [r.code for r in report.failures]
    assert codes == ["difference_not_corrected"], report.lines()
    assert report.failures[0].message == (
        "against old: pass@1 difference +0.000 (raw; judge not certified for "
        "refunds/answer_fact (baseline)): the judge's measured error is not recorded for both "
        "runs, so the difference cannot be corrected"
    )


def test_baseline_verdicts_of_an_inadmissible_judge_fail_closed() -> None:
    fair = {"refunds": {"answer_fact": FAIR}}
    report = evaluate_gate(
        _inputs(fair, fair, baseline_inadmissible={"refunds": 3}), GATE, ThresholdsConfig()
    )
    assert [r.code for r in report.failures] == ["baseline_judge_inadmissible"]
    assert report.failures[0].message.startswith(
        "slice 'refunds': 3 verdict(s) of the baseline old"
    )


def _log(tmp: Path, name: str, certs: Certs, version: str) -> str:
    run = loaded(standard_trials(), certs)
    header = run.header.model_copy(update={"run_id": name, "agent_version": version})
    return write_log(LoadedRun(header, run.trials, run.end, source=name), tmp / f"{name}.jsonl")


def test_results_compare_prints_the_corrected_difference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = make_project(tmp_path / "p")
    a = _log(tmp_path, "new", {"refunds": {"answer_fact": LENIENT}}, "v2")
    b = _log(tmp_path, "old", {"refunds": {"answer_fact": FAIR}}, "v1")
    runner = CliRunner()
    args = ["--project", str(root), "results", "compare", a, b, "--no-write"]
    data = json.loads(runner.invoke(cli, [*args, "--format", "json"]).stdout)
    fixed = data["corrected_difference"]
    assert fixed["corrected"] == pytest.approx(RUN_FIXED - BASE_FIXED, abs=1e-12)
    assert (fixed["raw"], fixed["cases"], fixed["estimator"]) == (0.0, 10, "rogan-gladen")
    assert fixed["interval"][0] < fixed["corrected"] < fixed["interval"][1]
    assert fixed["method"] == "paired cluster bootstrap over cases, 2000 resamples, seed 0"
    text = runner.invoke(cli, args)
    assert text.exit_code == 0, text.output
    assert "pass@1 corrected difference -0.056 [" in text.stdout
    assert "(raw +0.000, Rogan–Gladen)" in text.stdout


def test_the_worked_example_of_docs_gate_md() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "gate.md").read_text(encoding="utf-8")
    report = evaluate_gate(
        _inputs({"refunds": {"answer_fact": LENIENT}}, {"refunds": {"answer_fact": FAIR}}),
        GATE,
        ThresholdsConfig(),
    )
    [reason] = report.failures
    assert f"\n    {reason}\n" in docs
    base_share, run_share = (0.75 + 0.80 - 1) / 0.70, (0.75 + 0.70 - 1) / 0.65
    assert (
        f"(0.75 + 0.80 − 1) / 0.70 = {base_share:.3f}, pass@1 (6 + 12 × {base_share:.3f})\n/ 20 = {BASE_FIXED:.3f}"
        in docs
    )
    assert f"(0.75 + 0.70 − 1) / 0.65 = {run_share:.3f}, pass@1 {RUN_FIXED:.3f}" in docs
    assert f"the run is **{BASE_FIXED - RUN_FIXED:.3f} worse**" in docs


def test_gate_cli_with_a_baseline_prints_and_decides_on_the_corrected_difference(
    project: Project,
) -> None:
    both = {"refunds": {"answer_fact": LENIENT}, "SECRET-SLICE": {"answer_fact": LENIENT}}
    lines = Path(_judged_log(project, both)).read_text(encoding="utf-8").splitlines()
    fair = {s: {"answer_fact": FAIR.model_dump()} for s in both}
    run, base = project.root / "runs" / "new.jsonl", project.root / "runs" / "base.jsonl"
    run.write_text("\n".join(_renamed(x, "new") for x in lines) + "\n", encoding="utf-8")
    base.write_text("\n".join(_renamed(x, "base", fair) for x in lines) + "\n", encoding="utf-8")
    args = ["--project", str(project.root), "gate", "--run", str(run), "--baseline", str(base)]
    result = CliRunner().invoke(cli, [*args, "--format", "json"])
    assert result.exit_code == 1, result.output
    data = json.loads(result.stdout)
    fixed = data["comparison"]["corrected"]
    expected = (0.8 + 0.7 - 1) / 0.65 - (0.8 + 0.8 - 1) / 0.7
    assert fixed["corrected"] == pytest.approx(expected, abs=1e-12)
    assert (fixed["raw"], fixed["estimator"]) == (0.0, "rogan-gladen")
    # The default estimator is PPI++; no one reviewed these runs' replies, so it says why not.
    assert fixed["note"].startswith("PPI++ needs people's verdicts on both runs' replies")
    assert data["decision"] == "block"
    assert "regression" in [f["code"] for f in data["failures"]]
    text = CliRunner().invoke(cli, args)
    assert f"pass@1 corrected difference {expected:+.3f} [" in text.stdout


def _renamed(line: str, run_id: str, certification: object = None) -> str:
    """A run log line with another run id (and, on the header, agent version and certification)."""
    obj = json.loads(line)
    obj["run_id"] = run_id
    if obj["kind"] == "run":
        obj["agent_version"] = run_id
        if certification is not None:
            obj["judge"]["certification"] = certification
    return json.dumps(obj)
