"""Fixtures of the leakage tests: a released project with planted leaks."""

from __future__ import annotations

from pathlib import Path

import pytest

from casework.dataset import read_cases, release
from casework.project import Project, load_project
from tests.leakage.corpora import PROMPT, project_rows, write_project

PROMPT_COPY = (
    "hi the steel pan from order 3141592 stopped working after two days please help me asap"
)


@pytest.fixture
def leak_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A project whose dataset `support` (release 1) holds the plants of ``project_rows``."""
    root = tmp_path / "proj"
    write_project(root, project_rows(), PROMPT.format(copied=PROMPT_COPY))
    monkeypatch.chdir(root)
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    project = load_project(root)
    cases = read_cases(root / "datasets" / "support" / "cases.jsonl")
    assert release(project, "support", cases, "first") is not None
    return project
