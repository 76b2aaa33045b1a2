"""Fixtures of the labelling tests: a project with guidelines and a workbench on SQLite or PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from casework.dataset import load_dataset, release
from casework.project import Project, load_project
from tests.labelling.builders import make_project, workbench_url

__all__ = ["lab_project", "workbench_url"]


@pytest.fixture
def lab_project(tmp_path: Path, workbench_url: str, monkeypatch: pytest.MonkeyPatch) -> Project:
    """The labelling test project, released once, with its workbench at ``workbench_url``."""
    root = make_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    project = load_project(root)
    release(project, "refunds", load_dataset(project, "refunds").cases, "drafts")
    return project
