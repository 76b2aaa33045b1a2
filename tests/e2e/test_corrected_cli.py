"""`casework results show` prints raw and corrected pass@1 where a judge decided verdicts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from tests.runner.builders import make_project
from tests.runner.judged import LENIENT, loaded, programmatic, standard_trials, write_log


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    folder = make_project(tmp_path / "proj")
    monkeypatch.chdir(folder)
    return folder


def _show(root: Path, log: str, *extra: str) -> Result:
    result = CliRunner().invoke(
        cli, ["--project", str(root), "results", "show", log, *extra], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    return result


def test_results_show_carries_raw_and_corrected(root: Path) -> None:
    run = loaded(standard_trials(), {"refunds": {"answer_fact": LENIENT}})
    log = write_log(run, root / "runs" / "judged.jsonl")
    data = json.loads(_show(root, log, "--format", "json").stdout)
    overall = data["corrected_pass1"]["all"]
    assert overall["raw"] == pytest.approx(0.75)
    assert overall["corrected"] == pytest.approx((6 + 12 * 0.45 / 0.65) / 20)
    assert overall["interval"][0] < overall["corrected"] < overall["interval"][1]
    assert (overall["trials"], overall["judged"]) == (20, 12)
    assert overall["uncertified"] == [] and overall["method"] == (
        "cluster bootstrap over cases, 2000 resamples, seed 0"
    )
    assert [g["pass1"] for g in data["groups"] if g["group"] == "all"] == [pytest.approx(0.75)]
    text = _show(root, log).stdout
    assert "pass@1 corrected for the judge's measured error" in text
    assert "all: corrected pass@1 0.715 [" in text
    assert "(raw 0.750) · 12 of 20 trial(s) judge-decided" in text


def test_results_show_says_not_certified(root: Path) -> None:
    log = write_log(loaded(standard_trials(), {}), root / "runs" / "judged.jsonl")
    data = json.loads(_show(root, log, "--format", "json").stdout)
    assert data["corrected_pass1"]["all"]["corrected"] is None
    assert data["corrected_pass1"]["all"]["interval"] is None
    assert data["corrected_pass1"]["all"]["uncertified"] == ["refunds/answer_fact"]
    assert "judge not certified for refunds/answer_fact" in _show(root, log).stdout


def test_results_without_judged_verdicts_carry_no_corrected_figure(root: Path) -> None:
    trials = [programmatic(f"c{i}", n, i != n) for i in range(3) for n in range(2)]
    log = write_log(
        loaded(trials, {"refunds": {"answer_fact": LENIENT}}), root / "runs" / "p.jsonl"
    )
    data = json.loads(_show(root, log, "--format", "json").stdout)
    assert "corrected_pass1" not in data
    assert "corrected" not in _show(root, log).stdout
