"""A fresh clone (no `.casework/`) puts the releases it needs back into its store (issue 13).

The oracle is the same command run in the project the releases were made in, whose store holds
them: a release, a diff, `show @N` and a release without some rows must give the same record
(hash, changelog, counts), the same diff and the same files, without the full path (every case
of both sides read as models), and leave the parent's index stored for the next command.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from casework.dataset import diff_versions, find_case, release
from casework.dataset import store as store_module
from casework.dataset._objects import read_index
from casework.dataset.jsonl import dump_record
from casework.dataset.lock import dataset_lock
from casework.dataset.versions import content_hash, read_versions
from casework.errors import CaseworkError
from casework.project import Project, load_project
from casework.schema import VersionRecord
from tests.dataset.test_fast_read import _label
from tests.factories import case_dict, git_commit, write_lines

NAME = "d"
restore_module = importlib.import_module("casework.dataset._restore")


def _origin(root: Path) -> tuple[Project, list[dict[str, Any]], list[dict[str, Any]]]:
    """A git project with one release committed, and the tree edited since (not released)."""
    root.mkdir(parents=True)
    (root / "casework.toml").write_text("", encoding="utf-8")
    (root / ".gitignore").write_text(".casework/\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    project = load_project(root)
    cases = [case_dict(f"c-{i:03d}") for i in range(20)]
    labels = [_label(c["id"]) for c in cases[:8]] + [_label("c-001", "lab-b")]
    write_lines(project.dataset_dir(NAME) / "cases.jsonl", cases)
    write_lines(project.dataset_dir(NAME) / "labels.jsonl", labels)
    assert release(project, NAME, None, "first") is not None
    git_commit(root, "release 1")
    return project, cases, labels


def _two_releases(root: Path) -> Project:
    """:func:`_origin` with the edited tree released and committed as release 2."""
    origin, cases, labels = _origin(root)
    _edit(origin, cases, labels)
    assert release(origin, NAME, None, "second") is not None
    git_commit(origin.root, "release 2")
    return origin


def _clone(origin: Path, to: Path) -> Project:
    subprocess.run(["git", "clone", "-q", str(origin), str(to)], check=True)
    assert not (to / ".casework").exists()
    return load_project(to)


def _edit(project: Project, cases: list[dict[str, Any]], labels: list[dict[str, Any]]) -> None:
    edited = [dict(c) for c in cases]
    edited[3] = case_dict("c-003", split="holdout")
    edited.append(case_dict("c-100"))
    del edited[12]
    write_lines(project.dataset_dir(NAME) / "cases.jsonl", edited)
    write_lines(project.dataset_dir(NAME) / "labels.jsonl", [*labels, _label("c-100")])


def _no_full_path(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("took the full path")

    monkeypatch.setattr(store_module, "_release_tree_fully", refuse)
    monkeypatch.setattr(store_module, "load_dataset", refuse)
    monkeypatch.setattr("casework.dataset.compare.load_dataset", refuse)
    monkeypatch.setattr("casework.dataset.lookup.scan_dataset", refuse)


def _same(a: VersionRecord, b: VersionRecord) -> None:
    assert a.model_dump(exclude={"created_at"}) == b.model_dump(exclude={"created_at"})


def _files(project: Project) -> tuple[bytes, bytes]:
    folder = project.dataset_dir(NAME)
    return (folder / "cases.jsonl").read_bytes(), (folder / "labels.jsonl").read_bytes()


def test_a_fresh_clone_releases_against_its_restored_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin, cases, labels = _origin(tmp_path / "origin")
    clone = _clone(origin.root, tmp_path / "clone")
    for project in (origin, clone):
        _edit(project, cases, labels)
    want = release(origin, NAME, None, "second")
    seen: list[tuple[str, int, int]] = []
    _no_full_path(monkeypatch)
    got = release(
        clone, NAME, None, "second", on_progress=lambda *a: seen.append((a[0], a[1], a[2]))
    )
    assert want is not None and got is not None
    _same(want, got)
    assert want.changes[0] != "first release: 20 cases"  # a real changelog, not "unknown"
    assert _files(clone) == _files(origin)
    folder = clone.dataset_dir(NAME)
    first, second = read_versions(folder, "versions.jsonl")
    assert read_index(clone.state_dir, first.hash) is not None
    assert read_index(clone.state_dir, second.hash) is not None
    restoring = [s for s in seen if s[0].startswith("restoring release 1")]
    assert restoring and restoring[-1][1] == restoring[-1][2]  # the bar ends full


def test_a_fresh_clone_diffs_shows_and_forgets_through_its_restored_latest_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin = _two_releases(tmp_path / "origin")
    clones = [_clone(origin.root, tmp_path / f"clone{i}") for i in range(3)]
    twin = load_project(shutil.copytree(origin.root, tmp_path / "twin"))  # its store kept
    for project in (origin, clones[0]):  # the working tree against release 2
        path = project.dataset_dir(NAME) / "cases.jsonl"
        now = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        for case in now[:3]:
            case["situation"]["goal"] = "edited"
        write_lines(path, now)
    want_diff = diff_versions(origin, NAME, "2")
    want_case = dump_record(find_case(origin, f"{NAME}@2", "c-003"))
    want_without = release(twin, NAME, None, "forget", without={"c-005"}, changes=["forgot c-005"])
    _no_full_path(monkeypatch)
    told: list[tuple[int, int]] = []
    got_diff = diff_versions(
        clones[0], NAME, "2", on_progress=lambda done, total: told.append((done, total))
    )
    assert told and told[-1][0] == told[-1][1]  # restoring release 2 showed progress
    assert got_diff == want_diff
    assert got_diff.diff.summary_lines() == want_diff.diff.summary_lines()
    assert not want_diff.diff.empty
    assert dump_record(find_case(clones[1], f"{NAME}@2", "c-003")) == want_case
    got_without = release(
        clones[2], NAME, None, "forget", without={"c-005"}, changes=["forgot c-005"]
    )
    assert want_without is not None and got_without is not None
    _same(want_without, got_without)
    assert _files(clones[2]) == _files(twin)


def test_a_fresh_clone_diffs_an_older_release_against_the_latest_without_storing_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin = _two_releases(tmp_path / "origin")
    clone = _clone(origin.root, tmp_path / "clone")
    want = diff_versions(origin, NAME, "1", "2")
    want_case = dump_record(find_case(origin, f"{NAME}@1", "c-003"))
    _no_full_path(monkeypatch)
    got = diff_versions(clone, NAME, "1", "2")
    assert got == want and not want.diff.empty
    assert dump_record(find_case(clone, f"{NAME}@1", "c-003")) == want_case
    with pytest.raises(CaseworkError, match=r"^d@1: no case with id 'c-100'\.$"):
        find_case(clone, f"{NAME}@1", "c-100")  # added in release 2
    first, second = read_versions(clone.dataset_dir(NAME), "v")
    assert read_index(clone.state_dir, first.hash) is None  # read from git, not stored
    assert read_index(clone.state_dir, second.hash) is not None
    assert not list((clone.state_dir / "restore").iterdir())


def test_a_release_before_a_forget_is_read_from_git_but_never_stored(tmp_path: Path) -> None:
    """Older releases may hold forgotten rows: read when asked for, never put in the store."""
    origin, _, _ = _origin(tmp_path / "origin")
    secret = "c-015"  # an unlabelled row, forgotten in release 2
    assert release(origin, NAME, None, "forget", without={secret}, changes=["forget"]) is not None
    git_commit(origin.root, "forget")
    clone = _clone(origin.root, tmp_path / "clone")
    first, second = read_versions(clone.dataset_dir(NAME), "v")
    assert find_case(clone, f"{NAME}@1", secret).id == secret  # read in full, from git
    assert diff_versions(clone, NAME, "1", "2").diff.summary_lines()
    assert read_index(clone.state_dir, first.hash) is None
    stored = [p for p in (clone.state_dir).rglob("*") if p.is_file()]
    assert not [p for p in stored if secret.encode() in p.read_bytes()]
    assert read_index(clone.state_dir, second.hash) is not None  # the latest was restored


def test_a_parent_that_is_not_what_a_release_writes_takes_the_full_path(tmp_path: Path) -> None:
    """Restoring trusts nothing it cannot check: a non-canonical parent is not put in the store."""
    origin, cases, labels = _origin(tmp_path / "origin")
    folder = origin.dataset_dir(NAME)
    # Release 1 as a hand-edited history would hold it: the same cases, spaced differently, with
    # a release log whose hash matches those bytes (git has them, so they are recoverable).
    spaced = "".join(json.dumps(c, indent=None, separators=(",", ":")) + "\n" for c in cases)
    (folder / "cases.jsonl").write_text(spaced, encoding="utf-8")
    digest = content_hash(spaced.encode(), (folder / "labels.jsonl").read_bytes())
    log = json.loads((folder / "versions.jsonl").read_text(encoding="utf-8"))
    log["hash"] = digest
    (folder / "versions.jsonl").write_text(json.dumps(log) + "\n", encoding="utf-8")
    git_commit(origin.root, "spaced")
    clone = _clone(origin.root, tmp_path / "clone")
    _edit(clone, cases, labels)
    record = release(clone, NAME, None, "second")
    assert record is not None and record.number == 2
    assert read_index(clone.state_dir, digest) is None  # not stored: the full path read it


def test_the_release_is_found_in_an_older_commit_and_checked_by_its_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin, cases, labels = _origin(tmp_path / "origin")
    # Edits committed without a release: the newest commit does not hold release 1.
    _edit(origin, cases, labels)
    git_commit(origin.root, "unreleased edits")
    clone = _clone(origin.root, tmp_path / "clone")
    want = release(origin, NAME, None, "second")
    _no_full_path(monkeypatch)
    got = release(clone, NAME, None, "second")
    assert want is not None and got is not None
    _same(want, got)
    assert not list((clone.state_dir / "restore").iterdir())  # the streamed copy is gone


def test_a_locked_command_meanwhile_does_not_pull_the_restore_s_files_away(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Taking the release lock empties the dataset's temp folder; a restore runs without it."""
    origin, cases, labels = _origin(tmp_path / "origin")
    clone = _clone(origin.root, tmp_path / "clone")
    _edit(clone, cases, labels)
    real = restore_module.index_lines

    def other_command_first(*args: Any, **kwargs: Any) -> Any:
        with dataset_lock(clone, NAME):  # what a concurrent `casework dataset release` does first
            pass
        return real(*args, **kwargs)

    monkeypatch.setattr(restore_module, "index_lines", other_command_first)
    _no_full_path(monkeypatch)
    record = release(clone, NAME, None, "second")
    assert record is not None and record.number == 2
    assert read_index(clone.state_dir, read_versions(clone.dataset_dir(NAME), "v")[0].hash)


