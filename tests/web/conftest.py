"""Fixtures of the web tests: the app on a labelling project (SQLite, or PostgreSQL in CI).

Each test starts from a copy of a project built once per session and backend (see
:mod:`tests.web.snapshots`): on SQLite a copied file, on PostgreSQL a database created from the
snapshot's database as template.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from sqlalchemy import make_url

from casework.project import Project, load_project
from casework.web import create_app
from casework.workbench import Workbench, open_workbench
from tests.labelling.builders import pg_database
from tests.web.helpers import Person, plant_run
from tests.web.snapshots import WebSnapshots

__all__ = ["app", "project", "team", "wb", "web_snapshots", "workbench_url"]


@pytest.fixture(scope="session")
def web_snapshots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebSnapshots]:
    """The session's web project snapshots (each built on first use, per backend)."""
    snapshots = WebSnapshots(tmp_path_factory.mktemp("web-snapshots"))
    yield snapshots
    snapshots.close()


def _snapshot_kind(request: pytest.FixtureRequest) -> str:
    return "team" if "team" in request.fixturenames else "base"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def workbench_url(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """The workbench URL the project uses: a SQLite file, or a new PostgreSQL database.

    A test on the web ``project`` gets, on PostgreSQL, a copy of the snapshot's database (the
    SQLite file is copied by ``project``); any other test gets an empty database.
    """
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'workbench.db'}"
        monkeypatch.setenv("CASEWORK_DB_URL", url)
        yield url
        return
    databases = pg_database()
    if "project" in request.fixturenames:
        snapshots: WebSnapshots = request.getfixturevalue("web_snapshots")
        databases = snapshots.pg_database(_snapshot_kind(request))
    for url in databases:
        monkeypatch.setenv("CASEWORK_DB_URL", url)
        yield url


def _sqlite_file(url: str) -> Path | None:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return None
    return Path(parsed.database)


def _from_team_snapshot(request: pytest.FixtureRequest) -> bool:
    """Whether this test's project is the ``team`` snapshot (its run is planted, its team in)."""
    return _snapshot_kind(request) == "team"


@pytest.fixture
def project(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    workbench_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> Project:
    root = tmp_path / "proj"
    monkeypatch.chdir(tmp_path)
    snapshots: WebSnapshots = request.getfixturevalue("web_snapshots")
    database = _sqlite_file(workbench_url)
    if database is None:
        snapshots.restore_pg_project(_snapshot_kind(request), root)
    else:
        snapshots.restore(_snapshot_kind(request), root, database)
    return load_project(root)


@pytest.fixture
def wb(request: pytest.FixtureRequest, project: Project) -> Iterator[Workbench]:
    with open_workbench(project) as workbench:
        if not _from_team_snapshot(request):
            plant_run(workbench)
        yield workbench


@pytest.fixture
def app(project: Project, wb: Workbench) -> Iterator[FastAPI]:
    application = create_app(project)
    yield application
    application.state.workbench.close()


@pytest.fixture
def team(
    request: pytest.FixtureRequest, app: FastAPI, wb: Workbench, workbench_url: str
) -> dict[str, Person]:
    """Two labellers who labelled (disagreeing on d-1 and u-1), two adjudicators, two reviewers
    and an admin, each signed in on their own client (the ``team`` snapshot's sessions)."""
    snapshots: WebSnapshots = request.getfixturevalue("web_snapshots")
    saved = snapshots.team(postgresql=_sqlite_file(workbench_url) is None)
    return {key: who.person(app) for key, who in saved.items()}


@pytest.fixture
def browser_page() -> Iterator[object]:
    """A page of Debian's chromium (Playwright, headless, 1280×900); the browser closes after."""
    from playwright.sync_api import sync_playwright

    from tests.web.chromium import CHROMIUM

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            yield context.new_page()
        finally:
            browser.close()
