"""`check`, `cases` and `agreement` of ``name@N`` read the release's files from disk on every core.

They used to build the release's bytes in memory (the store's lines joined, or git's output
read whole) and parse them in one process: at 100k cases 19 s and 1.5 GB (issue 13). The
oracle is the one-process path on the same release (its bytes in memory, by
:func:`~casework.dataset.versions.materialise`): every place a release can be found (the
working tree, the store, git) must give the same scan, without that path being taken, on every
core and in one process (one core, `check --presidio`), where a large release is streamed too.
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from casework.dataset import scan_in_jobs
from casework.dataset._objects import read_stored, write_stored
from casework.dataset.versions import content_hash, read_versions
from casework.errors import ReleaseConflict, VersionNotFound
from casework.gate import check_project
from casework.project import Project
from casework.schema import Case
from tests.dataset.test_restore import NAME, _clone
from tests.dataset.test_restore import _two_releases as _releases
from tests.factories import git_commit

ondisk_module = importlib.import_module("casework.dataset._ondisk")
report_module = importlib.import_module("casework.labelling.dataset_agreement")
checks_module = importlib.import_module("casework.gate._dataset_checks")
parallel_module = importlib.import_module("casework.dataset.parallel")
stream_module = importlib.import_module("casework.dataset.stream")


@dataclass
class _Ids:
    """A picklable job keeping the ids and splits it saw."""

    seen: list[tuple[str, str]] = field(default_factory=list)

    def add(self, case: Case) -> None:
        self.seen.append((case.id, case.split))


EXAMPLE_TOOLS = Path(__file__).parents[2] / "examples" / "refunds" / "agent" / "tools.json"


def _two_releases(root: Path) -> Project:
    """Two releases committed, and the agent's tools the check reads."""
    project = _releases(root)
    (root / "agent").mkdir()
    shutil.copyfile(EXAMPLE_TOOLS, root / "agent" / "tools.json")
    git_commit(root, "tools")
    return project


_Scan = tuple[str, int, list[tuple[str, str]], int | None]


def _scan(project: Project, ref: str) -> _Scan:
    scan, jobs = scan_in_jobs(project, ref, _Ids)
    number = scan.version.number if scan.version else None
    return scan.hash, scan.cases, [s for job in jobs for s in job.seen], number


def _oracle(project: Project, ref: str) -> tuple[_Scan, object, object]:
    """The scan, the check and the agreement of ``ref`` by the one-process, in-memory path."""
    return (
        _scan(project, ref),
        check_project(project, ref),
        report_module.dataset_agreement(project, ref, bootstrap=0),
    )


