"""A release whose new lines are parsed on several forked workers (issue 13, first release at scale).

The oracle is the same release with the lines parsed in this process: the files written, the
release record and the stored versions must be the same, and so must what is refused.
"""

from __future__ import annotations

import json
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from casework.dataset import _journal as journal
from casework.dataset import _prepare, lock, read_versions, release
from casework.dataset.versions import (
    CASES_FILE,
    LABELS_FILE,
    VERSIONS_FILE,
    content_hash,
    materialise,
)
from casework.errors import InputErrors
from casework.project import Project
from tests.dataset.test_line_store import OPS, _case, _label, _project, _run_script, _write
from tests.factories import case_dict

NAME = "d"


def _forked(monkeypatch: pytest.MonkeyPatch, workers: int) -> None:
    """Every release below parses its new lines on ``workers`` forked processes."""
    monkeypatch.setattr("casework.dataset._incremental.PARALLEL_MIN_ROW_BYTES", 0)
    monkeypatch.setattr("casework.dataset._incremental.parallel_workers", lambda: workers)


def _released(project: Project) -> tuple[bytes, bytes, list[Any], list[bytes]]:
    folder = project.dataset_dir(NAME)
    versions = read_versions(folder, "v")
    stored = [materialise(folder, project.state_dir, v, NAME).cases for v in versions]
    records = [v.model_dump(exclude={"created_at"}) for v in versions]
    return (folder / CASES_FILE).read_bytes(), (folder / LABELS_FILE).read_bytes(), records, stored


def _two_releases(root: Path, hand: bool) -> tuple[bytes, bytes, list[Any], list[bytes]]:
    project = _project(root)
    cases = [_case(i) for i in range(30)]
    labels = [_label(c["id"], "l0") for c in cases[:8]]
    _write(project, cases, labels, hand=hand)
    assert release(project, NAME, None, "first") is not None
    for c in cases[::4]:
        c["situation"] = dict(c["situation"], goal="edited")
    _write(project, cases, labels, hand=not hand)
    assert release(project, NAME, None, "second") is not None
    return _released(project)


@pytest.mark.parametrize("hand", [False, True])
@pytest.mark.parametrize("workers", [2, 3, 7])
def test_forked_releases_write_what_one_process_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hand: bool, workers: int
) -> None:
    want = _two_releases(tmp_path / "here", hand)
    _forked(monkeypatch, workers)
    got = _two_releases(tmp_path / "forked", hand)
    assert got == want
    assert json.loads((tmp_path / "forked" / "datasets" / NAME / VERSIONS_FILE).read_text()
                      .splitlines()[0])["number"] == 1  # fmt: skip


@pytest.mark.parametrize("hand", [False, True])
def test_store_and_staging_side_by_side_write_what_one_after_the_other_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hand: bool
) -> None:
    want = _two_releases(tmp_path / "sequential", hand)
    monkeypatch.setattr("casework.dataset._write.OVERLAP_MIN_BYTES", 0)
    got = _two_releases(tmp_path / "overlapped", hand)
    assert got == want
    assert not any((tmp_path / "overlapped" / ".casework").rglob("*.tmp"))