def test_a_scratch_folder_left_by_a_dead_restore_is_removed_a_day_later(tmp_path: Path) -> None:
    origin, cases, labels = _origin(tmp_path / "origin")
    clone = _clone(origin.root, tmp_path / "clone")
    left = clone.state_dir / "restore" / "d-dead"
    left.mkdir(parents=True)
    (left / "cases.jsonl").write_bytes(b"x" * 10)
    fresh = clone.state_dir / "restore" / "d-running"
    fresh.mkdir()
    day_ago = time.time() - 25 * 3600
    os.utime(left, (day_ago, day_ago))
    elsewhere = tmp_path / "elsewhere"  # a link to a folder outside: never followed
    (elsewhere / "old").mkdir(parents=True)
    os.utime(elsewhere / "old", (day_ago, day_ago))
    (clone.state_dir / "restore" / "d-link").symlink_to(elsewhere, target_is_directory=True)
    os.utime(clone.state_dir / "restore" / "d-link", (day_ago, day_ago), follow_symlinks=False)
    _edit(clone, cases, labels)
    assert release(clone, NAME, None, "second") is not None
    assert not left.exists() and fresh.exists()
    assert (elsewhere / "old").is_dir()


def test_a_linked_restore_folder_is_not_used(tmp_path: Path) -> None:
    """Temp files stay inside the project: a `.casework/restore` link sends to the full path."""
    origin, cases, labels = _origin(tmp_path / "origin")
    clone = _clone(origin.root, tmp_path / "clone")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "old").mkdir(parents=True)
    day_ago = time.time() - 25 * 3600
    os.utime(elsewhere / "old", (day_ago, day_ago))
    clone.state_dir.mkdir()
    (clone.state_dir / "restore").symlink_to(elsewhere, target_is_directory=True)
    _edit(clone, cases, labels)
    record = release(clone, NAME, None, "second")
    assert record is not None and record.number == 2  # released by the full path
    assert [p.name for p in elsewhere.iterdir()] == ["old"]
