from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from tests.runner.builders import make_project

GOOD = "python:tests.runner.sample_agents:good"
SLOPPY = "python:tests.runner.sample_agents:sloppy"
JUDGE = '[models.judge]\nprovider = "scripted"\nmodel = "scripted-judge"\nscript = "python:tests.e2e.run_judge_script:answer"\n'

Invoke = Callable[..., Result]


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    folder = make_project(tmp_path / "proj", config="[gate]\nmin_pass_rate = 0.6\n")
    monkeypatch.chdir(folder)
    return folder


@pytest.fixture
def invoke(root: Path) -> Invoke:
    runner = CliRunner()

    def _invoke(*args: str) -> Result:
        return runner.invoke(cli, ["--project", str(root), *args], catch_exceptions=False)

    return _invoke


def _run(invoke: Invoke, agent: str, run_id_hint: str, *extra: str) -> str:
    result = invoke(
        "run",
        "refunds",
        "--agent",
        agent,
        "-k",
        "2",
        "--concurrency",
        "4",
        "--format",
        "json",
        *extra,
    )
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["trials"] == 10
    run_id: str = data["run_id"]
    assert run_hint_ok(run_id, run_id_hint)
    return run_id


def run_hint_ok(run_id: str, hint: str) -> bool:
    return hint in run_id


