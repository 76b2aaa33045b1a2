"""forget and expire remove every copy casework controls: workbench, run logs, reports."""

from __future__ import annotations

import itertools
import json
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import select

from casework.cli import cli
from casework.dataset import load_dataset, release
from casework.dataset.lock import dataset_lock
from casework.erasure import expire_everywhere, forget_everywhere
from casework.leakage.flagfile import flag_file, read_flags, write_flags
from casework.mining import MineOptions, mine
from casework.privacy.retention import subject_pseudonyms
from casework.project import Project, load_project
from casework.report import write_report
from casework.runner import RunHeader, RunRequest, load_run, log_path, run_agent
from casework.runner.records import read_log
from casework.schema import Label, LeakageFlagRecord
from casework.workbench import open_workbench
from casework.workbench.models_labelling import AssignmentRow, RawLabelRow
from casework.workbench.models_leakage import LeakageFlag
from casework.workbench.models_llm import LLMResponse
from casework.workbench.models_runs import JudgeCalibrationRow, RunRow, TrialRow

KEY = "erasure-tests-key-not-secret-0123456789"
TRACES = Path(__file__).resolve().parents[2] / "examples" / "refunds" / "traces"
MINED = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
ADA = "ada.fakename@example.com"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """The example traces mined, labelled, run once with a report, and worked on in the workbench."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "casework.toml").write_text(
        "[privacy]\nretention_days = 3650\n[privacy.id_patterns]\ncustomer = '\\bCUS-\\d{5}\\b'\n",
        encoding="utf-8",
    )
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.chdir(root)
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", KEY)
    proj = load_project(root)
    mine(proj, [TRACES], "refunds", MineOptions(slice="refunds", now=MINED))
    ds = load_dataset(proj, "refunds")
    labelled = [
        c.model_copy(
            update={
                "label": Label.model_validate(
                    {"outcome": "resolve", "required_tools": ["issue_refund"]}
                )
            }
        )
        for c in ds.cases
    ]
    release(proj, "refunds", labelled, "labels", now=MINED)
    summary = run_agent(
        proj,
        RunRequest(
            dataset="refunds", agent="python:tests.runner.sample_agents:reply_only", k=2,
            use_judge=False, run_id="run-1",
        ),
    )  # fmt: skip
    write_report(proj, summary.header.run_id, log_path(proj, "run-1").with_suffix(".html"))
    ids = [c.id for c in ds.cases]
    wb = open_workbench(proj)
    with wb.session() as s:
        for cid in ids:
            s.add(
                AssignmentRow(
                    dataset="refunds", case_id=cid, slice="refunds", labeller="l1",
                    role="first", guideline_version="refunds-g1", assigned_at=MINED,
                )
            )  # fmt: skip
            s.add(
                RawLabelRow(
                    dataset="refunds", case_id=cid, slice="refunds", labeller="l1",
                    role="first", guideline_version="refunds-g1", outcome="resolve",
                    required={}, forbidden={}, answer_facts=[], labelled_at=MINED, source="web",
                )
            )  # fmt: skip
        for left, right in itertools.pairwise(ids):
            s.add(
                LeakageFlag(
                    dataset="refunds", left_id=left, right_id=right, left_split="dev",
                    right_split="holdout", left_hash="a", right_hash="b", jaccard=0.9,
                    shared_count=3, shared="x", status="open", first_seen=MINED, last_seen=MINED,
                )
            )  # fmt: skip
        s.add(
            JudgeCalibrationRow(
                dataset="refunds", slice="refunds", judge_model="m", kappa=0.5, accuracy=0.8,
                n=len(ids), threshold=0.8, admissible=False, created_at=MINED, dataset_hash="h",
                report={
                    "disagreements": [
                        {"case_id": cid, "human": "resolve", "judge": "refuse", "reason": "r"}
                        for cid in ids
                    ],
                    "failed": ids[:2],
                },
            )
        )  # fmt: skip
        for i, case in enumerate(ds.cases):
            s.add(
                LLMResponse(
                    key=f"k{i}", kind="chat", model="m", prompt_hash="p", params="{}",
                    text=f"the customer {case.provenance.subjects[0]} asked",
                    created_at=MINED,
                )
            )  # fmt: skip
    wb.close()
    return proj


def _ada_rows(project: Project) -> tuple[set[str], set[str]]:
    """Ids of Ada's rows and every pseudonym they hold (subjects, session)."""
    ds = load_dataset(project, "refunds")
    wanted = subject_pseudonyms(project, emails=[ADA])
    rows = [c for c in ds.cases if wanted.intersection(c.provenance.subjects)]
    needles = {p for c in rows for p in (*c.provenance.subjects, c.provenance.source_session)}
    return {c.id for c in rows}, {n for n in needles if n}


