"""`casework dataset show` finds one case without validating what a release validated (issue 13, item 1).

The oracle is the full read `show` made before: every line validated as it streams past, the
case kept when its id matches. The fast path must answer the same (the case, the same refusal,
the same "no case" message) and must not read the whole dataset when a release knows its lines.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from casework.dataset import find_case, release
from casework.dataset.jsonl import dump_record
from casework.dataset.stream import scan_dataset
from casework.errors import CaseworkError, InputErrors
from casework.project import Project, load_project
from casework.schema import Case
from tests.dataset.test_fast_read import _label
from tests.factories import case_dict, write_lines

NAME = "d"


def _project(root: Path) -> tuple[Project, list[dict[str, Any]], list[dict[str, Any]]]:
    root.mkdir(parents=True)
    (root / "casework.toml").write_text("", encoding="utf-8")
    project = load_project(root)
    cases = [case_dict(f"c-{i:03d}") for i in range(12)]
    labels = [_label(c["id"]) for c in cases[:5]]
    write_lines(project.dataset_dir(NAME) / "cases.jsonl", cases)
    write_lines(project.dataset_dir(NAME) / "labels.jsonl", labels)
    assert release(project, NAME, None, "first") is not None
    return project, cases, labels


def _full(project: Project, ref: str, case_id: str) -> Any:
    """What the full read answers: the case's JSON, or the error's text."""
    kept: list[Case] = []
    try:
        scan = scan_dataset(
            project, ref, lambda c: kept.append(c) if c.id == case_id else None, keep_labels=False
        )
    except InputErrors as exc:
        return "refused", str(exc)
    return (
        dump_record(kept[0]) if kept else ("missing", f"{scan.ref}: no case with id '{case_id}'.")
    )


def _fast(project: Project, ref: str, case_id: str) -> Any:
    try:
        return dump_record(find_case(project, ref, case_id))
    except InputErrors as exc:
        return "refused", str(exc)
    except CaseworkError as exc:
        return "missing", str(exc)


def _no_full_read(monkeypatch: pytest.MonkeyPatch) -> None:
    def full(*args: object, **kwargs: object) -> None:
        raise AssertionError("the whole dataset was read")

    monkeypatch.setattr("casework.dataset.lookup.scan_dataset", full)


@pytest.mark.parametrize("case_id", ["c-000", "c-007", "c-011", "nope"])
@pytest.mark.parametrize("ref", [NAME, f"{NAME}@working", f"{NAME}@1", f"{NAME}@latest"])
def test_a_released_tree_answers_from_the_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ref: str, case_id: str
) -> None:
    project, _, _ = _project(tmp_path / "p")
    want = _full(project, ref, case_id)
    _no_full_read(monkeypatch)
    assert _fast(project, ref, case_id) == want


def _edit(
    project: Project, cases: list[dict[str, Any]], labels: list[dict[str, Any]], how: str
) -> None:
    folder = project.dataset_dir(NAME)
    if how == "case-edited":
        cases[3]["situation"] = dict(cases[3]["situation"], goal="edited")
        cases.append(case_dict("c-100"))
    elif how == "bad-line":
        cases.append({"id": "c-bad", "split": "nope"})
    elif how == "duplicate-id":
        cases.append(dict(cases[2]))
    elif how == "label-edited":
        labels.append(_label("c-009", "l2"))
    elif how == "dangling-label":
        labels.append(_label("c-999"))
    elif how == "reordered":
        cases.reverse()
    elif how == "reverted":  # the tree is release 1 again after release 2
        write_lines(folder / "cases.jsonl", [*cases, case_dict("c-200")])
        assert release(project, NAME, None, "second") is not None
    write_lines(folder / "cases.jsonl", cases)
    if how.startswith(("label", "dangling")):  # else the released (canonical) labels stay
        write_lines(folder / "labels.jsonl", labels)


@pytest.mark.parametrize(
    "how",
    [
        "case-edited",
        "bad-line",
        "duplicate-id",
        "label-edited",
        "dangling-label",
        "reordered",
        "reverted",
    ],
)
@pytest.mark.parametrize("case_id", ["c-003", "c-100", "c-002", "nope"])
def test_an_edited_tree_answers_as_the_full_read(tmp_path: Path, how: str, case_id: str) -> None:
    project, cases, labels = _project(tmp_path / "p")
    _edit(project, cases, labels, how)
    for ref in (NAME, f"{NAME}@1"):
        assert _fast(project, ref, case_id) == _full(project, ref, case_id), ref


def test_an_unreleased_case_is_validated_without_a_full_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, cases, labels = _project(tmp_path / "p")
    _edit(project, cases, labels, "case-edited")
    want = _full(project, NAME, "c-100")
    _no_full_read(monkeypatch)
    assert _fast(project, NAME, "c-100") == want
    assert _fast(project, NAME, "c-003")["situation"]["goal"] == "edited"


def test_a_release_missing_from_the_store_is_put_back_from_the_tree(tmp_path: Path) -> None:
    project, _, _ = _project(tmp_path / "p")
    shutil.rmtree(project.state_dir / "versions")
    # Still in the working tree: it is restored to the store from there, then read by index.
    assert _fast(project, f"{NAME}@1", "c-004") == _full(project, f"{NAME}@1", "c-004")
    assert json.dumps(_fast(project, f"{NAME}@1", "c-004")).count("c-004") >= 1
    assert (project.state_dir / "versions").is_dir()