def test_run_results_compare_retire_gate_report(invoke: Invoke, root: Path) -> None:
    assert invoke("dataset", "release", "refunds", "-m", "first").exit_code == 0
    good = _run(invoke, GOOD, "-good-", "--agent-version", "v2")
    sloppy = _run(invoke, SLOPPY, "-sloppy-", "--agent-version", "v1")

    text = invoke("results", "show", good)
    assert text.exit_code == 0
    lines = text.stdout.splitlines()
    assert lines[0].endswith("· v2 · k=2")
    assert lines[1].split() == [
        "group",
        "cases",
        "trials",
        "pass@1",
        "95%",
        "CI",
        "pass^2",
        "pass@2",
        "stable",
    ]
    assert lines[2].split() == ["all", "4", "8", "1.000", "[1.00,1.00]", "1.000", "1.000", "1.000"]
    data = json.loads(invoke("results", "show", good, "--format", "json").stdout)
    overall = next(g for g in data["groups"] if g["group"] == "all")
    assert overall["pass1"] == 1.0 and overall["cases"] == 4 and data["agent_version"] == "v2"
    listing = json.loads(invoke("results", "list", "--format", "json").stdout)
    assert {r["run_id"] for r in listing} == {good, sloppy}

    cmp = invoke("results", "compare", good, sloppy, "--format", "json")
    assert cmp.exit_code == 0, cmp.stderr
    c = json.loads(cmp.stdout)
    assert c["better"] == "v2" and c["worse"] == "v1" and c["cases"] == 4
    assert c["discrimination_rate"] == 1.0 and c["inverted"] == [] and c["release"] == 2
    cases = [
        json.loads(line)
        for line in (root / "datasets/refunds/cases.jsonl").read_text().splitlines()
    ]
    assert all(
        x.get("provenance", {}).get("discriminates") == ["v2 > v1"]
        for x in cases
        if x["id"] != "u-1"
    )

    # The compare release changed only provenance: the runs still measure the current cases.
    retire = invoke(
        "dataset", "retire", "refunds", "--runs", good, "--runs", sloppy, "--format", "json"
    )
    assert retire.exit_code == 0, retire.stderr
    r = json.loads(retire.stdout)
    assert r["moved"] == [] and r["release"] is None  # every case separates the two systems
    # A change to what the cases measure makes the runs stale.
    path = root / "datasets/refunds/cases.jsonl"
    # (The refusal's answer fact goes too: with no judge its trials would stay undetermined,
    # which fails the gate below.)
    path.write_text(
        path.read_text()
        .replace("please refund order o1", "refund o1 now")
        .replace('"answer_facts": ["SECRET-FACT"]', '"answer_facts": []')
    )
    stale = invoke("dataset", "retire", "refunds", "--runs", good, "--runs", sloppy)
    assert stale.exit_code == 2
    assert stale.stderr.startswith("retire: the runs are on refunds@1")
    assert stale.stderr.endswith(
        "with other cases; run the systems on the current version first.\n"
    )
    # The gate decides only on released content: a run on the edited working tree fails.
    unreleased = invoke("gate", "--run", _run(invoke, GOOD, "-good-", "--agent-version", "v2"))
    assert unreleased.exit_code == 1 and "[unreleased_version]" in unreleased.stderr
    assert invoke("dataset", "release", "refunds", "-m", "reword o1").exit_code == 0
    good2 = _run(invoke, GOOD, "-good-", "--agent-version", "v2")
    sloppy2 = _run(invoke, SLOPPY, "-sloppy-", "--agent-version", "v1")

    gate_ok = invoke("gate", "--run", good2)
    assert gate_ok.exit_code == 0, gate_ok.stderr
    assert "gate PASSED" in gate_ok.stdout
    gate_bad = invoke("gate", "--run", sloppy2, "--baseline", good2, "--github")
    assert gate_bad.exit_code == 1
    assert gate_bad.stderr.startswith(
        "gate FAILED:\n  [pass_rate] pass@1 0.000 is below the minimum 0.6\n  [regression]"
    )
    assert gate_bad.stdout.startswith(
        "::error title=casework gate (pass_rate)::pass@1 0.000 is below the minimum 0.6"
    )

    report = invoke("report", good2, "--vs", sloppy2)
    assert report.exit_code == 0
    html = (root / "runs" / f"{good2}.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "Discrimination: v2 vs v1" in html


def test_retire_moves_cases_that_separate_nothing(invoke: Invoke, root: Path) -> None:
    good = _run(invoke, GOOD, "-good-", "--agent-version", "good")
    flaky = _run(
        invoke,
        "python:tests.runner.sample_agents:good_async",
        "-good-async-",
        "--agent-version",
        "good-async",
    )
    out = invoke("dataset", "retire", "refunds", "--runs", good, "--runs", flaky)
    assert out.exit_code == 0, out.stderr
    assert "moved 4 case(s) to split smoke" in out.stdout
    cases = {
        json.loads(line)["id"]: json.loads(line)
        for line in (root / "datasets/refunds/cases.jsonl").read_text().splitlines()
    }
    assert sorted(cid for cid, c in cases.items() if c["split"] == "smoke") == [
        "e-1",
        "r-1",
        "r-2",
        "r-3",
    ]
    versions = (root / "datasets/refunds/versions.jsonl").read_text().splitlines()
    assert "4 case(s) every system passed" in versions[-1]


def test_bad_input_exits_with_clear_messages(invoke: Invoke) -> None:
    bad_slice = invoke("run", "refunds", "--agent", GOOD, "--slice", "nope")
    assert bad_slice.exit_code == 2
    assert (
        bad_slice.stderr
        == "--slice: no slice nope in refunds@working (slices: SECRET-SLICE, refunds).\n"
    )
    no_run = invoke("results", "show", "zzz")
    assert no_run.exit_code == 2
    assert (
        no_run.stderr
        == "run 'zzz': no such run in the workbench or runs/zzz.jsonl; list the runs to see which exist.\n"
    )
    same = _run(invoke, GOOD, "-good-")
    again = _run(invoke, GOOD, "-good-")
    cmp = invoke("results", "compare", same, again)
    assert cmp.exit_code == 2
    assert (
        cmp.stderr
        == "compare: both runs are of 'good-1'; compare two different systems (set --agent-version when running them).\n"
    )
    one = invoke("dataset", "retire", "refunds", "--runs", same)
    assert (
        one.exit_code == 2
        and one.stderr
        == "retire: give runs of at least two different systems (--runs A --runs B).\n"
    )
    check = invoke("judge", "labeller-check", "--slice", "refunds")
    assert check.exit_code == 2
    assert check.stderr.startswith("judge labeller-check: no judge configured; set [models.judge]")
    unknown = invoke("run", "refunds", "--agent", "ftp:x")
    assert (
        unknown.exit_code == 2
        and unknown.stderr
        == "--agent: unknown scheme 'ftp'; use python:, http:, cmd: or adk:. Got 'ftp:x'.\n"
    )


def _answer_sheet(path: Path) -> None:
    """A person's answers: the toy fact (the refusal) is stated when the reply says it can't."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    for line in lines:
        assert line["kind"] == "answer_fact" and "judge" not in json.dumps(line).casefold()
        line["answer"] = "yes" if "can't" in line["reply"] else "no"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_judge_certification_makes_the_judge_admissible(root: Path, invoke: Invoke) -> None:
    # Issue 18: the labeller check no longer makes verdicts admissible; a certification of the
    # judge's verdicts against people's does. Low thresholds: the toy project has few replies.
    with (root / "casework.toml").open("a") as f:
        f.write(JUDGE)
    text = (root / "casework.toml").read_text()
    (root / "casework.toml").write_text(
        text.replace("[gate]", "[thresholds]\njudge_tpr = 0.2\njudge_tnr = 0.2\n\n[gate]")
    )
    assert invoke("dataset", "release", "refunds", "-m", "first").exit_code == 0
    before = _run(invoke, GOOD, "-good-")
    gate = invoke("gate", "--run", before)
    assert gate.exit_code == 1
    assert "[judge_inadmissible] slice 'refunds': 2 verdict(s) rest on a judge" in gate.stderr
    cal = invoke("judge", "labeller-check", "--slice", "refunds", "--format", "json")
    assert cal.exit_code == 0, cal.stderr
    data = json.loads(cal.stdout)
    assert data["n"] == 4 and data["kappa"] == 1.0 and data["admissible"] is True
    assert data["confusion"][0] == [3, 0, 0, 0] and data["confusion"][2] == [0, 0, 1, 0]
    still = _run(invoke, GOOD, "-good-")
    results = json.loads(invoke("results", "show", still, "--format", "json").stdout)
    assert results["inadmissible"] == 2  # the labeller check alone admits nothing
    sloppy = _run(invoke, SLOPPY, "-sloppy-")
    sheets = root / "sheets"
    sample = invoke(
        "judge", "sample", before, sloppy, "-n", "10", "--reviewers", "ada", "--overlap", "0",
        "--out", str(sheets), "--format", "json",
    )  # fmt: skip
    assert sample.exit_code == 0, sample.stderr
    assert json.loads(sample.stdout)["strata"] == {
        "refunds/answer_fact/fail": 2,
        "refunds/answer_fact/pass": 2,
    }
    _answer_sheet(sheets / "verdicts-ada.jsonl")
    imported = invoke("judge", "verdicts", "import", str(sheets / "verdicts-ada.jsonl"))
    assert imported.exit_code == 0, imported.stderr
    cert = invoke("judge", "certify", "--format", "json")
    assert cert.exit_code == 0, cert.stderr
    (only,) = json.loads(cert.stdout)["certifications"]
    assert (only["kind"], only["tp"], only["fn"], only["tn"], only["fp"]) == (
        "answer_fact",
        2,
        0,
        2,
        0,
    )
    assert only["admissible"] is True and only["current"] is True
    after = _run(invoke, GOOD, "-good-")
    results = json.loads(invoke("results", "show", after, "--format", "json").stdout)
    assert results["inadmissible"] == 0
    assert next(g for g in results["groups"] if g["group"] == "all")["pass1"] == 1.0
    gate2 = invoke("gate", "--run", after)
    assert gate2.exit_code == 0, gate2.stderr


def test_the_text_run_names_the_command_that_shows_it(invoke: Invoke) -> None:
    assert invoke("dataset", "release", "refunds", "-m", "first").exit_code == 0
    ran = invoke("run", "refunds", "--agent", GOOD, "-k", "1", "--concurrency", "2")
    assert ran.exit_code == 0, ran.stderr
    [summary] = [line for line in ran.stdout.splitlines() if line.startswith("run ")]
    run_id = summary.split()[1].rstrip(":")
    assert ran.stdout.splitlines()[-1] == f"next: casework results show {run_id}"
    shown = invoke(*ran.stdout.splitlines()[-1].split()[2:])
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.startswith(f"run {run_id} · refunds@1 (")
    listed = invoke("results", "list")
    assert listed.exit_code == 0, listed.stderr
    header = [cell.strip() for cell in listed.stdout.splitlines()[1].split("┃")[1:-1]]
    assert header == ["run", "dataset", "agent", "version", "k", "finished"]
    assert "refunds" in listed.stdout and "yes" in listed.stdout


def test_latest_names_the_run_started_last(invoke: Invoke, root: Path) -> None:
    none_yet = invoke("report", "latest")
    assert none_yet.exit_code == 2
    assert "run 'latest': this project has no run yet." in none_yet.stderr
    first = _run(invoke, GOOD, "-good-")
    second = _run(invoke, GOOD, "-good-")
    assert first != second
    shown = invoke("results", "show", "latest", "--format", "json")
    assert shown.exit_code == 0, shown.stderr
    assert json.loads(shown.stdout)["run_id"] == second
    report = invoke("report", "latest", "-o", "latest.html")
    assert report.exit_code == 0, report.stderr
    assert second in (root / "latest.html").read_text(encoding="utf-8")
