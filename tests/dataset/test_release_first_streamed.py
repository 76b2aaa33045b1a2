"""A first release streams its cases and keeps only compact rows of its labels (issue 13).

The oracle is :func:`casework.dataset.release` given the same content as validated models
(canonicalised in memory, written whole): the files, the release record and the stored
version must be byte for byte the same, whether the lines are parsed here or on workers.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from casework.dataset import _incremental, read_versions, release, store
from casework.dataset._objects import write_version
from casework.dataset.jsonl import canonical_bytes
from casework.dataset.versions import CASES_FILE, LABELS_FILE, VERSIONS_FILE, materialise
from casework.errors import ReleaseConflict
from casework.project import Project
from casework.schema import Case, LabelRecord
from tests.dataset.test_line_store import _case, _label, _project

NAME = "d"


def _files(cases: list[dict[str, Any]], labels: list[dict[str, Any]]) -> tuple[str, str]:
    """The files as a person might leave them: out of order, some lines not canonical."""
    rng = random.Random(7)
    order = list(reversed(cases))
    case_text = "".join(
        (json.dumps(c, separators=(",", ":")) if i % 3 == 0 else json.dumps(c)) + "\n"
        for i, c in enumerate(order)
    )
    shuffled = labels[:]
    rng.shuffle(shuffled)
    label_text = "".join(
        (json.dumps(dict(reversed(x.items()))) if i % 4 == 0 else json.dumps(x)) + "\n"
        for i, x in enumerate(shuffled)
    )
    return case_text, label_text


def _tree(root: Path, case_text: str, label_text: str) -> tuple[Project, Path]:
    """A project at ``root`` whose dataset's working tree holds these two files."""
    project = _project(root)
    folder = project.dataset_dir(NAME)
    folder.mkdir(parents=True)
    (folder / CASES_FILE).write_text(case_text, encoding="utf-8")
    (folder / LABELS_FILE).write_text(label_text, encoding="utf-8")
    return project, folder


def _content() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    cases = [_case(i) for i in range(40)]
    labels = [_label(c["id"], f"l{k}") for c in cases[:25] for k in range(2)]
    for i, label in enumerate(labels):
        label["labelled_at"] = f"2026-11-{1 + i % 28:02d}T12:00:00Z"
        label["schema_version"] = 1
    return cases, labels


def _released(project: Project) -> tuple[bytes, bytes, dict[str, Any], bytes, bytes]:
    folder = project.dataset_dir(NAME)
    (version,) = read_versions(folder, "v")
    stored = materialise(folder, project.state_dir, version, NAME)
    record = version.model_dump(exclude={"created_at"})
    cases, labels = (folder / CASES_FILE).read_bytes(), (folder / LABELS_FILE).read_bytes()
    return cases, labels, record, stored.cases, stored.labels


def _by_models(root: Path) -> tuple[bytes, bytes, dict[str, Any], bytes, bytes]:
    project = _project(root)
    cases, labels = _content()
    case_text, label_text = _files(cases, labels)
    folder = project.dataset_dir(NAME)
    folder.mkdir(parents=True)
    (folder / CASES_FILE).write_text(case_text, encoding="utf-8")
    (folder / LABELS_FILE).write_text(label_text, encoding="utf-8")
    models = [Case.model_validate(c) for c in cases]
    label_models = [LabelRecord.model_validate(x) for x in labels]
    assert release(project, NAME, models, "first", labels=label_models) is not None
    return _released(project)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_first_release_writes_what_the_models_path_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    want = _by_models(tmp_path / "models")
    monkeypatch.setattr("casework.dataset._incremental.PARALLEL_MIN_ROW_BYTES", 0)
    monkeypatch.setattr("casework.dataset._incremental.parallel_workers", lambda: workers)
    cases, labels = _content()
    case_text, label_text = _files(cases, labels)
    project, _ = _tree(tmp_path / "tree", case_text, label_text)
    record = release(project, NAME, None, "first")
    assert record is not None
    assert record.counts.labels == len(labels)
    got = _released(project)
    assert got == want
    assert got[0] != case_text.encode()  # the tree was rewritten: the streamed path ran
    assert got[1] != label_text.encode()


