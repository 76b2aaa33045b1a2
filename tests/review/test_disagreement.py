"""The ``disagreement`` kind: the adjudication queue's items, decided as `adjudicate decide` does."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from casework.dataset import load_dataset, release
from casework.errors import UsageError
from casework.labelling import FinalLabel, adjudicate, list_gaps
from casework.labelling.store import load_work
from casework.project import Project, load_project
from casework.review import DISAGREEMENT, decide_task, get_task, list_tasks, sync_review
from casework.review._queue import sync_disagreements
from casework.schema import LabelRecord
from casework.workbench import open_workbench
from tests.factories import write_lines
from tests.labelling.builders import draft, make_project

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
VERSIONS = {"refunds": "refunds-g7", "status": "status-g1"}
# (case, slice, first label, second label): kappa 7/11 on refunds, 1/2 on status.
ROWS = [
    ("a-1", "refunds", "resolve", "escalate"),
    ("a-2", "refunds", "clarify", "clarify"),
    ("a-3", "refunds", "resolve", "resolve"),
    ("a-4", "refunds", "escalate", "escalate"),
    ("b-1", "status", "resolve", "resolve"),
    ("b-2", "status", "resolve", "resolve"),
    ("b-3", "status", "escalate", "escalate"),
    ("b-4", "status", "resolve", "escalate"),
]


def _label(case_id: str, slice_name: str, who: str, role: str, outcome: str) -> LabelRecord:
    return LabelRecord(
        case_id=case_id,
        labeller=who,
        role=role,
        overlap_reason="calibration" if role == "second" else None,
        outcome=outcome,
        guideline_version=VERSIONS[slice_name],
        labelled_at=NOW + timedelta(minutes=1 if role == "second" else 0),
    )


def contested(root: Path) -> Project:
    """Two slices of released raw labels with two disagreements (b-4, a-1) and no adjudicator."""
    make_project(root)
    write_lines(
        root / "datasets" / "refunds" / "cases.jsonl",
        [draft(case_id, slice=slice_name) for case_id, slice_name, _, _ in ROWS],
    )
    project = load_project(root)
    labels = [
        record
        for case_id, slice_name, first, second in ROWS
        for record in (
            _label(case_id, slice_name, "lab-alice", "first", first),
            _label(case_id, slice_name, "lab-bob", "second", second),
        )
    ]
    release(project, "refunds", load_dataset(project, "refunds").cases, "labels", labels=labels)
    return project


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    found = contested(tmp_path / "proj")
    monkeypatch.chdir(found.root)
    return found


def adjudications(project: Project) -> list[dict[str, Any]]:
    """The adjudicators' raw labels stored in the workbench."""
    with open_workbench(project) as wb, wb.session() as session:
        work = load_work(session, "refunds")
    return [r.model_dump(mode="json") for r in work.labels if r.role == "adjudicator"]


