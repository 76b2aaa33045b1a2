"""Tests run on every core (pytest-xdist): each worker has its own PostgreSQL database."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import cast

import pytest
from sqlalchemy import create_engine, make_url, text

from tests import conftest
from tests.xdist_workers import (
    FORKS,
    PG_ENV,
    RAY,
    ensure_database,
    groups_first,
    worker_database_url,
    xdist_group_of,
)

ROOT = Path(__file__).resolve().parents[1]
BASE = "postgresql+psycopg://casework:secret@127.0.0.1:5432/casework_test"


def test_each_worker_gets_a_database_named_after_it() -> None:
    urls = {worker_database_url(BASE, worker) for worker in ("gw0", "gw1", "gw12")}
    assert {make_url(url).database for url in urls} == {
        "casework_test_gw0",
        "casework_test_gw1",
        "casework_test_gw12",
    }
    for url in urls:
        parsed = make_url(url)
        assert (parsed.username, parsed.password, parsed.host, parsed.port) == (
            "casework",
            "secret",
            "127.0.0.1",
            5432,
        )


def test_a_process_started_by_a_worker_keeps_the_workers_database() -> None:
    inherited = worker_database_url(BASE, "gw1")
    assert worker_database_url(inherited, "gw1") == inherited


def test_only_a_worker_id_names_a_database() -> None:
    with pytest.raises(ValueError, match="not a pytest-xdist worker id: 'master'"):
        worker_database_url(BASE, "master")


def test_make_pytest_runs_the_suite_on_every_core_and_ci_measures_coverage() -> None:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\npytest:", 1)[1].split("\n\n", 1)[0]
    assert re.search(r"pytest .*-n auto --dist loadgroup \$\(COV_ARGS\)", recipe)
    assert "-p no:cacheprovider" in recipe and "PYTHONDONTWRITEBYTECODE= " in recipe
    assert "COV_ARGS := $(if $(COVERAGE),--cov --cov-report=term:skip-covered)" in makefile
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"^make test COVERAGE=1$", ci, re.M)  # nothing CI measured is dropped


@pytest.mark.postgres
def test_this_worker_uses_its_own_postgresql_database() -> None:
    url = os.environ.get(PG_ENV)
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not url or not worker:
        pytest.skip("runs under pytest-xdist with CASEWORK_TEST_PG_URL set (as `make pytest` does)")
    assert make_url(url).database.endswith(f"_{worker}")  # type: ignore[union-attr]
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            assert (
                conn.execute(text("SELECT current_database()")).scalar() == make_url(url).database
            )
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_a_workers_database_is_created_once() -> None:
    base = os.environ.get(PG_ENV)
    if not base:
        pytest.skip("CASEWORK_TEST_PG_URL is not set (CI sets it to a live PostgreSQL server)")
    url = worker_database_url(base, f"gw{uuid.uuid4().int % 10**9}")
    name = make_url(url).database
    admin = create_engine(
        make_url(base).set(database=re.sub(r"_gw[0-9]+$", "", make_url(base).database or "")),
        isolation_level="AUTOCOMMIT",
    )
    try:
        ensure_database(url)
        ensure_database(url)
        with admin.connect() as conn:
            count = conn.execute(
                text("SELECT count(*) FROM pg_database WHERE datname = :n"), {"n": name}
            ).scalar()
            assert count == 1
            conn.execute(text(f'DROP DATABASE "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


@pytest.fixture(scope="module")
def shared() -> list[str]:
    return []


def test_a_module_sharing_a_module_fixture_runs_on_one_worker(
    request: pytest.FixtureRequest, shared: list[str]
) -> None:
    assert xdist_group_of(request.node) == "tests/test_xdist_workers.py"
    marker = request.node.get_closest_marker("xdist_group")
    assert marker is not None and marker.args == ("tests/test_xdist_workers.py",)
    # Under `--dist loadgroup` the group is the node id's suffix, which is all the scheduler reads
    # (pytest-xdist's own suffix is lost on pytest 9.2: tests/xdist_workers.name_group sets it).
    loadgroup = getattr(request.config.option, "loadgroup", False)
    assert request.node.nodeid.endswith("@tests/test_xdist_workers.py") == loadgroup


def test_the_browser_tests_share_one_worker() -> None:
    browser = SimpleNamespace(path=ROOT / "tests" / "web" / "test_browser_flow.py")
    other = SimpleNamespace(
        path=ROOT / "tests" / "web" / "test_pages.py",
        _fixtureinfo=None,
        get_closest_marker=lambda _: None,
    )
    assert xdist_group_of(cast(pytest.Item, browser)) == "browser"
    assert xdist_group_of(cast(pytest.Item, other)) is None
    forks = SimpleNamespace(
        path=ROOT / "tests" / "agreement" / "test_fastread.py",
        get_closest_marker=lambda name: pytest.mark.forks.mark if name == "forks" else None,
    )
    assert xdist_group_of(cast(pytest.Item, forks)) == FORKS


def test_the_ray_tests_share_one_worker() -> None:
    def item(module: str, fixtures: tuple[str, ...]) -> pytest.Item:
        return cast(
            pytest.Item,
            SimpleNamespace(
                path=ROOT / "tests" / module,
                fixturenames=fixtures,
                get_closest_marker=lambda _: None,
            ),
        )

    for module in ("leakage/test_ray.py", "shapes/test_ray_build.py", "runner/test_shards_ray.py"):
        assert xdist_group_of(item(module, ("tmp_path", "ray_local"))) == RAY
        assert 'usefixtures("ray_local")' in (ROOT / "tests" / module).read_text(encoding="utf-8")
    assert xdist_group_of(item("leakage/test_scan.py", ("tmp_path",))) != RAY


def test_the_shared_ray_stops_when_the_next_test_does_not_use_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stops: list[str] = []
    monkeypatch.setattr(conftest, "_LOCAL_RAY", SimpleNamespace(stop=lambda: stops.append("stop")))

    def item(*fixtures: str) -> pytest.Item:
        return cast(pytest.Item, SimpleNamespace(fixturenames=fixtures))

    conftest.pytest_runtest_teardown(item("ray_local"), item("tmp_path", "ray_local"))
    assert stops == []
    conftest.pytest_runtest_teardown(item("ray_local"), item("tmp_path"))
    assert stops == ["stop"]
    conftest.pytest_runtest_teardown(item("ray_local"), None)
    assert stops == ["stop", "stop"]


@pytest.mark.slow
def test_a_parallel_run_with_coverage_reports_it(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COV_CORE_", "PYTEST_"))}
    env["COVERAGE_RCFILE"] = str(ROOT / "pyproject.toml")
    env["COVERAGE_FILE"] = str(tmp_path / ".coverage")  # apart from the data of this run
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
            *("-n", "1", "--basetemp", str(tmp_path / "t")),
            # One parametrised test (15 items, no project built): the worker still starts
            # coverage after tests/conftest.py imported casework, which is what ended in
            # INTERNALERROR before (checked: without `disable_warnings` this run still fails).
            *("--cov", "--cov-report=term", "tests/test_names.py::test_hostile_names_are_refused"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "INTERNALERROR" not in done.stdout
    assert re.search(r"^TOTAL\s+\d+", done.stdout, re.M)


def test_grouped_tests_are_handed_out_first_each_in_its_order() -> None:
    def item(name: str, group: str | None) -> pytest.Item:
        mark = pytest.mark.xdist_group(group).mark if group else None
        return cast(pytest.Item, SimpleNamespace(name=name, get_closest_marker=lambda _: mark))

    items = [item("a", None), item("f1", "fuzz"), item("b", None), item("w1", "web")]
    items += [item("f2", "fuzz"), item("k1", FORKS)]
    groups_first(items)
    # the forking tests first (no earlier test has left a thread in their worker), then groups
    assert [i.name for i in items] == ["k1", "f1", "w1", "f2", "a", "b"]
