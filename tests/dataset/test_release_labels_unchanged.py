"""A release whose labels file is the parent release's, line for line, parses no label (issue 13).

The oracle is the release record the ordinary path writes (every label parsed, sorted, checked
and compared): changelog and counts must be the same, and what the ordinary path refuses (a
case removed while labels still name it) is still refused, with the same message.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from casework.dataset import read_versions, release
from casework.dataset._objects import read_index
from casework.dataset.versions import LABELS_FILE
from casework.errors import InputErrors
from casework.project import Project
from tests.dataset.test_line_store import _case, _label, _project, _write

NAME = "d"


def _start(root: Path) -> tuple[Project, list[dict[str, Any]], list[dict[str, Any]]]:
    project = _project(root)
    cases = [_case(i) for i in range(20)]
    labels = [_label(c["id"], "l0") for c in cases[:9]] + [_label("c-001", "l1", "refuse")]
    _write(project, cases, labels, hand=True)
    assert release(project, NAME, None, "first") is not None
    return project, cases, labels


def _no_label_parse(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(data: bytes, shown: str) -> None:
        raise AssertionError("labels parsed")

    monkeypatch.setattr("casework.dataset._prepare.labels_of", refuse)


def _second(root: Path, edit: Any, fast: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Release an edit of the cases, the labels file as released; ``fast``: by the new path."""
    project, cases, labels = _start(root)
    edit(cases)
    path = project.dataset_dir(NAME) / LABELS_FILE
    released = path.read_bytes()
    _write(project, cases, labels, hand=False)
    path.write_bytes(released)
    with monkeypatch.context() as patch:
        if fast:
            _no_label_parse(patch)
        else:
            patch.setattr("casework.dataset._prepare.parent_label_lines", lambda *a: None)
        return _release(project, root)


def _release(project: Project, root: Path) -> Any:
    try:
        record = release(project, NAME, None, "second")
    except InputErrors as exc:
        return "refused", str(exc).replace(str(root), "<root>")
    assert record is not None
    versions = read_versions(project.dataset_dir(NAME), "v")
    return record.changes, record.counts, [v.hash for v in versions]


def _reword(cases: list[dict[str, Any]]) -> None:
    for c in cases[2:5]:
        c["situation"] = dict(c["situation"], goal="reworded")


def _add_and_drop_unlabelled(cases: list[dict[str, Any]]) -> None:
    cases.append(_case(30))
    del cases[15]  # c-015 has no label


@pytest.mark.parametrize("edit", [_reword, _add_and_drop_unlabelled])
def test_unchanged_labels_release_as_the_ordinary_path_releases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit: Any
) -> None:
    want = _second(tmp_path / "plain", edit, False, monkeypatch)
    got = _second(tmp_path / "fast", edit, True, monkeypatch)
    assert got == want
    assert got[1].labels == 10 and not any("labels.jsonl" in line for line in got[0])


def test_removing_a_labelled_case_is_still_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def drop_labelled(cases: list[dict[str, Any]]) -> None:
        del cases[1]  # c-001 has two labels

    want = _second(tmp_path / "plain", drop_labelled, False, monkeypatch)
    project, cases, labels = _start(tmp_path / "fast")
    drop_labelled(cases)
    path = project.dataset_dir(NAME) / LABELS_FILE
    released = path.read_bytes()
    _write(project, cases, labels, hand=False)
    path.write_bytes(released)
    got = _release(project, tmp_path / "fast")
    assert want[0] == "refused" and "c-001" in want[1]
    assert got == (want[0], want[1].replace("plain", "fast"))


def test_a_manifest_of_format_one_reads_as_the_same_index(tmp_path: Path) -> None:
    """Manifests now hold line hashes in base64; those written in hex (format 1) still read."""
    project, _, _ = _start(tmp_path / "p")
    record = read_versions(project.dataset_dir(NAME), "v")[-1]
    index = read_index(project.state_dir, record.hash)
    assert index is not None
    path = project.state_dir / "versions" / record.hash / "manifest"
    body = json.loads(path.read_bytes())
    assert body["format"] == 2
    assert len(body["hashes"]) == len(base64.b64encode(b"\0" * 16 * len(index.hashes)))
    old = dict(
        body,
        format=1,
        hashes=b"".join(index.hashes).hex(),
        labels=b"".join(index.label_hashes).hex(),
    )
    path.write_text(json.dumps(old), encoding="utf-8")
    assert read_index(project.state_dir, record.hash) == index
    path.write_text(json.dumps(dict(body, hashes=body["hashes"][:-4])), encoding="utf-8")
    assert read_index(project.state_dir, record.hash) is None  # not whole hashes: damaged
    path.write_text(json.dumps(dict(body, format=3)), encoding="utf-8")
    assert read_index(project.state_dir, record.hash) is None  # a format not known
