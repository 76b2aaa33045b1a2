"""Fixtures of the web tests: the app on a labelling project (SQLite, or PostgreSQL in CI).

On SQLite each test starts from a copy of a project built once per session (see
:mod:`tests.web.snapshots`); on PostgreSQL it is built for the test as before.
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
from tests.labelling.builders import workbench_url
from tests.web.helpers import Person, plant_run, web_project
from tests.web.snapshots import WebSnapshots, sign_in_team

__all__ = ["app", "project", "team", "wb", "workbench_url"]


@pytest.fixture(scope="session")
def web_snapshots(tmp_path_factory: pytest.TempPathFactory) -> WebSnapshots:
    """The session's web project snapshots (each built on first use)."""
    return WebSnapshots(tmp_path_factory.mktemp("web-snapshots"))


def _sqlite_file(url: str) -> Path | None:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database:
        return None
    return Path(parsed.database)


def _from_team_snapshot(request: pytest.FixtureRequest, workbench_url: str) -> bool:
    """Whether this test's project is the ``team`` snapshot (its run is planted, its team in)."""
    return _sqlite_file(workbench_url) is not None and "team" in request.fixturenames


@pytest.fixture
def project(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    workbench_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> Project:
    root = tmp_path / "proj"
    monkeypatch.chdir(tmp_path)
    database = _sqlite_file(workbench_url)
    if database is None:
        return web_project(root)
    snapshots: WebSnapshots = request.getfixturevalue("web_snapshots")
    snapshots.restore("team" if "team" in request.fixturenames else "base", root, database)
    return load_project(root)


@pytest.fixture
def wb(request: pytest.FixtureRequest, project: Project, workbench_url: str) -> Iterator[Workbench]:
    with open_workbench(project) as workbench:
        if not _from_team_snapshot(request, workbench_url):
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
    and an admin, each signed in on their own client."""
    if _from_team_snapshot(request, workbench_url):
        snapshots: WebSnapshots = request.getfixturevalue("web_snapshots")
        return {key: saved.person(app) for key, saved in snapshots.team().items()}
    return sign_in_team(app, wb)


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
