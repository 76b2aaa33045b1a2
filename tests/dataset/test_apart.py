"""The store's pack written by a forked child beside the staging thread: result, error, progress."""

from __future__ import annotations

import os
import sys
import threading
from datetime import UTC, datetime
from pathlib import Path

import pytest

from casework.dataset import _apart, _objects
from casework.dataset._apart import apart, fork_ok, told
from casework.dataset._lines import Changed
from casework.dataset.store import release
from casework.errors import CaseworkError
from casework.project import load_project
from tests.dataset.test_release_identity import RECORDED, _release

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux only")


def test_the_childs_result_comes_back_with_its_progress() -> None:
    def job() -> tuple[int, int]:
        tell = told(lambda done, total: None)  # in the child: the pipe to the parent
        for done in range(0, 101, 25):
            tell(done, 100)
        return os.getpid(), 7

    seen: list[tuple[int, int]] = []
    pid, value = apart(job).result(lambda done, total: seen.append((done, total)))
    assert pid != os.getpid() and value == 7
    assert seen == [(0, 100), (25, 100), (50, 100), (75, 100), (100, 100)]


def test_the_childs_error_is_raised_here() -> None:
    def job() -> None:
        raise Changed("datasets/refunds/cases.jsonl")

    with pytest.raises(Changed, match=r"cases\.jsonl"):
        apart(job).result()


def test_an_error_that_cannot_travel_is_named() -> None:
    class Local(Exception):  # a local class does not pickle
        pass

    def job() -> None:
        raise Local("not here")

    with pytest.raises(CaseworkError, match="not here"):
        apart(job).result()


def test_a_child_that_dies_without_a_word_is_an_error() -> None:
    def job() -> None:
        os._exit(3)

    with pytest.raises(CaseworkError, match="ended without a word"):
        apart(job).result()


def test_no_fork_while_another_thread_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as alone:  # other tests of this worker may have left threads
        alone.setattr(threading, "active_count", lambda: 1)
        assert fork_ok()
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not fork_ok()
    finally:
        stop.set()
        thread.join()


@pytest.mark.parametrize("forks", [True, False])
@pytest.mark.parametrize("untidy", [False, True])
def test_a_release_writes_the_same_store_with_its_pack_written_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, untidy: bool, forks: bool
) -> None:
    """The large-release path (store and staging side by side): the pack in a child, or on
    this thread where no child may be forked."""
    monkeypatch.setattr(_objects, "fork_ok", lambda: forks)
    monkeypatch.setattr("casework.dataset._write.OVERLAP_MIN_BYTES", 0)
    monkeypatch.setattr("casework.dataset._incremental.PARALLEL_MIN_ROW_BYTES", 0)
    monkeypatch.setattr("casework.dataset._incremental.parallel_workers", lambda: 2)
    children: list[int] = []
    real = _apart.apart

    def counted(job):  # type: ignore[no-untyped-def]
        started = real(job)
        children.append(started._pid)
        return started

    monkeypatch.setattr(_objects, "apart", counted)
    assert _release(tmp_path / "p", untidy) == RECORDED[untidy]
    assert len(children) == (1 if forks else 0)


def test_a_pack_writer_that_fails_leaves_no_version(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("casework.dataset._write.OVERLAP_MIN_BYTES", 0)
    monkeypatch.setattr("casework.dataset._incremental.PARALLEL_MIN_ROW_BYTES", 0)
    monkeypatch.setattr("casework.dataset._incremental.parallel_workers", lambda: 1)

    def failing(*args: object) -> bool:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_objects, "_write_pack", failing)
    root = tmp_path / "p"
    from tests.dataset.test_release_identity import _generator

    _generator().make_project(root, 30, seed=1)
    project = load_project(root)
    with pytest.raises(OSError, match="No space left"):
        release(project, "refunds", None, "first", now=datetime(2026, 12, 6, tzinfo=UTC))
    assert not list((root / ".casework" / "versions").glob("*/manifest"))
    assert not (project.dataset_dir("refunds") / "versions.jsonl").exists()
    assert _apart._child_tell is None  # set in the child only
