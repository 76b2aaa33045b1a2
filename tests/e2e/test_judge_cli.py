"""The judge commands on a small project: labeller-check and its old name, sample, verdicts
import, certify and tune add, with their errors.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from casework.cli._moved import note_text
from tests.e2e.test_run_cli import GOOD, JUDGE, SLOPPY
from tests.output_schema import printed
from tests.runner.builders import make_project

Invoke = Callable[..., Result]


@pytest.fixture
def invoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = make_project(tmp_path / "proj", config="[gate]\nmin_pass_rate = 0.6\n" + JUDGE)
    monkeypatch.chdir(root)
    runner = CliRunner()

    def _invoke(*args: str) -> Result:
        return runner.invoke(cli, ["--project", str(root), *args], catch_exceptions=False)

    assert _invoke("dataset", "release", "refunds", "-m", "first").exit_code == 0
    return _invoke


def _run(invoke: Invoke, agent: str) -> str:
    result = invoke("run", "refunds", "--agent", agent, "-k", "2", "--format", "json")
    assert result.exit_code == 0, result.stderr
    run_id: str = json.loads(result.stdout)["run_id"]
    return run_id


def test_calibrate_is_the_labeller_check_under_its_old_name(invoke: Invoke) -> None:
    new = invoke("judge", "labeller-check", "--slice", "refunds", "--format", "json")
    old = invoke("judge", "calibrate", "--slice", "refunds", "--format", "json")
    assert new.exit_code == old.exit_code == 0
    assert json.loads(new.stdout)["kappa"] == json.loads(old.stdout)["kappa"] == 1.0
    usage = (
        "judge (scripted-judge): 4 requests, 0 from cache, tokens not reported by the provider\n"
    )
    assert new.stderr == usage  # every command that calls a model ends with its usage line
    assert old.stderr == note_text("judge calibrate", "judge labeller-check") + "\n" + usage
    text = invoke("judge", "labeller-check", "--slice", "refunds")
    assert (
        "This does not make its verdicts admissible: `casework judge certify` does." in text.stdout
    )


def test_sample_import_certify_in_text(invoke: Invoke, tmp_path: Path) -> None:
    runs = [_run(invoke, GOOD), _run(invoke, SLOPPY)]
    lonely = invoke("judge", "sample", *runs, "-n", "4", "--reviewers", "ada", "--out", "s")
    assert lonely.exit_code == 2
    assert lonely.stderr == "--overlap: an overlap needs at least two reviewers.\n"
    sample = invoke(
        "judge", "sample", *runs, "-n", "4", "--reviewers", "ada,bo", "--overlap", "0.5",
        "--out", "s",
    )  # fmt: skip
    assert sample.exit_code == 0, sample.stderr
    assert "sampled 4 of 4 judge verdict(s) (0 excluded: tuning or sampled before), 2 to two" in (
        sample.stdout
    )
    sheets = sorted(Path("s").glob("verdicts-*.jsonl"))
    for path in sheets:
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        for line in lines:
            line["answer"] = "yes" if "can't" in line["reply"] else "no"
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    bad = tmp_path / "bad.jsonl"
    lines = sheets[0].read_text().splitlines()
    lines[-1] = (
        lines[-1]
        .replace('"answer": "yes"', '"answer": "perhaps"')
        .replace('"answer": "no"', '"answer": "perhaps"')
    )
    bad.write_text("\n".join(lines) + "\n")
    refused = invoke("judge", "verdicts", "import", str(bad))
    assert refused.exit_code == 1
    assert refused.stderr == (
        note_text("judge verdicts import", "review import")
        + f"\n{bad}:{len(lines)}: answer: must be yes or no. Got 'perhaps'.\n"
    )
    imported = invoke("judge", "verdicts", "import", *map(str, sheets))
    assert imported.exit_code == 0, imported.stderr
    assert "human–human agreement on 2 item(s) graded by two people: 2/2 agree" in imported.stdout
    again = invoke("judge", "verdicts", "import", *map(str, sheets), "--format", "json")
    assert again.exit_code == 0, again.stderr
    stored = printed("judge-verdicts-import", again.stdout)
    assert stored["stored"] == stored["replaced"] and stored["human_agreement"]["agreeing"] == 2
    cert = invoke("judge", "certify")
    assert cert.exit_code == 0, cert.stderr
    assert "wilson 95% intervals; admissible when the lower bounds reach TPR 0.8 and TNR 0.8" in (
        cert.stdout
    )
    # Two of each class, all agreeing: Wilson's lower bound 2 / (2 + 1.96²) = 0.34; 14 more each.
    assert "not admissible; more reviewed cases needed — pass: 15, fail: 15" in cert.stdout


def test_tune_add_checks_the_keys(invoke: Invoke) -> None:
    bad = invoke("judge", "tune", "add", "run-1/case-1")
    assert bad.exit_code == 2
    assert bad.stderr == (
        "KEYS: must be RUN_ID/CASE_ID/TRIAL[/KIND[/FACT_INDEX]]. Got 'run-1/case-1'.\n"
    )
    ok = invoke("judge", "tune", "add", "run-1/case-1/0", "run-1/case-2/1/answer_fact/0")
    assert ok.exit_code == 0 and ok.stdout == "judge/tuning.jsonl: 2 key(s)\n"
