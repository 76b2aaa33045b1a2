"""Shared fixtures: a small project on disk, a CLI runner, and workbenches copied from a migrated template."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from hypothesis import settings

from casework.cli import cli
from casework.workbench import db as workbench_db
from tests.factories import TOOLS, case_dict, write_lines
from tests.ray_cluster import FIXTURE as RAY_FIXTURE
from tests.ray_cluster import LocalRay
from tests.workbench_template import MigratedTemplate
from tests.xdist_workers import groups_first, isolate_postgres, name_group, xdist_group_of

# Test modules import τ²-bench and ADK, which import litellm, which fetches its price map from
# GitHub at import unless told not to: tests reach nothing beyond loopback (casework's own
# provider sets the same for users).
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

# Hypothesis fails an example slower than 200 ms by default. On two shared cores under coverage a
# first example can take twice that while nothing is wrong (the HTML highlighting property failed
# so at load 6), and no property here is about speed: examples have no deadline unless a test
# sets one.
settings.register_profile("casework", deadline=None)
settings.load_profile("casework")


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist, give this worker its own PostgreSQL test database.

    It runs before any test module is imported, so the modules that read ``CASEWORK_TEST_PG_URL``
    at import see the worker's database.
    """
    isolate_postgres(os.environ.get("PYTEST_XDIST_WORKER"))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark the tests that must share a worker (before xdist reads the marks); groups run first."""
    for item in items:
        group = xdist_group_of(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
            if getattr(config.option, "loadgroup", False):  # set in xdist workers only
                name_group(item, group)
    groups_first(items)


_LOCAL_RAY = LocalRay()


@pytest.fixture
def ray_local() -> Any:
    """The worker's local Ray of two CPUs (``ray``), shared by the tests that use it."""
    pytest.importorskip("ray")
    return _LOCAL_RAY.get()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Stop the shared Ray once the next test on this worker does not use it."""
    if nextitem is None or RAY_FIXTURE not in getattr(nextitem, "fixturenames", ()):
        _LOCAL_RAY.stop()


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


@pytest.fixture(scope="session")
def migrated_template(tmp_path_factory: pytest.TempPathFactory) -> MigratedTemplate:
    """The session's migrated SQLite workbench template (built lazily, on first use)."""
    return MigratedTemplate(tmp_path_factory.mktemp("workbench-template"))


@pytest.fixture(autouse=True)
def workbench_from_template(
    migrated_template: MigratedTemplate, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new SQLite workbench starts as a copy of the session's migrated template.

    Tests of the migrations themselves override this fixture with one that does nothing.
    """
    monkeypatch.setattr(workbench_db, "upgrade", migrated_template.upgrade)
