"""`dataset apply`: all decided work of a dataset as one version, each kind as its old command."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from casework.dataset import load_dataset, read_versions, release
from casework.errors import UsageError
from casework.labelling import adjudicate, release_labels
from casework.leakage import decide, list_flags, resolve, scan_dataset
from casework.project import Project, load_project
from casework.review import (
    DISAGREEMENT,
    LEAKAGE_PAIR,
    add_items,
    apply_decisions,
    decide_task,
    generated_case_item,
    get_task,
    list_tasks,
    sync_review,
)
from casework.schema import Case
from tests.labelling.builders import draft
from tests.review.test_disagreement import NOW, contested


@pytest.fixture(autouse=True)
def own_workbench(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)


def versions(project: Project) -> list[Any]:
    return read_versions(project.dataset_dir("refunds"), "versions.jsonl")


def files(project: Project) -> dict[str, str]:
    folder = project.dataset_dir("refunds")
    return {n: (folder / n).read_text() for n in ("cases.jsonl", "labels.jsonl")}


def with_holdout(root: Path) -> Project:
    """The contested project with a-3 in holdout and its near-duplicates flagged."""
    project = contested(root)
    cases = [
        c.model_copy(update={"split": "holdout"}) if c.id == "a-3" else c
        for c in load_dataset(project, "refunds").cases
    ]
    release(project, "refunds", cases, "a-3 to holdout")
    scan_dataset(project, "refunds", threshold=0.3)
    return project


def _task(project: Project, kind: str, subject: str) -> int:
    return next(t.id for t in list_tasks(project, kind=kind) if t.subject == subject)


def generated() -> Case:
    return Case.model_validate(draft("g-1") | {"label": None})


def test_labels_alone_equal_label_release(tmp_path: Path) -> None:
    old, new = contested(tmp_path / "old"), contested(tmp_path / "new")
    adjudicate(old, "refunds", "b-4", adjudicator="adj-1", choice="B", now=NOW)
    before = release_labels(old, "refunds", "labels")
    sync_review(new, "refunds")
    decide_task(new, _task(new, DISAGREEMENT, "b-4"), "B", reviewer="adj-1", now=NOW)
    after = apply_decisions(new, "refunds", message="labels")
    assert before.record is not None and after.record is not None
    assert after.record.hash == before.record.hash
    assert files(new) == files(old)
    assert (after.labelled, after.adjudicated, after.raw_labels) == (
        before.labelled,
        before.adjudicated,
        before.raw_labels,
    )
    assert after.labelled == 7 and after.adjudicated == 1
    assert list(after.record.changes) == list(before.record.changes)


def test_leakage_alone_equals_leakage_resolve(tmp_path: Path) -> None:
    old, new = with_holdout(tmp_path / "old"), with_holdout(tmp_path / "new")
    # Labels decided before the scan would join the version too: release them first on both.
    for p in (old, new):
        release_labels(p, "refunds", "labels")
    flag = next(f for f in list_flags(old, "refunds") if (f.left_id, f.right_id) == ("a-1", "a-3"))
    decide(old, "refunds", flag.id, "move", move_id="a-3", reviewer="rev-1", now=NOW)
    before = resolve(old, "refunds", message="leakage", now=NOW)
    sync_review(new, "refunds")
    item = _task(new, LEAKAGE_PAIR, "a-1~a-3")
    decide_task(new, item, "move-right", reviewer="rev-1", now=NOW)
    after = apply_decisions(new, "refunds", message="leakage", now=NOW)
    assert before.version is not None and after.record is not None
    assert after.record.hash == before.version.hash
    assert files(new) == files(old)
    assert (list(after.moved), after.superseded) == (before.moved, before.superseded)
    assert after.superseded == 3
    settled = [(f.status, f.resolved_version) for f in list_flags(new, "refunds", everything=True)]
    assert settled == [
        (f.status, f.resolved_version) for f in list_flags(old, "refunds", everything=True)
    ]
    # the queue no longer offers the pairs that stopped crossing splits
    assert {t.status for t in list_tasks(new, kind=LEAKAGE_PAIR)} == {"decided", "withdrawn"}


def test_generated_cases_alone_equal_a_release_of_the_working_tree(tmp_path: Path) -> None:
    old, new = contested(tmp_path / "old"), contested(tmp_path / "new")
    for p in (old, new):
        release_labels(p, "refunds", "labels")
        add_items(p, [generated_case_item("refunds", generated(), source="gen-1")])
        gen = _task(p, "generated-case", "g-1")
        decide_task(p, gen, "accept", reviewer="rev-1", now=NOW)
    before = release(old, "refunds", load_dataset(old, "refunds").cases, "cases")
    after = apply_decisions(new, "refunds", message="cases")
    assert before is not None and after.record is not None
    assert after.record.hash == before.hash
    assert after.generated == ("g-1",)
    assert list(after.record.changes) == ["added 1 generated case accepted in review: g-1"]


def test_all_kinds_together_make_one_version(tmp_path: Path) -> None:
    project = with_holdout(tmp_path / "p")
    add_items(project, [generated_case_item("refunds", generated(), source="gen-1")])
    sync_review(project, "refunds")
    decide_task(project, _task(project, "generated-case", "g-1"), "accept", reviewer="rev-1")
    decide_task(project, _task(project, DISAGREEMENT, "b-4"), "A", reviewer="adj-1")
    decide_task(project, _task(project, LEAKAGE_PAIR, "a-1~a-3"), "move-right", reviewer="rev-1")
    count = len(versions(project))
    report = apply_decisions(project, "refunds", message="week 48")
    assert report.record is not None and len(versions(project)) == count + 1
    assert report.generated == ("g-1",) and report.adjudicated == 1 and report.moved == ("a-3",)
    cases = {c.id: c for c in load_dataset(project, "refunds").cases}
    assert cases["a-3"].split == "dev" and "g-1" in cases
    assert cases["b-4"].label is not None and cases["b-4"].label.outcome == "resolve"
    assert list(report.record.changes) == [
        "added 1 generated case accepted in review: g-1",
        "labelled 7 cases",
        "1 case decided by adjudication",
        "added 1 raw label to labels.jsonl",
        "leakage: moved 1 row from holdout to dev (near-duplicates across splits): a-3",
    ]
    again = apply_decisions(project, "refunds", message="again")
    assert again.record is None and not again.applied
    assert len(versions(project)) == count + 1


def test_nothing_decided_is_a_no_op_and_hand_edits_are_refused(tmp_path: Path) -> None:
    project = contested(tmp_path / "p")
    release_labels(project, "refunds", "labels")
    count = len(versions(project))
    report = apply_decisions(project, "refunds", message="nothing")
    assert report.record is None and not report.applied and len(versions(project)) == count
    with pytest.raises(UsageError, match="a message is required"):
        apply_decisions(project, "refunds", message=" ")
    path = project.dataset_dir("refunds") / "cases.jsonl"
    path.write_text(path.read_text().replace("arrived broken", "arrived late"))
    with pytest.raises(UsageError, match="differs from the latest release by more than"):
        apply_decisions(project, "refunds", message="edits")


def test_apply_cmd_prints_per_kind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from casework.cli.review import apply_cmd

    project = contested(tmp_path / "p")
    monkeypatch.chdir(project.root)
    sync_review(project, "refunds")
    decide_task(project, _task(project, DISAGREEMENT, "b-4"), "B", reviewer="adj-1")
    shown = CliRunner().invoke(apply_cmd, ["refunds", "-m", "labels"])
    assert shown.exit_code == 0, shown.output
    assert "refunds@2 released" in shown.stdout
    assert "labels: 7 labelled, 0 relabelled, 1 by adjudication" in shown.stdout
    assert "leakage-pair: 0 moved" in shown.stdout and "generated-case: 0 released" in shown.stdout
    again = CliRunner().invoke(apply_cmd, ["refunds", "-m", "again", "--format", "json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["version"] is None
    assert get_task(load_project(project.root), 1).status == "decided"
