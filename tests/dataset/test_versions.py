from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from casework.dataset import diff_cases, load_dataset, read_versions, release
from casework.errors import InputErrors, UsageError, VersionNotFound
from casework.project import load_project
from casework.schema import Case
from tests.factories import case_dict, git_commit

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def test_first_release_records_hash_counts_and_is_idempotent(project_dir: Path) -> None:
    project = load_project(project_dir)
    ds = load_dataset(project, "refunds")
    record = release(project, "refunds", ds.cases, "first", now=NOW)
    assert record is not None
    assert record.number == 1 and record.parent is None
    assert record.hash == load_dataset(project, "refunds").hash
    assert record.counts.cases == 3
    assert record.counts.by_slice == {"refunds": 2, "status": 1}
    assert record.counts.by_split == {"dev": 2, "holdout": 1}
    assert record.counts.by_outcome == {"resolve": 3}
    assert record.guideline_versions == ["refunds-g7"]
    assert record.changes == ["first release: 3 cases"]
    assert release(project, "refunds", ds.cases, "again", now=NOW) is None
    assert len(read_versions(project.dataset_dir("refunds"), "v")) == 1
    # the file is canonical after release: sorted ids
    ids = [
        json.loads(line)["id"]
        for line in (project.dataset_dir("refunds") / "cases.jsonl").read_text().splitlines()
    ]
    assert ids == ["r-1", "r-2", "r-3"]


def test_second_release_has_parent_and_changelog(project_dir: Path) -> None:
    project = load_project(project_dir)
    cases = load_dataset(project, "refunds").cases
    first = release(project, "refunds", cases, "first", now=NOW)
    assert first is not None
    kept = [
        c.model_copy(update={"split": "dev"}) if c.id == "r-1" else c
        for c in cases
        if c.id != "r-3"
    ]
    second = release(
        project, "refunds", [*kept, Case.model_validate(case_dict("r-4"))], "second", now=NOW
    )
    assert second is not None
    assert second.parent == first.hash and second.number == 2
    assert second.changes == ["added 1 case", "removed 1 case", "moved split of 1 case"]


def test_old_version_materialises_from_cache_then_git(project_dir: Path) -> None:
    project = load_project(project_dir)
    cases = load_dataset(project, "refunds").cases
    first = release(project, "refunds", cases, "first", now=NOW)
    assert first is not None
    git_commit(project_dir)
    release(project, "refunds", cases[:2], "drop one", now=NOW)
    old = load_dataset(project, "refunds@1")
    assert old.hash == first.hash and len(old.cases) == 3
    assert load_dataset(project, f"refunds@{first.hash[:8]}").hash == first.hash
    shutil.rmtree(project_dir / ".casework")  # no cache: git history still has it
    assert load_dataset(project, "refunds@1").hash == first.hash


def test_unrecoverable_version_says_why(project_dir: Path) -> None:
    project = load_project(project_dir)
    cases = load_dataset(project, "refunds").cases
    release(project, "refunds", cases, "first", now=NOW)
    release(project, "refunds", cases[:1], "second", now=NOW)
    shutil.rmtree(project_dir / ".casework")
    with pytest.raises(VersionNotFound) as info:
        load_dataset(project, "refunds@1")
    assert "is in the release log, but its content is not in the working tree" in str(info.value)


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("refunds@9", "refunds@9: no release number 9; releases are 1 to 1."),
        ("refunds@abcdef0", "refunds@abcdef0: no release has a hash starting with 'abcdef0'."),
        (
            "refunds@v1!",
            "refunds@v1!: not a version: use a release number, a hash prefix (4+ hex digits) or 'latest'.",
        ),
    ],
)
def test_unknown_version(project_dir: Path, ref: str, message: str) -> None:
    project = load_project(project_dir)
    release(project, "refunds", load_dataset(project, "refunds").cases, "first", now=NOW)
    with pytest.raises(VersionNotFound) as info:
        load_dataset(project, ref)
    assert str(info.value) == message


def test_release_refuses_empty_message_and_changes_nothing(project_dir: Path) -> None:
    project = load_project(project_dir)
    before = (project_dir / "datasets" / "refunds" / "cases.jsonl").read_bytes()
    with pytest.raises(UsageError):
        release(project, "refunds", load_dataset(project, "refunds").cases, "  ")
    assert (project_dir / "datasets" / "refunds" / "cases.jsonl").read_bytes() == before
    assert not (project_dir / "datasets" / "refunds" / "versions.jsonl").exists()


def test_release_refuses_duplicate_ids_before_writing(project_dir: Path) -> None:
    project = load_project(project_dir)
    cases = load_dataset(project, "refunds").cases
    before = (project_dir / "datasets" / "refunds" / "cases.jsonl").read_bytes()
    with pytest.raises(InputErrors):
        release(project, "refunds", [*cases, cases[0]], "dup")
    assert (project_dir / "datasets" / "refunds" / "cases.jsonl").read_bytes() == before


def test_diff_reports_relabel_move_and_fields() -> None:
    a = [Case.model_validate(case_dict("x")), Case.model_validate(case_dict("y"))]
    b = [
        Case.model_validate(case_dict("x", split="holdout")),
        Case.model_validate(case_dict("y", label={"outcome": "clarify"})),
        Case.model_validate(case_dict("z")),
    ]
    diff = diff_cases(a, b)
    assert diff.added == ["z"] and diff.removed == []
    assert [(c.id, c.fields, c.relabelled, c.moved) for c in diff.changed] == [
        ("x", ["split"], False, True),
        ("y", ["label.guideline_version", "label.outcome", "label.required_tools"], True, False),
    ]
    assert diff.summary_lines() == ["added 1 case", "relabelled 1 case", "moved split of 1 case"]


def test_release_refuses_labels_naming_no_case(project_dir: Path) -> None:
    from casework.schema import LabelRecord

    project = load_project(project_dir)
    stray = LabelRecord(
        case_id="nope", labeller="lab-1", role="first", outcome="resolve",
        guideline_version="refunds-g7", labelled_at=NOW,
    )  # fmt: skip
    with pytest.raises(InputErrors) as info:
        release(project, "refunds", load_dataset(project, "refunds").cases, "x", labels=[stray])
    assert str(info.value) == (
        "datasets/refunds/labels.jsonl:1: case_id: no case with this id. Got 'nope'."
    )
    assert not (project_dir / "datasets" / "refunds" / "versions.jsonl").exists()