def test_a_store_failing_beside_staging_commits_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "p"
    project = _project(root)
    cases = [_case(i) for i in range(10)]
    _write(project, cases, [], hand=False)
    assert release(project, NAME, None, "first") is not None
    before = _released(project)
    cases[0]["situation"] = dict(cases[0]["situation"], goal="edited")
    _write(project, cases, [], hand=True)
    edited = (project.dataset_dir(NAME) / CASES_FILE).read_bytes()
    monkeypatch.setattr("casework.dataset._write.OVERLAP_MIN_BYTES", 0)

    def broken(*args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr("casework.dataset._write.write_version", broken)
    with pytest.raises(OSError, match="disk full"):
        release(project, NAME, None, "second")
    folder = project.dataset_dir(NAME)
    assert (folder / CASES_FILE).read_bytes() == edited  # the tree as the user left it
    assert len(read_versions(folder, "v")) == 1  # no second release logged
    monkeypatch.undo()
    assert release(project, NAME, None, "second") is not None  # staging left: dropped
    assert _released(project)[2][:1] == before[2]


@pytest.mark.parametrize(
    "bad",
    [
        '{"id": NaN}',  # a bad line
        json.dumps(_case(3)),  # a duplicate id
        json.dumps(case_dict("c-040", split="nope")),  # a schema violation
    ],
)
def test_forked_releases_refuse_what_one_process_refuses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    def attempt(root: Path) -> str:
        project = _project(root)
        folder = project.dataset_dir(NAME)
        folder.mkdir(parents=True)
        lines = [json.dumps(_case(i)) for i in range(20)]
        lines.insert(11, bad)
        (folder / CASES_FILE).write_text("\n".join(lines) + "\n", encoding="utf-8")
        with pytest.raises(InputErrors) as caught:
            release(project, NAME, None, "first")
        assert not (folder / VERSIONS_FILE).exists()
        return str(caught.value).replace(str(root), "<root>")

    want = attempt(tmp_path / "here")
    _forked(monkeypatch, 3)
    assert attempt(tmp_path / "forked") == want


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=st.lists(st.tuples(OPS, st.integers(0, 50)), max_size=6), hand=st.booleans())
def test_forked_release_and_diff_match_the_full_parse(
    ops: list[tuple[str, int]], hand: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The line-store oracle test of `test_line_store`, with every release forked."""
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    _forked(monkeypatch, 2)
    with tempfile.TemporaryDirectory() as tmp:
        monkeypatch.chdir(tmp)
        _run_script(Path(tmp) / "proj", ops, hand)


def test_packs_written_in_batches_hold_what_line_by_line_writing_holds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pack lines are joined a batch per write; a batch boundary falls anywhere in the lines."""
    want = _two_releases(tmp_path / "one", hand=True)
    monkeypatch.setattr("casework.dataset._objects._WRITE_BATCH", 3)
    assert _two_releases(tmp_path / "three", hand=True) == want
    monkeypatch.setattr("casework.dataset._objects._WRITE_BATCH", 1)
    assert _two_releases(tmp_path / "each", hand=True) == want


# A large first release hashes its cases as it stages them, and the store (writing its pack
# meanwhile) takes the hash when it has finished: the paths below are its own.


def _first_release(root: Path, hand: bool) -> Project:
    project = _project(root)
    cases = [_case(i) for i in range(12)]
    _write(project, cases, [_label(c["id"], "l0") for c in cases[:5]], hand=hand)
    return project


def _packs(project: Project) -> set[str]:
    return {p.name for p in (project.state_dir / "versions" / "objects").glob("*.pack")}


@pytest.mark.parametrize("hand", [False, True])  # the file stays as it is / is rewritten
def test_a_first_release_hashed_as_staged_is_stored_under_its_hash(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hand: bool
) -> None:
    want = _first_release(tmp_path / "one-after-the-other", hand)
    assert (want_record := release(want, NAME, None, "first")) is not None
    monkeypatch.setattr("casework.dataset._write.OVERLAP_MIN_BYTES", 0)
    project = _first_release(tmp_path / "side-by-side", hand)
    assert _release_within(project, 30) is None
    folder = project.dataset_dir(NAME)
    record = read_versions(folder, "v")[0]
    assert record.hash == want_record.hash
    files = (folder / CASES_FILE).read_bytes(), (folder / LABELS_FILE).read_bytes()
    assert content_hash(*files) == record.hash
    stored = materialise(folder, project.state_dir, record, NAME)
    assert (stored.cases, stored.labels) == files
    assert (project.state_dir / "versions" / record.hash / "manifest").is_file()
    assert len(_packs(project)) == 1


def _release_within(project: Project, seconds: float) -> BaseException | None:
    """Run a release on a thread; what it raised (a release that does not end fails the test)."""
    raised: list[BaseException | None] = [None]

    def run() -> None:
        try:
            release(project, NAME, None, "first")
        except BaseException as exc:  # handed to the test
            raised[0] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "the release hung: the store waits for a hash never given"
    return raised[0]


@pytest.mark.parametrize("hand", [False, True])
def test_a_staging_failure_reaches_the_waiting_store_and_commits_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hand: bool
) -> None:
    project = _first_release(tmp_path / "p", hand)
    folder = project.dataset_dir(NAME)
    before = {n: (folder / n).read_bytes() for n in (CASES_FILE, LABELS_FILE)}
    monkeypatch.setattr("casework.dataset._write.OVERLAP_MIN_BYTES", 0)
    real_stage = journal._stage

    def failing(source: Path, data: Any, tmp: Path) -> str:
        if source.name.endswith(VERSIONS_FILE if not hand else CASES_FILE):
            raise OSError(28, "No space left on device")
        return real_stage(source, data, tmp)

    monkeypatch.setattr(journal, "_stage", failing)
    raised = _release_within(project, 30)
    assert isinstance(raised, OSError) and "No space" in str(raised)
    assert {n: (folder / n).read_bytes() for n in before} == before
    assert not (folder / VERSIONS_FILE).exists()
    if hand:  # failed before the hash: no manifest will name the pack written meanwhile
        assert _packs(project) == set()
    monkeypatch.setattr(journal, "_stage", real_stage)
    assert _release_within(project, 30) is None  # what was left is dropped; the release holds
    assert len(read_versions(folder, "v")) == 1