def _apply_purge(expressions: str, text: str) -> str:
    """What `git filter-repo --replace-text` does with `regex:` lines (Python `re`, in order)."""
    for line in expressions.splitlines():
        pattern, _, replacement = line.removeprefix("regex:").partition("==>")
        text = re.sub(pattern, replacement, text)
    return text


def test_forget_removes_every_copy_casework_controls(project: Project) -> None:
    ids, needles = _ada_rows(project)
    assert len(ids) == 2
    others = {c.id for c in load_dataset(project, "refunds").cases} - ids
    log = log_path(project, "run-1")
    html = log.with_suffix(".html")
    old_log = log.read_text(encoding="utf-8")
    old_cases = (project.dataset_dir("refunds") / "cases.jsonl").read_text(encoding="utf-8")
    assert all(i in old_log for i in ids) and all(i in html.read_text() for i in ids)
    sheet = project.root / "labelling" / "round-1.csv"
    sheet.parent.mkdir()
    sheet.write_text("case_id,turns\n" + "\n".join(f"{i},hi" for i in sorted(ids)), "utf-8")

    erasure = forget_everywhere(project, emails=[ADA], now=MINED)

    wb = open_workbench(project)
    with wb.session() as s:
        for model in (RawLabelRow, AssignmentRow, TrialRow):
            left = set(s.scalars(select(model.case_id)).all())
            assert not left & ids and left >= others, model
        flags = s.scalars(select(LeakageFlag)).all()
        assert flags and not any({f.left_id, f.right_id} & ids for f in flags)
        flagged = len(flags)
        run = s.get(RunRow, "run-1")
        assert run is not None
        header = RunHeader.model_validate(run.header)
        assert not ids & set(header.case_ids)
        assert run.summary is not None and run.summary["trials"] == 2 * len(others)
        [cal] = s.scalars(select(JudgeCalibrationRow)).all()
        report: dict[str, Any] = cal.report
        assert {d["case_id"] for d in report["disagreements"]} == others
        assert not ids & set(report["failed"])
        texts = s.scalars(select(LLMResponse.text)).all()
        assert len(texts) == len(others) and not any(n in t for t in texts for n in needles)
    wb.close()
    stores = ("labelling_labels", "labelling_assignments", "leakage_flag", "trials", "runs")
    assert [erasure.count(n) for n in (*stores, "llm_response")] == [2, 2, 7 - flagged, 4, 1, 2]
    every = sorted(others | ids)
    assert 7 - flagged == sum(bool({a, b} & ids) for a, b in itertools.pairwise(every))
    new_log = log.read_text(encoding="utf-8")
    assert not any(x in new_log for x in (*ids, *needles))
    loaded = read_log(log)
    assert {t.case_id for t in loaded.trials} == others
    assert loaded.end is not None and loaded.end.trials == 2 * len(others)
    assert set(load_run(project, "run-1").header.case_ids) == others
    assert erasure.reports == [html]
    page = html.read_text(encoding="utf-8")
    assert not any(x in page for x in (*ids, *needles))
    assert erasure.leftovers == [sheet]
    assert [r.trials for r in erasure.run_logs] == [4]

    # the purge recipe deletes the rows from committed cases, labels and (compact) run logs
    [removal] = erasure.removals
    assert removal.purge_file is not None
    expressions = removal.purge_file.read_text(encoding="utf-8")
    for old in (old_cases, old_log):
        purged = _apply_purge(expressions, old)
        assert not any(i in purged for i in ids)
        assert all(i in purged for i in others)
        for line in purged.splitlines():
            json.loads(line)


