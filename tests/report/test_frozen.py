"""Frozen cases never leave casework: not in reports, not to a judge that is not private."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from casework.grading import Judge
from casework.project import Project, load_project
from casework.report import render_report, report_context, write_report
from casework.report.html import ReportData
from casework.runner import RunRequest, load_run, run_agent, run_results
from tests.grading.fakes import FakeLLM
from tests.runner.builders import default_cases, make_project, refund_case

SLOPPY = "python:tests.runner.sample_agents:sloppy"
#: What a frozen case holds that must not show: its id, its exact argument, its reply.
FROZEN_ID = "frozen-refund-77"


def _cases() -> list[dict[str, Any]]:
    frozen = refund_case(FROZEN_ID, "o77", 77.25, frozen=True)
    frozen["label"]["answer_facts"] = ["FROZEN-FACT"]
    frozen["oracle"] = {"class": "rubric_judge", "rubric": "FROZEN-RUBRIC"}
    return [*default_cases(), frozen]


def _project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str = "") -> Project:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = make_project(tmp_path / "p", _cases(), config=config)
    monkeypatch.chdir(root)
    return load_project(root)


def test_the_report_counts_frozen_cases_and_never_shows_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path, monkeypatch)
    run_agent(
        project, RunRequest(dataset="refunds", agent=SLOPPY, k=2, use_judge=False, run_id="s")
    )
    run = load_run(project, "s")
    assert any(
        t.frozen and t.passed is False for t in run.trials
    )  # it fails, so it would be listed
    ctx = report_context(ReportData(run_results(run)))
    assert ctx.frozen_failing == 1 and ctx.frozen_failing_ids == []
    assert FROZEN_ID not in {f.case_id for f in ctx.failing}
    assert ctx.failing_total == len(ctx.failing) + 1
    html = write_report(project, "s", tmp_path / "r.html").read_text(encoding="utf-8")
    for secret in (FROZEN_ID, "77.25", "o77", "FROZEN-FACT", "FROZEN-RUBRIC"):
        assert secret not in html
    assert "1 of them frozen: counted, never shown." in html
    # A local reviewer may ask for the ids, never the content.
    local = write_report(project, "s", tmp_path / "l.html", show_frozen=True).read_text("utf-8")
    assert FROZEN_ID in local and "77.25" not in local and "o77" not in local


def test_old_run_logs_without_the_flag_are_still_redacted_from_the_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path, monkeypatch)
    run_agent(
        project, RunRequest(dataset="refunds", agent=SLOPPY, k=1, use_judge=False, run_id="s")
    )
    log = project.root / "runs" / "s.jsonl"
    log.write_text(log.read_text().replace('"frozen":true', '"frozen":false'))
    assert '"frozen":true' not in log.read_text()
    html = write_report(project, str(log), tmp_path / "r.html").read_text(encoding="utf-8")
    assert FROZEN_ID not in html and "77.25" not in html
    # Without the dataset to ask, the pure renderer shows what the log says: hence the lookup.
    assert FROZEN_ID in render_report(ReportData(run_results(load_run(project, str(log)))))


def _judge() -> tuple[Judge, FakeLLM]:
    llm = FakeLLM(
        lambda prompt: (
            {"outcome": "resolve", "reason": "r"}
            if "outcome" in prompt.lower()
            else {"facts": [{"index": 0, "present": True, "reason": "r"}]}
        )
    )
    return Judge(llm, {}), llm


@pytest.mark.parametrize("private", [False, True])
def test_a_judge_reads_frozen_cases_only_when_it_is_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, private: bool
) -> None:
    public = '[models.judge]\nprovider = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:9"\n'
    config = public + ("private = true\n" if private else "")
    project = _project(tmp_path, monkeypatch, config)
    judge, llm = _judge()
    run_agent(
        project,
        RunRequest(dataset="refunds", agent=SLOPPY, k=1, use_judge=True, run_id="j"),
        judge=judge,
    )
    sent = "\n".join(llm.prompts)
    assert ("FROZEN-FACT" in sent) is private
    frozen = next(t for t in load_run(project, "j").trials if t.case_id == FROZEN_ID)
    facts = next(c for c in frozen.verdict.checks if c.name == "answer_facts")
    if private:
        assert facts.judged
    else:
        assert facts.status == "undetermined" and not facts.judged
        assert facts.evidence.startswith(
            "needs a judge; frozen case: the judge is not marked private"
        )
