"""The ``judge-verdict`` kind: sampled verdicts are review items, answered in the queue or on sheets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import select

from casework.cli import cli
from casework.errors import InputErrors, UsageError
from casework.project import Project, load_project
from casework.review import (
    JUDGE_VERDICT,
    decide_task,
    export_review_sheets,
    import_review_sheets,
    import_verdicts,
    list_tasks,
    sample_verdicts,
)
from casework.review._queue import sync_judge_verdicts
from casework.workbench import open_workbench
from casework.workbench.models_judge import ReviewVerdictRow
from casework.workbench.models_review import ReviewTaskRow
from tests.review import builders


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    folder = builders.make(tmp_path / "proj")
    monkeypatch.chdir(folder)
    builders.run(folder, seed=0)
    return load_project(folder)


def sample(project: Project, out: Path) -> None:
    sample_verdicts(
        project, ["run-judge-1-0"], n=6, reviewers=["rev-a", "rev-b"], out=out, overlap=0.5
    )


def answers(project: Project) -> dict[tuple[str, str], str]:
    with open_workbench(project) as wb, wb.session() as s:
        rows = s.scalars(select(ReviewVerdictRow))
        return {(r.item_key, r.reviewer): r.answer for r in rows}


def run(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--project", str(root), *args])


def test_sampled_verdicts_are_items_per_reviewer_and_blind(
    project: Project, tmp_path: Path
) -> None:
    sample(project, tmp_path / "sheets")
    tasks = list_tasks(project, kind=JUDGE_VERDICT)
    assert len(tasks) == 6 + 3  # three of six items go to two people
    assert {t.payload["reviewer"] for t in tasks} == {"rev-a", "rev-b"}
    shown = json.dumps([t.as_json() for t in tasks])
    for secret in (builders.REASON, "PROVENANCE-MARK", "TRACE-MARK", "r-1", '"judge_pass"'):
        assert secret not in shown
    assert all(t.subject == f"{t.payload['item']}/{t.payload['reviewer']}" for t in tasks)
    assert sync_judge_verdicts(project, "refunds").created == ()  # already queued


def test_a_queue_answer_is_stored_as_a_sheet_answer(project: Project, tmp_path: Path) -> None:
    sample(project, tmp_path / "sheets")
    task = list_tasks(project, kind=JUDGE_VERDICT)[0]
    answer = "yes" if task.payload["kind"] == "answer_fact" else "resolve"
    wrong = "resolve" if answer == "yes" else "yes"
    with pytest.raises(UsageError, match="item takes"):
        decide_task(project, task.id, wrong, reviewer=task.payload["reviewer"])
    other = "rev-b" if task.payload["reviewer"] == "rev-a" else "rev-a"
    with pytest.raises(UsageError, match="each reviewer answers their own"):
        decide_task(project, task.id, answer, reviewer=other)
    assert answers(project) == {}
    decide_task(project, task.id, answer, reviewer=task.payload["reviewer"])
    stored = answers(project)
    assert list(stored.values()) == [answer]
    assert next(iter(stored))[1] == task.payload["reviewer"]


def test_sheets_are_reissued_signed_and_imported_through_review(
    project: Project, tmp_path: Path
) -> None:
    sample(project, tmp_path / "drawn")
    # items drawn before the queue knew the kind: rebuilt from the run by the sync
    with open_workbench(project) as wb, wb.session() as s:
        for row in s.scalars(select(ReviewTaskRow)):
            s.delete(row)
    assert sync_judge_verdicts(project, "refunds").created != ()
    written = export_review_sheets(project, JUDGE_VERDICT, tmp_path / "again")
    assert sorted(written) == ["rev-a", "rev-b"]
    path = written["rev-a"][0]
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    for line in lines:
        line["answer"] = "yes" if line["kind"] == "answer_fact" else "resolve"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    report = import_review_sheets(project, [path])
    assert report.verdicts is not None and report.verdicts.stored == len(lines)
    assert report.adjudications is None
    open_a = [
        t
        for t in list_tasks(project, kind=JUDGE_VERDICT, status="open")
        if t.payload["reviewer"] == "rev-a"
    ]
    assert open_a == []  # answered on the sheet: decided in the queue too
    # the re-issued sheet and `judge sample`'s own sheet sign alike
    drawn = import_verdicts(project, [tmp_path / "drawn" / "verdicts-rev-b.jsonl"])
    assert drawn.stored == 0 and drawn.unanswered > 0


def test_import_tells_kinds_apart_and_refuses_label_sheets(
    project: Project, tmp_path: Path
) -> None:
    label = tmp_path / "refunds.lab-1.labels.jsonl"
    label.write_text(json.dumps({"sheet": "label", "dataset": "refunds"}) + "\n")
    odd = tmp_path / "odd.jsonl"
    odd.write_text(json.dumps({"sheet": "menu"}) + "\n")
    with pytest.raises(InputErrors) as caught:
        import_review_sheets(project, [label, odd])
    text = caught.value.render()
    assert "a label sheet is labelling, not a review decision" in text
    assert (
        "odd.jsonl:1: sheet: must be adjudication or verdict (the sheet's kind). Got 'menu'."
        in text
    )


def test_cli_lists_shows_and_decides_a_verdict(project: Project, tmp_path: Path) -> None:
    sample(project, tmp_path / "sheets")
    listed = run(project.root, "review", "list", "--kind", "judge-verdict", "--format", "json")
    assert listed.exit_code == 0, listed.output
    first = json.loads(listed.stdout)[0]
    shown = run(project.root, "review", "show", str(first["id"]))
    assert shown.exit_code == 0, shown.output
    assert "reply:" in shown.stdout and builders.REASON not in shown.stdout
    answer = "no" if first["payload"]["kind"] == "answer_fact" else "refuse"
    decided = run(
        project.root,
        "review",
        "decide",
        str(first["id"]),
        answer,
        "--reviewer",
        first["payload"]["reviewer"],
    )
    assert decided.exit_code == 0, decided.output
    assert list(answers(project).values()) == [answer]
    out = run(
        project.root, "review", "export", "--kind", "judge-verdict", "--out", str(tmp_path / "x")
    )
    assert out.exit_code == 0, out.output
    assert "verdicts-rev-a.jsonl" in out.stdout
