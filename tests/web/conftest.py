"""Fixtures of the web tests: the app on a labelling project (SQLite, or PostgreSQL in CI)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI

from casework.project import Project
from casework.web import create_app
from casework.workbench import Workbench, open_workbench
from tests.labelling.builders import workbench_url
from tests.web.helpers import plant_run, web_project

__all__ = ["app", "project", "wb", "workbench_url"]


@pytest.fixture
def project(tmp_path: Path, workbench_url: str, monkeypatch: pytest.MonkeyPatch) -> Project:
    root = tmp_path / "proj"
    monkeypatch.chdir(tmp_path)
    return web_project(root)


@pytest.fixture
def wb(project: Project) -> Iterator[Workbench]:
    with open_workbench(project) as workbench:
        plant_run(workbench)
        yield workbench


@pytest.fixture
def app(project: Project, wb: Workbench) -> Iterator[FastAPI]:
    application = create_app(project)
    yield application
    application.state.workbench.close()
