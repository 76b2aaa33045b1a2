"""The labeller queue's per-process file cache: kept while files are unchanged, never stale, never shared."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from fastapi import FastAPI
from sqlalchemy import func, select

from casework.labelling import (
    LabelConflict,
    States,
    WebAnswer,
    blind_case,
    labeller_queue,
    submit_label,
)
from casework.labelling._cache import cache_info, clear_caches
from casework.labelling.guidelines import bump_guideline
from casework.labelling.store import load_held_work, load_work
from casework.project import Project
from casework.web import create_app
from casework.workbench import Workbench, open_workbench
from casework.workbench.models_labelling import RawLabelRow
from tests.web.helpers import Person, person, web_project

CASES = Path("datasets") / "refunds" / "cases.jsonl"


@pytest.fixture(autouse=True)
def fresh_caches() -> Iterator[None]:
    clear_caches()
    yield
    clear_caches()


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trust files written just now (the tests write them milliseconds before reading)."""
    monkeypatch.setattr("casework.labelling._cache.RACY_NS", 0)


def _project(root: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)  # each project its own SQLite file
    return web_project(root)


def _signed_in(project: Project, name: str = "lab-1") -> tuple[FastAPI, Workbench, Person]:
    app = create_app(project)
    wb = open_workbench(project)
    return app, wb, person(app, wb, name, "labeller")


def _first_case_id(page: str) -> str:
    marker = 'hx-post="/label/refunds/'
    start = page.index(marker) + len(marker)
    return page[start : page.index('"', start)]


