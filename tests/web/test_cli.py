"""`casework serve users` and `casework serve` from the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from fastapi import FastAPI
from starlette.testclient import TestClient

from casework.project import Project
from tests.web.helpers import sign_in_with

SRC = Path(__file__).parents[2] / "src"


def test_users_add_list_link_disable(
    project: Project, app: FastAPI, run_cli: Callable[..., Result]
) -> None:
    root = str(project.root)
    added = run_cli(
        "--project",
        root,
        "serve",
        "users",
        "add",
        "lab-1",
        "--role",
        "labeller",
        "--role",
        "reviewer",
        "--port",
        "9123",
    )
    assert added.exit_code == 0, added.output
    link = added.stdout.strip().splitlines()[-1]
    assert link.startswith("http://127.0.0.1:9123/signin/")
    assert sign_in_with(TestClient(app), link.rsplit("/", 1)[1]).status_code == 303
    listed = json.loads(
        run_cli("--project", root, "serve", "users", "list", "--format", "json").stdout
    )
    assert listed[0]["name"] == "lab-1" and listed[0]["roles"] == ["labeller", "reviewer"]
    assert listed[0]["disabled"] is False and listed[0]["last_seen"] is not None
    fresh = run_cli(
        "--project", root, "serve", "users", "link", "lab-1", "--https", "--host", "lab.example"
    )
    assert fresh.stdout.strip().startswith("https://lab.example:8700/signin/")
    disabled = run_cli("--project", root, "serve", "users", "disable", "lab-1")
    assert "ended 1 session" in disabled.stdout
    table = run_cli("--project", root, "serve", "users", "list").stdout
    assert "lab-1" in table and "yes" in table


def test_users_errors_are_one_line(project: Project, run_cli: Callable[..., Result]) -> None:
    root = str(project.root)
    bad = run_cli("--project", root, "serve", "users", "add", "no spaces", "--role", "labeller")
    assert bad.exit_code == 2 and "NAME: a labeller id" in bad.stderr
    missing = run_cli("--project", root, "serve", "users", "disable", "nobody")
    assert missing.exit_code == 2 and "no user 'nobody'" in missing.stderr


def test_help_loads_no_web_stack(tmp_path: Path) -> None:
    probe = (
        "import sys; from casework.cli import cli\n"
        "try:\n    cli.main(sys.argv[1:], prog_name='casework')\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('fastapi', 'starlette', 'uvicorn', 'argon2', 'casework')"
        " and (m.startswith('casework.web') or not m.startswith('casework'))))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    for args in (["--help"], ["serve", "--help"], ["serve", "users", "--help"]):
        done = subprocess.run(
            [sys.executable, "-c", probe, *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        assert done.stdout.strip().splitlines()[-1] == "[]", (args, done.stdout)
