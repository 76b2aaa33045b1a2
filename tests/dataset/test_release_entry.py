"""`casework.dataset.release` is the one entry point: its input picks the path, its rules are checked.

``cases=None`` releases the working tree (with ``without``: less some cases), and must write
exactly what releasing the same content as models writes; parameters that belong to the other
form are refused by name before anything is read or written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from casework.dataset import load_dataset, read_versions, release
from casework.dataset.versions import files_hash
from casework.errors import UsageError
from casework.project import Project
from tests.dataset.test_line_store import _case, _label, _project, _write

NAME = "d"


def _released_tree(root: Path) -> Project:
    project = _project(root)
    cases = [_case(i) for i in range(10)]
    _write(project, cases, [_label(c["id"], "l0") for c in cases[:6]], hand=False)
    assert release(project, NAME, None, "first") is not None
    return project


def _files(project: Project) -> dict[str, bytes]:
    folder = project.dataset_dir(NAME)
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize(
    ("kwargs", "param", "message"),
    [
        (
            {"labels": []},
            "labels",
            "labels: given only with `cases`: a working tree's release takes its own.",
        ),
        (
            {"base": "0" * 64},
            "base",
            "base: given only with `cases`: a working tree's release takes its own.",
        ),
    ],
)
def test_a_working_tree_release_refuses_what_goes_with_cases(
    tmp_path: Path, kwargs: dict[str, object], param: str, message: str
) -> None:
    project = _released_tree(tmp_path / "p")
    before = _files(project)
    with pytest.raises(UsageError) as exc:
        release(project, NAME, None, "again", **kwargs)  # type: ignore[arg-type]
    assert exc.value.param == param
    assert str(exc.value) == message
    assert _files(project) == before


def test_without_goes_with_the_working_tree_only(tmp_path: Path) -> None:
    project = _released_tree(tmp_path / "p")
    before = _files(project)
    cases = load_dataset(project, NAME).cases
    with pytest.raises(UsageError) as exc:
        release(project, NAME, cases, "drop", without={"c-001"})
    assert exc.value.param == "without"
    assert str(exc.value) == (
        "without: given only when `cases` is None (the working tree): leave them out of `cases`."
    )
    assert _files(project) == before


def test_the_tree_less_some_cases_is_the_release_of_the_rest(tmp_path: Path) -> None:
    by_tree = _released_tree(tmp_path / "tree")
    by_models = _released_tree(tmp_path / "models")
    drop = {"c-001", "c-007", "c-404"}  # c-404 is not in the tree: ignored
    got = release(by_tree, NAME, None, "forget", without=drop, changes=["forgot three"])
    current = load_dataset(by_models, NAME)
    want = release(
        by_models,
        NAME,
        [c for c in current.cases if c.id not in drop],
        "forget",
        labels=[r for r in current.labels if r.case_id not in drop],
        changes=["forgot three"],
    )
    assert got is not None and want is not None
    assert got.model_dump(exclude={"created_at"}) == want.model_dump(exclude={"created_at"})
    assert got.counts.cases == 8 and got.changes == ["forgot three"]
    content = ("cases.jsonl", "labels.jsonl")  # versions.jsonl differs by release time only
    assert [_files(by_tree)[f] for f in content] == [_files(by_models)[f] for f in content]
    assert files_hash(by_tree.dataset_dir(NAME)) == got.hash


def test_an_unchanged_tree_releases_nothing_and_a_changed_one_its_changelog(
    tmp_path: Path,
) -> None:
    project = _released_tree(tmp_path / "p")
    first = read_versions(project.dataset_dir(NAME), "versions.jsonl")
    assert release(project, NAME, None, "again") is None
    assert read_versions(project.dataset_dir(NAME), "versions.jsonl") == first
    cases = [_case(i) for i in range(11)]
    _write(project, cases, [_label(c["id"], "l0") for c in cases[:6]], hand=False)
    record = release(project, NAME, None, "one more", changes=["added c-010 by hand"])
    assert record is not None and record.number == 2
    assert record.changes == ["added c-010 by hand"]
    assert record.hash == files_hash(project.dataset_dir(NAME))


def test_the_message_is_required_on_every_path(tmp_path: Path) -> None:
    project = _released_tree(tmp_path / "p")
    cases = [_case(i) for i in range(11)]
    _write(project, cases, [_label(c["id"], "l0") for c in cases[:6]], hand=False)
    for kwargs in ({}, {"without": {"c-002"}}):
        with pytest.raises(UsageError) as exc:
            release(project, NAME, None, "  ", **kwargs)  # type: ignore[arg-type]
        assert exc.value.param == "message"
    assert len(read_versions(project.dataset_dir(NAME), "versions.jsonl")) == 1