def run(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--project", str(root), *args])


def _item(project: Project, case_id: str) -> int:
    return next(t.id for t in list_tasks(project, kind=DISAGREEMENT) if t.subject == case_id)


def test_items_are_the_open_disagreements_lowest_agreement_first_and_blind(
    project: Project,
) -> None:
    report = sync_disagreements(project, "refunds")
    assert len(report.created) == 2
    tasks = list_tasks(project, kind=DISAGREEMENT)
    assert [t.subject for t in tasks] == ["b-4", "a-1"]  # status kappa 1/2 < refunds 7/11
    assert [t.payload["slice_kappa"] for t in tasks] == pytest.approx([0.5, 7 / 11])
    b4 = tasks[0].payload
    assert [(x["name"], x["outcome"]) for x in b4["labels"]] == [
        ("A", "resolve"),
        ("B", "escalate"),
    ]
    assert b4["differs"] == ["outcome"]
    shown = json.dumps([t.as_json() for t in tasks])
    assert "lab-alice" not in shown and "lab-bob" not in shown
    listed = run(project.root, "review", "list", "--kind", "disagreement", "--format", "json")
    assert listed.exit_code == 0, listed.output
    assert [t["subject"] for t in json.loads(listed.stdout)] == ["b-4", "a-1"]
    assert "lab-alice" not in listed.stdout
    again = sync_disagreements(project, "refunds")
    assert again.created == () and len(again.existing) == 2


@pytest.mark.parametrize(
    ("choice", "extra", "data"),
    [
        ("A", {}, None),
        ("B", {}, None),
        ("merge", {"fields": {"outcome": "B"}}, {"fields": {"outcome": "B"}}),
        (
            "write",
            {"label": FinalLabel("refuse", ("get_order",), (), ("no refund",))},
            {
                "label": {
                    "outcome": "refuse",
                    "required_tools": ["get_order"],
                    "forbidden_tools": [],
                    "answer_facts": ["no refund"],
                }
            },
        ),
    ],
)
def test_queue_decision_stores_what_adjudicate_stores(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    choice: str,
    extra: dict[str, Any],
    data: dict[str, Any] | None,
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    old, new = contested(tmp_path / "old"), contested(tmp_path / "new")
    adjudicate(old, "refunds", "b-4", adjudicator="adj-1", choice=choice, now=NOW, **extra)  # type: ignore[arg-type]
    sync_disagreements(new, "refunds")
    decided = decide_task(
        new, _item(new, "b-4"), choice, reviewer="adj-1", data=data, seconds=None, now=NOW
    )
    assert decided.status == "decided" and decided.reviewer == "adj-1"
    assert adjudications(new) == adjudications(old) and len(adjudications(new)) == 1


def test_the_rules_of_adjudication_hold_and_a_refused_decision_leaves_the_item_open(
    project: Project,
) -> None:
    sync_disagreements(project, "refunds")
    b4 = _item(project, "b-4")
    with pytest.raises(UsageError, match="lab-alice labelled case 'b-4'"):
        decide_task(project, b4, "A", reviewer="lab-alice")
    with pytest.raises(UsageError, match=r"the labels differ on outcome: .*missing: outcome"):
        decide_task(project, b4, "merge", reviewer="adj-1", data={"fields": {}})
    with pytest.raises(UsageError, match="only a merge"):
        decide_task(project, b4, "A", reviewer="adj-1", data={"fields": {"outcome": "A"}})
    assert get_task(project, b4).status == "open"
    assert adjudications(project) == []
    decide_task(project, b4, "B", reviewer="adj-1", data={"gap_note": "damaged vs late"})
    assert [g.note for g in list_gaps(project)] == ["damaged vs late"]


def test_a_disagreement_decided_elsewhere_is_withdrawn_on_sync(project: Project) -> None:
    sync_review(project, "refunds")
    adjudicate(project, "refunds", "a-1", adjudicator="adj-2", choice="A")
    report = sync_disagreements(project, "refunds")
    assert report.withdrawn == (_item_any(project, "a-1"),)
    assert get_task(project, report.withdrawn[0]).status == "withdrawn"


def _item_any(project: Project, case_id: str) -> int:
    return next(t.id for t in list_tasks(project) if t.subject == case_id)


def test_cli_decides_with_pick_merge_and_outcome(project: Project) -> None:
    assert run(project.root, "review", "sync", "refunds").exit_code == 0
    b4, a1 = _item(project, "b-4"), _item(project, "a-1")
    shown = run(project.root, "review", "show", str(b4))
    assert shown.exit_code == 0, shown.output
    assert "A: resolve" in shown.stdout and "B: escalate" in shown.stdout
    assert "lab-alice" not in shown.stdout and "--pick A|B" in shown.stdout
    both = run(
        project.root,
        "review",
        "decide",
        str(b4),
        "--pick",
        "A",
        "--merge",
        "outcome=B",
        "--by",
        "adj-1",
    )
    assert both.exit_code == 2
    assert "give one of DECISION, --pick A|B, --merge FIELD=A|B or --outcome" in both.stderr
    picked = run(project.root, "review", "decide", str(b4), "--merge", "outcome=b", "--by", "adj-1")
    assert picked.exit_code == 0, picked.output
    assert "casework dataset apply refunds" in picked.stdout
    wrote = run(
        project.root,
        "review",
        "decide",
        str(a1),
        "--outcome",
        "clarify",
        "--fact",
        "asks for the order",
        "--by",
        "adj-1",
        "--format",
        "json",
    )
    assert wrote.exit_code == 0, wrote.output
    assert json.loads(wrote.stdout)["data"]["label"]["outcome"] == "clarify"
    finals = {r["case_id"]: r["outcome"] for r in adjudications(project)}
    assert finals == {"b-4": "escalate", "a-1": "clarify"}


def test_review_list_reveals_names_as_adjudicate_queue_does(project: Project) -> None:
    assert run(project.root, "review", "sync", "refunds").exit_code == 0
    old = run(project.root, "adjudicate", "queue", "refunds", "--reveal-names", "--format", "json")
    assert old.exit_code == 0, old.output
    expected = {e["case_id"]: e["names"] for e in json.loads(old.stdout)["entries"]}
    assert expected == {
        "b-4": {"A": "lab-alice", "B": "lab-bob"},
        "a-1": {"A": "lab-alice", "B": "lab-bob"},
    }
    args = ["review", "list", "--kind", "disagreement"]
    listed = run(project.root, *args, "--reveal-names", "--format", "json")
    assert listed.exit_code == 0, listed.output
    assert {t["subject"]: t["names"] for t in json.loads(listed.stdout)} == expected
    assert "lab-" in run(project.root, *args, "--reveal-names").stdout  # a narrow table
    assert "lab-" not in run(project.root, *args).stdout
    blind = run(project.root, *args, "--format", "json")
    assert "lab-alice" not in blind.stdout and '"names"' not in blind.stdout
    mixed = run(project.root, "review", "list", "--reveal-names")
    assert mixed.exit_code == 2
    assert "--reveal-names shows labellers: give --kind disagreement too." in mixed.stderr
