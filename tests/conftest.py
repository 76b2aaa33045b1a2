"""Shared fixtures: a small project on disk and a CLI runner."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from tests.factories import TOOLS, case_dict, write_lines


@pytest.fixture
def project_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with three tools and a dataset `refunds` of three cases, in a git repository."""
    root = tmp_path / "proj"
    (root / "agent").mkdir(parents=True)
    (root / "casework.toml").write_text('name = "test"\n', encoding="utf-8")
    (root / "agent" / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    write_lines(
        root / "datasets" / "refunds" / "cases.jsonl",
        [case_dict("r-3"), case_dict("r-1", split="holdout"), case_dict("r-2", slice="status")],
    )
    monkeypatch.chdir(root)
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    return root


@pytest.fixture
def run_cli() -> Callable[..., Result]:
    """Invoke the CLI in-process; returns click's Result (stdout and stderr kept apart)."""
    runner = CliRunner()

    def _run(*args: str) -> Result:
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return _run
