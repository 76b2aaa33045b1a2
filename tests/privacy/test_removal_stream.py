"""forget and expire read datasets as streams and release without re-parsing what is released.

The oracle is the way these commands released before (issue 13, item 1): every case and raw
label loaded as models, the kept ones handed to :func:`casework.dataset.release`. Whatever the
tree holds (exactly its latest release, unreleased case edits, unreleased label edits, nothing
released yet; read in one process or on forked workers), the files written and the release
logged must be the same bytes.
"""

from __future__ import annotations

import json
import re
import shutil
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from casework.dataset import load_dataset, read_versions, release
from casework.dataset.versions import materialise
from casework.privacy.retention import expire
from casework.project import Project, load_project
from tests.factories import case_dict, write_lines

NAME = "d"
NOW = datetime(2026, 6, 1, 9, 30, tzinfo=UTC)
TODAY = date(2026, 6, 1)


def _case(i: int) -> dict[str, Any]:
    # Every third row was kept until a date now past; the others until one still to come.
    until = "2026-05-01" if i % 3 == 0 else "2027-01-01"
    return case_dict(
        f"c-{i:03d}", source="mined", provenance={"retain_until": until, "subjects": [f"s{i}"]}
    )


def _label(case_id: str, labeller: str, outcome: str = "resolve") -> dict[str, Any]:
    return {
        "case_id": case_id,
        "labeller": labeller,
        "role": "first",
        "outcome": outcome,
        "guideline_version": "refunds-g7",
        "labelled_at": "2026-03-01T10:00:00Z",
    }


def _project(root: Path, state: str) -> Project:
    root.mkdir(parents=True)
    (root / "casework.toml").write_text("", encoding="utf-8")
    project = load_project(root)
    folder = project.dataset_dir(NAME)
    cases = [_case(i) for i in range(14)]
    labels = [_label(c["id"], "l1") for c in cases[:9]]
    write_lines(folder / "cases.jsonl", cases)
    write_lines(folder / "labels.jsonl", labels)
    if state == "never-released":
        return project
    assert release(project, NAME, None, "first") is not None
    if state == "case-edited":  # unreleased: a kept case edited, an expired one and a new one
        cases[1]["situation"] = dict(cases[1]["situation"], goal="edited")
        cases.append(_case(30))
        cases.append(_case(31))
        write_lines(folder / "cases.jsonl", cases)
    elif state == "label-edited":
        labels[2] = _label(labels[2]["case_id"], "l1", outcome="refuse")
        write_lines(folder / "labels.jsonl", labels)
    return project


def _oracle(project: Project) -> None:
    """Expiry as it was released before: every row loaded, the kept ones released."""
    current = load_dataset(project, NAME)
    gone = {
        c.id
        for c in current.cases
        if c.provenance.retain_until and c.provenance.retain_until < TODAY
    }
    release(
        project,
        NAME,
        [c for c in current.cases if c.id not in gone],
        "expire: retention",
        changes=[f"expire: removed {len(gone)} row(s) past their retention date"],
        labels=[r for r in current.labels if r.case_id not in gone],
        now=NOW,
    )


def _written(project: Project) -> tuple[bytes, ...]:
    folder = project.dataset_dir(NAME)
    files = tuple((folder / n).read_bytes() for n in ("cases.jsonl", "labels.jsonl"))
    # The first release was logged at the time the test ran; the removal's at NOW.
    records = (folder / "versions.jsonl").read_bytes().splitlines()
    log = b"\n".join(
        [*(re.sub(rb'"created_at": "[^"]*", ', b"", r) for r in records[:-1]), records[-1]]
    )
    # Older releases held the removed rows: the stream path purges them from the version
    # cache (as the command always did), the oracle does not. The new release rebuilds.
    latest = materialise(folder, project.state_dir, read_versions(folder, "v")[-1], NAME)
    return (*files, log, latest.cases, latest.labels)