def _on_disk(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every scan on (forked) workers, and the in-memory path refused."""
    for module in (parallel_module, checks_module, report_module):
        monkeypatch.setattr(module, "PARALLEL_MIN_BYTES", 0)
        monkeypatch.setattr(module, "parallel_workers", lambda: 3)

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("the release was built in memory")

    monkeypatch.setattr("casework.dataset.stream.materialise", refuse)


def _restore_dir_empty(project: Project) -> bool:
    folder = project.state_dir / "restore"
    return not folder.exists() or not any(folder.iterdir())


def _release_in(place: str, tmp_path: Path) -> tuple[Project, str]:
    """A project and a release only ``place`` holds besides the store (or git alone)."""
    origin = _two_releases(tmp_path / "origin")
    if place == "working tree":
        return origin, f"{NAME}@2"  # the tree is release 2 as released
    if place == "git":
        return _clone(origin.root, tmp_path / "clone"), f"{NAME}@1"
    return origin, f"{NAME}@1"


@pytest.mark.parametrize("cores", ["every core", "one process"])
@pytest.mark.parametrize("place", ["working tree", "store", "git"])
def test_a_release_scanned_from_disk_gives_the_in_memory_scan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: str, cores: str
) -> None:
    """On every core, or in one process (one core, `--presidio`): the same scan, check, report."""
    project, ref = _release_in(place, tmp_path)
    expected = _oracle(project, ref)
    assert expected[0][3] == int(ref[-1])
    if cores == "every core":
        _on_disk(monkeypatch)
    else:
        _on_disk_in_one_process(monkeypatch)
    assert _oracle(project, ref) == expected
    assert _restore_dir_empty(project)


def _changed(tmp_path: Path, into: str) -> Project:
    """Two releases; the tree is release 2, or release 2 with a bad line (``into``)."""
    project = _two_releases(tmp_path / "origin")
    if into == "a bad line":
        with (project.dataset_dir(NAME) / "cases.jsonl").open("ab") as out:
            out.write(b'{"id": "broken"\n')
    return project


@pytest.mark.parametrize("into", ["another release", "a bad line"])
def test_a_tree_that_changes_after_its_check_is_read_again_from_a_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, into: str
) -> None:
    project = _changed(tmp_path, into)
    ref = f"{NAME}@1"
    expected = _scan(project, ref)
    first = read_versions(project.dataset_dir(NAME), "v")[0]
    real = ondisk_module.files_hash
    lied: list[Path] = []

    def stale(folder: Path) -> str:
        # The tree (release 2, or worse) hashed as release 1: as if it changed after its check.
        if folder == project.dataset_dir(NAME) and not lied:
            lied.append(folder)
            return first.hash
        return str(real(folder))

    monkeypatch.setattr(ondisk_module, "files_hash", stale)
    _on_disk(monkeypatch)
    assert _scan(project, ref) == expected
    assert lied
    assert _restore_dir_empty(project)


def test_a_release_no_place_holds_is_reported_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    origin = _two_releases(tmp_path / "origin")
    project = _clone(origin.root, tmp_path / "clone")
    shutil.rmtree(project.root / ".git")
    with pytest.raises(VersionNotFound) as serial:
        _scan(project, f"{NAME}@1")
    monkeypatch.setattr(parallel_module, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(parallel_module, "parallel_workers", lambda: 3)
    with pytest.raises(VersionNotFound) as parallel:
        _scan(project, f"{NAME}@1")
    assert str(parallel.value) == str(serial.value)
    assert _restore_dir_empty(project)


def test_a_stored_version_is_written_out_as_read_stored_builds_it(tmp_path: Path) -> None:
    project = _two_releases(tmp_path / "origin")
    for record in read_versions(project.dataset_dir(NAME), "v"):
        into = tmp_path / f"out{record.number}"
        into.mkdir()
        assert write_stored(project.state_dir, record.hash, into) == record.hash
        cases = (into / "cases.jsonl").read_bytes()
        labels = (into / "labels.jsonl").read_bytes()
        assert (cases, labels) == read_stored(project.state_dir, record.hash)
        assert content_hash(cases, labels) == record.hash
    assert write_stored(project.state_dir, "0" * 64, tmp_path) is None


def test_a_git_checkout_is_not_needed_when_the_store_holds_the_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _two_releases(tmp_path / "origin")
    expected = _scan(project, f"{NAME}@1")

    def no_git(*args: object, **kwargs: object) -> object:
        raise AssertionError("git was asked")

    monkeypatch.setattr(subprocess, "Popen", no_git)
    _on_disk(monkeypatch)
    assert _scan(project, f"{NAME}@1") == expected


@pytest.mark.parametrize("cores", ["every core", "one process"])
def test_a_linked_restore_folder_is_not_written_through(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cores: str
) -> None:
    project = _two_releases(tmp_path / "origin")
    expected = _scan(project, f"{NAME}@1")
    outside = tmp_path / "outside"
    outside.mkdir()
    project.state_dir.mkdir(exist_ok=True)
    (project.state_dir / "restore").symlink_to(outside, target_is_directory=True)
    if cores == "every core":
        monkeypatch.setattr(parallel_module, "PARALLEL_MIN_BYTES", 0)
        monkeypatch.setattr(parallel_module, "parallel_workers", lambda: 3)
    else:
        monkeypatch.setattr(stream_module, "ON_DISK_MIN_CASES", 0)
    real = ondisk_module._filled
    copies: list[Path] = []

    def spy(project: Project, folder: Path, record: object, scratch: Path) -> bool:
        copies.append(scratch.resolve())
        return bool(real(project, folder, record, scratch))

    monkeypatch.setattr(ondisk_module, "_filled", spy)
    assert _scan(project, f"{NAME}@1") == expected  # read into memory, as before
    assert copies == []  # no copy was written anywhere
    assert not any(outside.iterdir())


def _on_disk_in_one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every scan in this process (one core, as with `--presidio`), the in-memory path refused."""
    for module in (parallel_module, checks_module, report_module):
        monkeypatch.setattr(module, "parallel_workers", lambda: 1)
    monkeypatch.setattr(stream_module, "ON_DISK_MIN_CASES", 0)

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("the release was built in memory")

    monkeypatch.setattr(stream_module, "materialise", refuse)


@pytest.mark.parametrize("into", ["another release", "a bad line"])
def test_a_tree_that_changes_while_streamed_is_refused_not_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, into: str
) -> None:
    """One process cannot take back what its visitor saw: a changed tree is an error, not a report."""
    project = _changed(tmp_path, into)
    first = read_versions(project.dataset_dir(NAME), "v")[0]
    real = ondisk_module.files_hash

    def stale(folder: Path) -> str:  # the tree hashed as release 1: it changed after its check
        return first.hash if folder == project.dataset_dir(NAME) else str(real(folder))

    monkeypatch.setattr(ondisk_module, "files_hash", stale)
    _on_disk_in_one_process(monkeypatch)
    with pytest.raises(ReleaseConflict, match="changed while this command read it as"):
        _scan(project, f"{NAME}@1")
    with pytest.raises(ReleaseConflict, match=r"Run the command again\."):
        check_project(project, f"{NAME}@1")