def test_expire_removes_copies_too_and_dry_run_changes_nothing(project: Project) -> None:
    log = log_path(project, "run-1")
    before = log.read_bytes()
    dry = expire_everywhere(project, today=datetime(2037, 1, 1, tzinfo=UTC).date(), dry_run=True)
    assert dry.count("trials") == 16 and [r.trials for r in dry.run_logs] == [16]
    assert log.read_bytes() == before
    done = expire_everywhere(project, now=MINED, today=datetime(2037, 1, 1, tzinfo=UTC).date())
    assert done.count("labelling_labels") == 8 and done.count("trials") == 16
    loaded = read_log(log)
    assert loaded.trials == [] and loaded.header.case_ids == []
    assert loaded.end is not None and (loaded.end.trials, loaded.end.passed) == (0, 0)


def test_cli_lists_what_casework_cannot_reach(project: Project) -> None:
    export = project.root / "adk" / "refunds.evalset.json"
    export.parent.mkdir()
    ids, _ = _ada_rows(project)
    every = [c.id for c in load_dataset(project, "refunds").cases]

    def _flags_naming(chosen: set[str]) -> int:
        return sum(bool({a, b} & chosen) for a, b in itertools.pairwise(every))

    export.write_text(json.dumps({"eval_cases": [{"eval_id": i} for i in sorted(ids)]}), "utf-8")
    result = CliRunner().invoke(
        cli,
        ["--project", str(project.root), "dataset", "forget", "--email", ADA],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1] == "  deleted 2 cached old version(s) holding those rows"
    flags = _flags_naming(ids)
    assert lines[2:10] == [
        "table labelling_labels: removed 2 row(s)",
        "table labelling_assignments: removed 2 row(s)",
        f"table leakage_flag: removed {flags} row(s)",
        "table trials: removed 4 row(s)",
        "table runs: removed 1 row(s)",
        "table judge_calibrations: removed 1 row(s)",
        "table llm_response: removed 2 row(s)",
        "file run logs: removed 4 item(s)",
    ]
    assert lines[10] == "file reports: removed 1 item(s)"
    assert lines[11].startswith("held none: web_label_views, web_skips, guideline_gaps,")
    assert lines[12] == "runs/run-1.jsonl: removed 4 trial(s) (run log rewritten)"
    assert lines[13] == "runs/run-1.html: regenerated from the redacted run"
    assert lines[14] == "casework cannot reach these copies: delete or redact them yourself"
    assert lines[15] == "  adk/refunds.evalset.json (holds removed rows)"
    assert (
        "  labelling sheets sent to labellers (`casework label export`) and their replies" in lines
    )
    # a word, not a substring: hex ids in the output may hold "ada"
    assert re.search(r"\bada\b", result.stdout, re.IGNORECASE) is None
    assert "fakename" not in result.stdout


def test_a_run_log_that_cannot_be_read_is_left_and_listed(project: Project) -> None:
    ids, _ = _ada_rows(project)
    broken = log_path(project, "run-2")
    some = sorted(ids)[0]
    broken.write_text(
        '{"kind": "run", "dataset": "refunds"}\n'
        + json.dumps({"kind": "trial", "case_id": some})
        + "\n",
        encoding="utf-8",
    )
    erasure = forget_everywhere(project, emails=[ADA], now=MINED)
    assert [log.path.name for log in erasure.run_logs] == ["run-1.jsonl"]
    assert erasure.leftovers == [broken]
    assert some in broken.read_text(encoding="utf-8")


def test_forget_removes_review_flags_from_the_dataset_file(project: Project) -> None:
    ids, _ = _ada_rows(project)
    every = [c.id for c in load_dataset(project, "refunds").cases]
    records = [
        LeakageFlagRecord(
            id=n, left_id=a, right_id=b, left_split="dev", right_split="holdout",
            left_hash="a" * 64, right_hash="b" * 64, jaccard=0.9, shared_count=1,
            shared=[f"shingle of {a}"], status="open", first_seen=MINED,
        )
        for n, (a, b) in enumerate(itertools.pairwise(every), start=1)
    ]  # fmt: skip
    with dataset_lock(project, "refunds"):
        write_flags(project, "refunds", records)
    naming = sum(bool({r.left_id, r.right_id} & ids) for r in records)
    assert naming > 0
    erasure = forget_everywhere(project, emails=[ADA], now=MINED)
    left = read_flags(project, "refunds")
    assert len(left) == len(records) - naming
    assert not any({r.left_id, r.right_id} & ids for r in left)
    text = flag_file(project, "refunds").read_text(encoding="utf-8")
    assert not any(i in text for i in ids)
    assert erasure.count("leakage flags") == naming
