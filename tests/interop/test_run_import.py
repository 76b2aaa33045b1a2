"""Other tools' per-trial results as casework runs: τ-bench, Inspect AI logs, generic JSONL."""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import jsonschema
import pytest
from click.testing import Result

from casework.errors import InputError, UsageError
from casework.interop import RunImportOptions, import_run, run_log_schema
from casework.interop.run_import import read_results
from casework.project import load_project
from casework.runner import run_results
from casework.runner.records import read_log

Run = Callable[..., Result]
DATA = Path(__file__).parent / "data"


def _copy(name: str, dest: Path) -> Path:
    target = dest / Path(name).name
    shutil.copy(DATA / name, target)
    return target


def _released(project_dir: Path, run_cli: Run) -> None:
    assert run_cli("dataset", "release", "refunds", "-m", "first").exit_code == 0


def test_tau_results_stand_alone(project_dir: Path) -> None:
    path = _copy("tau/results.json", project_dir)
    project = load_project(project_dir)
    report = import_run(project, path, RunImportOptions(format="tau"))
    assert (report.trials, report.passed, report.cases, report.k) == (4, 3, 2, 2)
    assert report.dataset_ref == "external@results.json"
    run = read_log(project_dir / report.path)
    assert run.finished and run.header.agent_spec == "import:tau:results.json"
    assert len(run.header.dataset_hash) == 64 and run.header.dataset == "external"
    by = {(t.case_id, t.trial): t for t in run.trials}
    assert [by["1", 0].passed, by["1", 1].passed, by["0", 1].passed] == [True, False, True]
    call = by["0", 0].trajectory.tool_calls[0]
    assert call.name == "get_order_details" and call.arguments == {"order_id": "#W0001"}
    assert call.result == {"order_id": "#W0001", "status": "delivered"}
    assert by["1", 1].trajectory.reply() == "Sorry, I cannot help."
    [check] = by["1", 1].verdict.checks
    assert check.name == "imported" and check.status == "fail"
    assert check.evidence.startswith("tau reported reward 0; threshold 1")
    res = run_results(run)
    assert res.overall.pass_hat[1] == pytest.approx(0.75)
    assert res.overall.pass_hat[2] == pytest.approx(0.5)  # task 0 always, task 1 once of twice
    assert res.overall.stability == pytest.approx(0.5)
    assert res.flaky == ["1"]


def test_threshold_decides_rewards(project_dir: Path) -> None:
    path = project_dir / "partial.jsonl"
    path.write_text(
        "".join(json.dumps({"task_id": "t", "reward": r}) + "\n" for r in (0.4, 0.6, 0.9)),
        encoding="utf-8",
    )
    project = load_project(project_dir)
    report = import_run(project, path, RunImportOptions(format="generic", threshold=0.5))
    run = read_log(project_dir / report.path)
    assert [t.passed for t in run.trials] == [False, True, True]
    assert [t.trial for t in run.trials] == [0, 1, 2]  # numbered in file order per task


def test_zstd_eval_log_reads_as_the_deflated_copy() -> None:
    """Inspect writes .eval entries zstd-compressed (read with `zstandard`, a dependency)."""
    a = read_results(DATA / "inspect/refunds.eval", "inspect")
    b = read_results(DATA / "inspect/refunds-deflate.eval", "inspect")
    same = [dataclasses.replace(t, where="") for t in a.trials]
    assert same == [dataclasses.replace(t, where="") for t in b.trials] and len(same) == 6


def test_zstd_eval_log_without_zstandard_says_what_it_needs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "zstandard", None)  # import zstandard -> ImportError
    with pytest.raises(InputError, match="zstd-compressed; install `zstandard`"):
        read_results(DATA / "inspect/refunds.eval", "inspect", shown="refunds.eval")


@pytest.mark.parametrize(
    "name", ["inspect/refunds.eval", "inspect/refunds-deflate.eval", "inspect/refunds.json"]
)
def test_inspect_log_written_by_inspect_pins_to_the_release(
    name: str, project_dir: Path, run_cli: Run
) -> None:
    _released(project_dir, run_cli)
    path = _copy(name, project_dir)
    project = load_project(project_dir)
    report = import_run(project, path, RunImportOptions(format="inspect", dataset="refunds"))
    assert report.dataset_ref == "refunds@1" and (report.trials, report.k) == (6, 2)
    run = read_log(project_dir / report.path)
    assert run.header.agent_version == "mockllm/model"
    passed = {(t.case_id, t.trial): t.passed for t in run.trials}
    assert passed == {
        ("r-1", 0): True, ("r-1", 1): True, ("r-2", 0): False,
        ("r-2", 1): False, ("r-3", 0): True, ("r-3", 1): True,
    }  # fmt: skip
    r1 = next(t for t in run.trials if t.case_id == "r-1")
    assert (r1.split, r1.slice) == ("holdout", "refunds")  # from the case, not the log
    r2 = next(t for t in run.trials if t.case_id == "r-2")
    assert r2.slice == "status"
    assert r1.trajectory.reply() == "Your order is refunded."
    res = run_results(run)
    assert res.overall.pass_hat[2] == pytest.approx(2 / 3) and res.overall.stability == 1.0