def test_cases_file_edited_while_its_lines_are_read_back_refuses_the_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lines are read back from the file by position: an edit in place is caught, not written."""
    cases, labels = _content()
    # Canonical lines out of order: each is read back from the file when written.
    lines = canonical_bytes([Case.model_validate(c) for c in cases]).splitlines(keepends=True)
    case_text = b"".join(reversed(lines)).decode()
    label_text = _files(cases, labels)[1]
    project, folder = _tree(tmp_path / "p", case_text, label_text)
    edited = case_text.replace('"goal": "', '"goal": "X', 1).replace('": "', '":"', 1)
    assert len(edited) == len(case_text) and edited != case_text

    def edit_then_write(*args: Any, **kwargs: Any) -> None:
        with (folder / CASES_FILE).open("r+", encoding="utf-8") as handle:  # in place
            handle.write(edited)
        write_version(*args, **kwargs)

    monkeypatch.setattr("casework.dataset._write.write_version", edit_then_write)
    with pytest.raises(ReleaseConflict, match="changed while this command was releasing it"):
        release(project, NAME, None, "first")
    assert (folder / CASES_FILE).read_text(encoding="utf-8") == edited
    assert not (folder / VERSIONS_FILE).exists()
    assert not list(project.state_dir.glob("versions/*/manifest"))


@pytest.mark.parametrize("scanned", [700, 1_999])
def test_lines_handed_to_workers_as_scanned_write_what_the_models_path_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scanned: int
) -> None:
    """The scan reads the cases file in small chunks: whole shares go to the workers between them."""
    want = _by_models(tmp_path / "models")
    monkeypatch.setattr("casework.dataset._incremental.PARALLEL_MIN_ROW_BYTES", 0)
    monkeypatch.setattr("casework.dataset._incremental.parallel_workers", lambda: 2)
    monkeypatch.setattr("casework.dataset._lines._SCANNED", scanned)
    handed: list[int] = []  # how many shares were handed over after each chunk
    real_seen = _incremental.EarlyCases.seen

    def seen(self: _incremental.EarlyCases, spans: Any, hashes: Any) -> None:
        real_seen(self, spans, hashes)
        handed.append(len(self.futures))

    monkeypatch.setattr(_incremental.EarlyCases, "seen", seen)
    cases, labels = _content()
    case_text, label_text = _files(cases, labels)
    project, _ = _tree(tmp_path / "tree", case_text, label_text)
    assert release(project, NAME, None, "first") is not None
    assert _released(project) == want
    assert any(handed[:-1])  # shares went to the workers before the last chunk was read


def test_a_labels_file_that_changed_size_after_it_was_cut_takes_the_full_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its shares went to the workers before the scan: a labels file grown since is read again."""
    monkeypatch.setattr("casework.dataset._incremental.PARALLEL_MIN_ROW_BYTES", 0)
    monkeypatch.setattr("casework.dataset._incremental.parallel_workers", lambda: 2)
    cases, labels = _content()
    case_text, label_text = _files(cases, labels)
    project, folder = _tree(tmp_path / "tree", case_text, label_text)
    extra = _label(cases[30]["id"], "l9")
    extra["schema_version"] = 1
    real_early = _incremental.early_cases

    def early_then_grown(*args: Any) -> _incremental.EarlyCases | None:
        early = real_early(*args)
        with (folder / LABELS_FILE).open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(extra) + "\n")
        return early

    full: list[str] = []
    real_full = store._release_tree_fully

    def fully(*args: Any) -> Any:
        full.append("full")
        return real_full(*args)

    monkeypatch.setattr("casework.dataset._prepare.early_cases", early_then_grown)
    monkeypatch.setattr(store, "_release_tree_fully", fully)
    record = release(project, NAME, None, "first")
    assert record is not None
    assert full == ["full"]
    assert record.counts.labels == len(labels) + 1