def test_a_first_release_the_store_holds_already_leaves_no_spare_pack(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("casework.dataset._write.OVERLAP_MIN_BYTES", 0)
    project = _first_release(tmp_path / "p", hand=True)
    assert (first := release(project, NAME, None, "first")) is not None
    packs = _packs(project)
    folder = project.dataset_dir(NAME)
    (folder / VERSIONS_FILE).unlink()  # released again from scratch, hand-written again
    _write(
        project,
        [_case(i) for i in range(12)],
        [_label(_case(i)["id"], "l0") for i in range(5)],
        hand=True,
    )
    assert (again := release(project, NAME, None, "first")) is not None
    assert again.hash == first.hash
    assert _packs(project) == packs
    assert (
        materialise(folder, project.state_dir, again, NAME).cases
        == (folder / CASES_FILE).read_bytes()
    )


@pytest.mark.parametrize("hand", [False, True])  # the file stays as it is / is rewritten
def test_the_fingerprints_of_a_first_release_need_no_second_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hand: bool
) -> None:
    """The tree's fingerprint from its scan is the lock's (it is not read again, locked), and the
    lock notes the files written by the digests staged: both as reading the files gives."""
    monkeypatch.setattr("casework.dataset._write.OVERLAP_MIN_BYTES", 0)
    project = _first_release(tmp_path / "p", hand)
    folder = project.dataset_dir(NAME)
    prepared: list[object] = []
    real_prepare = _prepare.prepare_tree

    def prepare(*args: Any) -> Any:
        prepared.append(real_prepare(*args))
        return prepared[-1]

    known: list[set[str]] = []
    real_fingerprint = lock._fingerprint

    def fingerprint(folder: Path, given: Any = None) -> str:
        known.append(set(given or ()))
        return real_fingerprint(folder, given)

    monkeypatch.setattr("casework.dataset.store.prepare_tree", prepare)
    monkeypatch.setattr(lock, "_fingerprint", fingerprint)
    with lock.dataset_lock(project, NAME):
        assert release(project, NAME, None, "first") is not None
        noted = lock.held_fingerprint(project, NAME)
    assert len(prepared) == 1  # the fingerprints agreed: not prepared again under the lock
    assert noted == real_fingerprint(folder)
    written = {CASES_FILE, LABELS_FILE, VERSIONS_FILE} if hand else {LABELS_FILE, VERSIONS_FILE}
    assert known[-1] == written