def test_eval_and_json_logs_read_the_same(project_dir: Path) -> None:
    a = read_results(DATA / "inspect/refunds-deflate.eval", "inspect")
    b = read_results(DATA / "inspect/refunds.json", "inspect")
    key = [(t.task_id, t.trial, t.reward, t.reply) for t in a.trials]
    assert sorted(key) == sorted((t.task_id, t.trial, t.reward, t.reply) for t in b.trials)
    with pytest.raises(InputError, match="no scorer 'accuracy'; the sample has includes"):
        read_results(DATA / "inspect/refunds.json", "inspect", ["scorer=accuracy"])


def test_hash_matching_no_release_is_refused_naming_the_releases(
    project_dir: Path, run_cli: Run
) -> None:
    _released(project_dir, run_cli)
    path = _copy("inspect/refunds.json", project_dir)
    project = load_project(project_dir)
    with pytest.raises(UsageError) as caught:
        import_run(
            project,
            path,
            RunImportOptions(format="inspect", dataset="refunds", dataset_hash="deadbeef00"),
        )
    message = str(caught.value)
    assert "dataset hash 'deadbeef00' matches no release of refunds" in message
    versions = (project_dir / "datasets/refunds/versions.jsonl").read_text().splitlines()
    assert f"refunds@1 {json.loads(versions[0])['hash'][:16]}" in message
    assert not (project_dir / "runs").exists()
    good = json.loads(versions[0])["hash"][:10]
    report = import_run(
        project, path, RunImportOptions(format="inspect", dataset="refunds", dataset_hash=good)
    )
    assert report.dataset_ref == "refunds@1"


