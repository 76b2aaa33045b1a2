"""Adjudication sheets through the review queue: `review export|import --kind disagreement`.

The queue's sheets are the adjudication sheets `adjudicate export|import` (the old spelling)
wrote and read, so an adjudicator's returned sheet lands the same labels either way; a label
sheet is not a review decision and is refused, located, with nothing stored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from casework.cli._moved import note_text
from casework.project import Project
from casework.review import DISAGREEMENT, list_tasks
from tests.review.test_disagreement import adjudications, contested, run

#: The adjudicator's answers, by case: a final label for each disagreement (b-4, a-1).
ANSWERS: dict[str, dict[str, Any]] = {
    "a-1": {
        "outcome": "escalate",
        "required": {"escalate_to_human": True},
        "forbidden": {"issue_refund": True},
    },
    "b-4": {"outcome": "resolve", "answer_facts": ["the refund is issued"]},
}


def _assigned(root: Path) -> Project:
    project = contested(root)
    assigned = run(root, "label", "assign", "refunds", "--labellers", "lab-alice,lab-bob,adj-1")
    assert assigned.exit_code == 0, assigned.output
    assert "adj-1: 2 adjudicator" in assigned.stdout
    return project


def _fill(sheet: Path) -> None:
    """Answer every line of an adjudication sheet as the adjudicator would."""
    lines = [json.loads(line) for line in sheet.read_text().splitlines()]
    assert sorted(line["case_id"] for line in lines) == sorted(ANSWERS)
    for line in lines:
        answer = ANSWERS[line["case_id"]]
        line["outcome"] = answer["outcome"]
        line["required"].update(answer.get("required", {}))
        line["forbidden"].update(answer.get("forbidden", {}))
        line["answer_facts"] = answer.get("answer_facts", [])
    sheet.write_text("".join(json.dumps(line) + "\n" for line in lines))


def _unsigned(sheet: Path) -> list[dict[str, Any]]:
    """A sheet's lines less their signatures (each project signs with its own key)."""
    lines = [json.loads(line) for line in sheet.read_text().splitlines()]
    assert all(line.pop("signature") for line in lines)
    return lines


def _stored(project: Project) -> list[dict[str, Any]]:
    """The stored adjudications, less the time of import (each import stamps its own)."""
    rows = [{k: v for k, v in r.items() if k != "labelled_at"} for r in adjudications(project)]
    return sorted(rows, key=lambda r: r["case_id"])


def test_review_export_and_import_store_what_adjudicate_export_and_import_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    old, new = _assigned(tmp_path / "old"), _assigned(tmp_path / "new")

    monkeypatch.chdir(old.root)
    exported = run(old.root, "adjudicate", "export", "refunds", "--out", "sheets")
    assert exported.exit_code == 0, exported.output
    old_sheet = old.root / "sheets" / "refunds.adj-1.adjudication.jsonl"
    unanswered = _unsigned(old_sheet)
    _fill(old_sheet)
    imported = run(old.root, "adjudicate", "import", str(old_sheet))
    assert imported.exit_code == 0, imported.output
    assert imported.stderr == note_text("adjudicate import", "review import") + "\n"

    monkeypatch.chdir(new.root)
    assert run(new.root, "review", "sync", "refunds").exit_code == 0
    exported = run(
        new.root,
        *("review", "export", "--kind", "disagreement", "--dataset", "refunds", "--out", "sheets"),
    )
    assert exported.exit_code == 0, exported.output
    written = sorted(p.name for p in (new.root / "sheets").iterdir())
    assert written == ["refunds.adj-1.adjudication.csv", "refunds.adj-1.adjudication.jsonl"]
    new_sheet = new.root / "sheets" / "refunds.adj-1.adjudication.jsonl"
    assert _unsigned(new_sheet) == unanswered  # the sheet `adjudicate export` wrote
    _fill(new_sheet)
    imported = run(new.root, "review", "import", *map(str, (new.root / "sheets").glob("*.jsonl")))
    assert imported.exit_code == 0, imported.output
    assert imported.stdout.startswith("disagreement: 2 adjudications stored from 1 sheet(s)")

    assert _stored(new) == _stored(old)
    assert [(r["case_id"], r["labeller"], r["outcome"]) for r in _stored(new)] == [
        ("a-1", "adj-1", "escalate"),
        ("b-4", "adj-1", "resolve"),
    ]
    # the landed adjudications settle the queue's disagreement items
    assert [t.status for t in list_tasks(new, kind=DISAGREEMENT)] == ["withdrawn", "withdrawn"]


def test_review_import_refuses_a_label_sheet_located_and_stores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    project = _assigned(tmp_path / "proj")
    monkeypatch.chdir(project.root)
    exported = run(
        project.root,
        *("review", "export", "--kind", "disagreement", "--dataset", "refunds", "--out", "sheets"),
    )
    assert exported.exit_code == 0, exported.output
    sheet = project.root / "sheets" / "refunds.adj-1.adjudication.jsonl"
    _fill(sheet)
    label_sheet = project.root / "sheets" / "refunds.lab-alice.labels.jsonl"
    line = json.loads(sheet.read_text().splitlines()[0])
    line.update(sheet="label", labeller="lab-alice")
    label_sheet.write_text(json.dumps(line) + "\n")

    refused = run(project.root, "review", "import", str(sheet), str(label_sheet))
    assert refused.exit_code == 1
    assert refused.stderr == (
        "sheets/refunds.lab-alice.labels.jsonl:1: sheet: a label sheet is labelling, not a review "
        "decision (`label import` stores it). Got 'label'.\n"
    )
    assert adjudications(project) == []  # the good sheet beside it is not stored either
