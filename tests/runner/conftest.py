"""Fixtures of the runner tests: a project on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from casework.project import Project, load_project
from tests.runner.builders import make_project


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A loaded project with the five default cases and a SQLite workbench in it."""
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = make_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    return load_project(root)