def test_generic_errors_all_located_nothing_written(project_dir: Path, run_cli: Run) -> None:
    _released(project_dir, run_cli)
    path = project_dir / "bad.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"meta": {"case": "r-1"}, "ok": True}),
                "{not json",
                json.dumps({"meta": {"case": "r-9"}, "ok": True}),
                json.dumps({"meta": {"case": "r-2"}}),
                json.dumps({"meta": {"case": "r-2"}, "ok": "maybe"}),
                json.dumps({"meta": {"case": "r-1"}, "ok": 1, "trial": 0}),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    project = load_project(project_dir)
    options = RunImportOptions(
        format="generic", mapping=("task_id=meta.case", "passed=ok"), dataset="refunds"
    )
    with pytest.raises(InputError) as caught:
        import_run(project, path, options)
    lines = str(caught.value).splitlines()
    assert lines == [
        "bad.jsonl:2: invalid JSON: Expecting property name enclosed in double quotes at column 2.",
        "bad.jsonl:4: ok: no pass/fail and no reward (map one with passed=PATH or reward=PATH).",
        "bad.jsonl:5: ok: score must be a number, a boolean or one of C, I, P, N, yes, no. Got 'maybe'.",
    ]
    path.write_text(
        "\n".join(
            [
                json.dumps({"meta": {"case": "r-1"}, "ok": True}),
                json.dumps({"meta": {"case": "r-9"}, "ok": True}),
                json.dumps({"meta": {"case": "r-1"}, "ok": 1, "trial": 0}),
            ]
        ),
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        import_run(project, path, options)
    assert str(caught.value).splitlines() == [
        "bad.jsonl:2: task_id: not a case of refunds@1. Got 'r-9'.",
        "bad.jsonl:3: trial: task r-1 has trial 0 twice. Got 0.",
    ]
    assert not (project_dir / "runs").exists()


def test_bad_tau_and_inspect_files_are_located_by_pointer(project_dir: Path) -> None:
    bad = project_dir / "tau.json"
    bad.write_text(
        json.dumps([{"task_id": 0, "reward": "high", "traj": [], "trial": 0}, {"reward": 1}, 3]),
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        read_results(bad, "tau", shown="tau.json")
    assert str(caught.value).splitlines() == [
        "tau.json: /0/reward: score must be a number, a boolean or one of C, I, P, N, yes, no. Got 'high'.",
        "tau.json: /1/task_id: missing.",
        "tau.json: /2: a τ-bench result must be an object {task_id, reward, info, traj, trial}. Got 3.",
    ]
    log = json.loads((DATA / "inspect/refunds.json").read_text())
    log["samples"][1]["epoch"] = 0
    del log["samples"][2]["scores"]
    bad.write_text(json.dumps(log), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_results(bad, "inspect", shown="log.json")
    assert str(caught.value).splitlines()[:2] == [
        "log.json: /samples/1/epoch: must be an integer of at least 1. Got 0.",
        "log.json: /samples/2/scores: sample has no scores (was it scored?).",
    ]
    bad.write_bytes(b"PK\x03\x04 broken zip")
    with pytest.raises(InputError, match=r"not an Inspect \.eval log"):
        read_results(bad, "inspect")


def test_schema_run_validates_every_line_of_an_imported_log(
    project_dir: Path, run_cli: Run
) -> None:
    path = _copy("tau/results.json", project_dir)
    printed = run_cli("schema", "run")
    assert printed.exit_code == 0
    schema = json.loads(printed.stdout)
    assert schema == json.loads(json.dumps(run_log_schema()))
    report = import_run(load_project(project_dir), path, RunImportOptions(format="tau"))
    lines = (project_dir / report.path).read_text().splitlines()
    for line in lines:
        jsonschema.validate(json.loads(line), schema)
    bad = json.loads(lines[1])
    bad["verdict"]["passed"] = "yes"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema)


def test_cli_results_compare_report_and_gate_on_imported_runs(
    project_dir: Path, run_cli: Run
) -> None:
    _released(project_dir, run_cli)
    _copy("inspect/refunds-deflate.eval", project_dir)
    better = project_dir / "better.jsonl"
    better.write_text(
        "".join(
            json.dumps({"task_id": cid, "trial": t, "passed": True}) + "\n"
            for cid in ("r-1", "r-2", "r-3")
            for t in (0, 1)
        ),
        encoding="utf-8",
    )
    out = run_cli(
        "import", "run", "refunds-deflate.eval", "--results-format", "inspect", "--dataset", "refunds",
        "--run-id", "insp", "--format", "json",
    )  # fmt: skip
    assert out.exit_code == 0, out.stderr
    assert json.loads(out.stdout)["path"] == "runs/insp.jsonl"
    out = run_cli(
        "import", "run", "better.jsonl", "--results-format", "generic", "--dataset", "refunds",
        "--run-id", "mine", "--agent-version", "v2",
    )  # fmt: skip
    assert out.exit_code == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "next: casework results show mine"
    again = run_cli(
        "import", "run", "better.jsonl", "--results-format", "generic", "--run-id", "mine"
    )
    assert again.exit_code == 2 and "run mine already exists" in again.stderr
    listed = run_cli("results", "list", "--format", "json")
    rows = {r["run_id"]: r["stored"] for r in json.loads(listed.stdout)}
    assert rows == {"insp": "file runs/insp.jsonl", "mine": "file runs/mine.jsonl"}
    assert "runs that exist only as log files" in run_cli("results", "list").stdout
    shown = json.loads(run_cli("results", "show", "insp", "--format", "json").stdout)
    overall = next(g for g in shown["groups"] if g["group"] == "all")
    assert overall["pass1"] == pytest.approx(2 / 3) and overall["cases"] == 3
    cmp = run_cli("results", "compare", "mine", "insp", "--no-write", "--format", "json")
    assert cmp.exit_code == 0, cmp.stderr
    assert json.loads(cmp.stdout)["cases"] == 3
    report = run_cli("report", "insp", "--out", "report.html")
    assert report.exit_code == 0, report.stderr
    assert "mockllm/model" in (project_dir / "report.html").read_text(encoding="utf-8")
    gate = run_cli("gate", "--run", "mine", "--format", "json")
    assert gate.exit_code == 1
    codes = {f["code"] for f in json.loads(gate.stdout)["failures"]}
    assert "imported_run" in codes


def test_cli_report_and_gate_on_a_run_standing_alone(project_dir: Path, run_cli: Run) -> None:
    _copy("tau/results.json", project_dir)
    out = run_cli("import", "run", "results.json", "--results-format", "tau", "--run-id", "tau")
    assert out.exit_code == 0, out.stderr
    report = run_cli("report", "tau", "--out", "tau.html")
    assert report.exit_code == 0, report.stderr
    assert "external@results.json" in (project_dir / "tau.html").read_text(encoding="utf-8")
    gate = run_cli("gate", "--run", "tau", "--format", "json")
    assert gate.exit_code == 1
    codes = [f["code"] for f in json.loads(gate.stdout)["failures"]]
    assert {"imported_run", "dataset_absent", "unreleased_version"} <= set(codes)


def test_a_score_past_a_floats_range_is_located_not_a_traceback(project_dir: Path) -> None:
    # Found by the reader fuzz: an integer beyond a float's range made `float()` overflow.
    path = project_dir / "huge.jsonl"
    path.write_text(json.dumps({"id": "r-1", "reward": 10**400}) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        read_results(path, "generic", ("task_id=id", "reward=reward"), shown="huge.jsonl")
    assert str(caught.value).startswith("huge.jsonl:1: reward: score must be a finite number.")
