"""A project to mine into: id patterns for the example's order and customer ids, a git work tree."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from casework.project import Project, load_project

KEY = "mining-tests-key-not-secret-0123456789"
EXAMPLE_TRACES = Path(__file__).resolve().parents[2] / "examples" / "refunds" / "traces"

CONFIG = """name = "mining-test"

[privacy]
retention_days = 30

[privacy.id_patterns]
order = '\\bORD-\\d{6}\\b'
customer = '\\bCUS-\\d{5}\\b'
"""


@pytest.fixture
def mining_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """An empty project in a git work tree, with the pseudonym key in the environment."""
    root = tmp_path / "proj"
    root.mkdir()
    (root / "casework.toml").write_text(CONFIG, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.chdir(root)
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", KEY)
    return load_project(root)