def _edit_turn(root: Path, case_id: str, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` in the case's first turn, writing the file in place."""
    path = root / CASES
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        if case["id"] == case_id:
            turn = case["situation"]["turns"][0]
            turn["content"] = turn["content"].replace(old, new) if old else new
        lines.append(json.dumps(case))
    with path.open("r+", encoding="utf-8") as stream:  # same inode: only size/mtime/ctime move
        stream.write("\n".join(lines) + "\n")
        stream.truncate()


@pytest.mark.usefixtures("settled")
def test_an_edit_of_the_cases_file_shows_on_the_next_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path / "proj", monkeypatch)
    app, wb, lab = _signed_in(project)
    try:
        page = lab.client.get("/label").text
        case_id = _first_case_id(page)
        before = cache_info()["datasets"]
        assert lab.client.get("/label").text.count(case_id) >= 1
        after = cache_info()["datasets"]
        assert after.hits > before.hits and after.misses == before.misses  # parsed once, kept

        _edit_turn(project.root, case_id, "", "EDITED-one")
        assert "EDITED-one" in lab.client.get("/label").text
        assert cache_info()["datasets"].misses == after.misses + 1

        # Same size, and the old mtime put back: only the ctime tells, and it is enough.
        path = project.root / CASES
        st = path.stat()
        _edit_turn(project.root, case_id, "EDITED-one", "EDITED-two")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert path.stat().st_size == st.st_size and path.stat().st_mtime_ns == st.st_mtime_ns
        shown = lab.client.get("/label").text
        assert "EDITED-two" in shown and "EDITED-one" not in shown
    finally:
        app.state.workbench.close()
        wb.close()


@pytest.mark.usefixtures("settled")
def test_one_projects_cases_are_never_served_to_another(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _project(tmp_path / "one", monkeypatch)
    second = _project(tmp_path / "two", monkeypatch)  # the same dataset name, the same case ids
    app_1, wb_1, lab_1 = _signed_in(first)
    app_2, wb_2, lab_2 = _signed_in(second)
    try:
        case_id = _first_case_id(lab_1.client.get("/label").text)
        _edit_turn(second.root, case_id, "", "ONLY-IN-PROJECT-TWO")
        for _ in range(2):  # the second round is served from the cache
            assert "ONLY-IN-PROJECT-TWO" in lab_2.client.get("/label").text
            assert "ONLY-IN-PROJECT-TWO" not in lab_1.client.get("/label").text
        assert cache_info()["datasets"].entries == 2
    finally:
        for app, wb in ((app_1, wb_1), (app_2, wb_2)):
            app.state.workbench.close()
            wb.close()


def test_files_changed_just_now_are_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path / "proj", monkeypatch)
    _edit_turn(project.root, "d-1", "", "JUST-WRITTEN")  # changed within the racy window
    with open_workbench(project) as wb, wb.session() as session:
        for _ in range(2):
            queue = labeller_queue(project, session, "lab-1")
            assert queue.assigned > 0
    info = cache_info()["datasets"]
    assert info.entries == 0 and info.misses == 2 and info.hits == 0


@pytest.mark.usefixtures("settled")
def test_a_guideline_bump_moves_the_queue_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path / "proj", monkeypatch)
    with open_workbench(project) as wb, wb.session() as session:
        held = labeller_queue(project, session, "lab-1")
        again = labeller_queue(project, session, "lab-1")
        assert again == held and cache_info()["versions"].hits >= 1
        refunds = [i for i in held.items if i.slice == "refunds"]
        assert refunds and {i.guideline_version for i in refunds} == {"refunds-g7"}
        bump_guideline(project, "refunds", "a new rule")
        after = labeller_queue(project, session, "lab-1")
    # Work under the superseded guideline is no longer held (label assign re-queues it).
    assert [i for i in after.items if i.slice == "refunds"] == []
    assert after.assigned == held.assigned - len(refunds)


@pytest.mark.usefixtures("settled")
def test_a_second_submit_read_before_the_first_committed_stores_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path / "proj", monkeypatch)
    with open_workbench(project) as wb:
        with wb.session() as session:
            case = labeller_queue(project, session, "lab-1").open_items()[0]
        args = (project, "lab-1", case.dataset, case.case_id)

        def submit(session: object, states: States) -> bool:
            return submit_label(
                args[0],
                session,  # type: ignore[arg-type]
                *args[1:],
                WebAnswer("resolve"),
                guideline_version=case.guideline_version,
                seconds_on_screen=1.0,
                now=datetime.now(UTC),
                states=states,
            )

        stale: States = {}
        with wb.session() as late:
            blind_case(project, late, "lab-1", case.dataset, case.case_id, states=stale)
            assert (
                stale
                and not blind_case(
                    project, late, "lab-1", case.dataset, case.case_id, states=stale
                ).held.done
            )
        with wb.session() as early:  # the first submit commits meanwhile
            assert submit(early, {}) is False
        with pytest.raises(LabelConflict), wb.session() as late:
            submit(late, stale)  # its read says "not done yet": the conditional update says no
        with wb.session() as session:
            count = session.scalar(
                select(func.count())
                .select_from(RawLabelRow)
                .where(RawLabelRow.case_id == case.case_id, RawLabelRow.labeller == "lab-1")
            )
    assert count == 1


def test_the_held_rows_are_every_row_of_the_held_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path / "proj", monkeypatch)
    with open_workbench(project) as wb:
        for name in ("lab-1", "lab-2"):  # some labels, so both kinds of rows are there
            with wb.session() as session:
                items = labeller_queue(project, session, name).open_items()
            for item in items[: 2 if name == "lab-1" else 1]:
                with wb.session() as session:
                    submit_label(
                        project,
                        session,
                        name,
                        item.dataset,
                        item.case_id,
                        WebAnswer("refuse" if name == "lab-2" else "resolve"),
                        guideline_version=item.guideline_version,
                        seconds_on_screen=None,
                        now=datetime.now(UTC),
                    )
        with wb.session() as session:
            whole = load_work(session, "refunds")
            for name in ("lab-1", "lab-2", "nobody"):
                held = load_held_work(session, "refunds", name, ("first", "second"))
                cases = {
                    s.assignment.case_id
                    for s in whole.assignments
                    if s.assignment.labeller == name and s.assignment.role in ("first", "second")
                }
                assert {s.assignment.case_id for s in held.assignments} == cases
                assert held.assignments == tuple(
                    s for s in whole.assignments if s.assignment.case_id in cases
                )
                assert held.labels == tuple(r for r in whole.labels if r.case_id in cases)
                assert (name == "nobody") == (not cases)
            assert any(r.labeller == "lab-2" for r in whole.labels)