@pytest.mark.parametrize("state", ["released", "case-edited", "label-edited", "never-released"])
@pytest.mark.parametrize("forked", [False, True], ids=["one-process", "forked"])
def test_expire_writes_what_loading_every_row_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state: str, forked: bool
) -> None:
    want = _project(tmp_path / "oracle", state)
    _oracle(want)
    got = _project(tmp_path / "stream", state)
    if forked:  # the tree is read on forked workers, as a large one is
        monkeypatch.setattr("casework.dataset.parallel.PARALLEL_MIN_BYTES", 0)
        monkeypatch.setattr("casework.dataset.parallel.parallel_workers", lambda: 3)
    if state in ("released", "case-edited"):  # the store knows the released lines: no full load

        def full_load(*args: object) -> None:
            raise AssertionError("every row loaded")

        monkeypatch.setattr("casework.dataset.store.load_dataset", full_load)
    [removal] = expire(got, today=TODAY, now=NOW)
    extra = 1 if state == "case-edited" else 0  # c-030 expired too, c-031 kept
    assert (removal.removed, removal.expired) == (5 + extra, 5 + extra)
    assert removal.kept == 9 + extra
    assert removal.version is not None
    assert _written(got) == _written(want)
    assert set(removal.removed_ids) == {f"c-{i:03d}" for i in (0, 3, 6, 9, 12, 30)[: 5 + extra]}
    assert {"s0", "c-000"} <= set(removal.needles) and "s1" not in removal.needles


def test_expire_dry_run_reads_without_the_lock_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path / "p", "released")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}

    def no_lock(*args: object, **kwargs: object) -> None:
        raise AssertionError("a dry run takes no lock")

    monkeypatch.setattr("casework.privacy.retention.dataset_lock", no_lock)
    [removal] = expire(project, today=TODAY, now=NOW, dry_run=True)
    assert (removal.removed, removal.kept, removal.version) == (5, 9, None)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_a_tree_changed_between_reading_and_locking_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path / "p", "released")
    folder = project.dataset_dir(NAME)
    from casework.privacy import retention

    real = retention._select
    calls: list[int] = []

    def select_then_edit(*args: Any) -> Any:
        out = real(*args)
        calls.append(1)
        if len(calls) == 1:  # another writer adds an expired row after the first read
            lines = (folder / "cases.jsonl").read_text(encoding="utf-8")
            (folder / "cases.jsonl").write_text(lines + json.dumps(_case(99)) + "\n")
        return out

    monkeypatch.setattr(retention, "_select", select_then_edit)
    [removal] = expire(project, today=TODAY, now=NOW)
    assert len(calls) == 2
    assert removal.removed == 6 and "c-099" in removal.removed_ids
    assert "c-099" not in (folder / "cases.jsonl").read_text(encoding="utf-8")


def test_a_bad_line_is_reported_and_nothing_written(tmp_path: Path) -> None:
    project = _project(tmp_path / "p", "released")
    folder = project.dataset_dir(NAME)
    with (folder / "cases.jsonl").open("a", encoding="utf-8") as f:
        f.write('{"id": "c-bad", "split": "nope"}\n')
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    from casework.errors import InputErrors

    with pytest.raises(InputErrors) as exc:
        expire(project, today=TODAY, now=NOW)
    assert "cases.jsonl:15:" in str(exc.value)
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before
    shutil.rmtree(tmp_path / "p")


def test_planning_then_removing_reads_each_tree_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from casework.dataset import scan_in_jobs
    from casework.erasure import expire_everywhere
    from casework.privacy import retention

    project = _project(tmp_path / "p", "released")
    real = scan_in_jobs
    reads: list[str] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        reads.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(retention, "scan_in_jobs", counted)
    erasure = expire_everywhere(project, today=TODAY, now=NOW)  # plans (a dry run), then removes
    assert [r.removed for r in erasure.removals] == [5]
    assert reads == [NAME]
