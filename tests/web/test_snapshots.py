"""A test's copy of a web snapshot holds what building the project for the test would hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text

from tests.labelling.builders import pg_database
from tests.web.helpers import web_project
from tests.web.snapshots import WebSnapshots

#: What differs between two builds of one project: release times and the random part of pack names.
_PER_BUILD = re.compile(rb'"created_at": ?"[^"]*"|(?<=[0-9a-f]{16}-)[0-9a-f]{8}')


def _files(root: Path) -> dict[str, bytes]:
    """Every file of a project but git's own, by path inside the project, per-build parts blanked."""
    return {
        _PER_BUILD.sub(b"", str(path.relative_to(root)).encode()).decode(): _PER_BUILD.sub(
            b"", path.read_bytes()
        )
        for path in sorted(root.rglob("*"))
        if path.is_file() and ".git" not in path.relative_to(root).parts
    }


def _rows(database: Path | str) -> dict[str, int]:
    """Rows per table (timestamps and random ids differ between two builds; counts may not).

    ``database`` is a SQLite file or a database URL.
    """
    engine = create_engine(database if isinstance(database, str) else f"sqlite:///{database}")
    try:
        with engine.connect() as conn:
            return {
                table: int(conn.execute(text(f'SELECT count(*) FROM "{table}"')).scalar_one())
                for table in inspect(conn).get_table_names()
            }
    finally:
        engine.dispose()


def test_the_base_snapshot_is_the_web_project(
    web_snapshots: WebSnapshots, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built, copied = tmp_path / "built", tmp_path / "copied"
    built.mkdir()
    monkeypatch.chdir(built)
    monkeypatch.setenv("CASEWORK_DB_URL", f"sqlite:///{built / 'workbench.db'}")
    web_project(built / "proj")
    copied.mkdir()
    web_snapshots.restore("base", copied / "proj", copied / "workbench.db")
    assert _files(copied / "proj") == _files(built / "proj")
    assert (copied / "proj" / ".git").is_dir()
    rows = _rows(built / "workbench.db")
    assert rows["labelling_assignments"] > 0
    assert _rows(copied / "workbench.db") == rows


def test_the_team_snapshot_signs_in_everyone_once(web_snapshots: WebSnapshots) -> None:
    team = web_snapshots.team()
    assert sorted(team) == ["adj-1", "adj-2", "admin", "lab-1", "lab-2", "rev-1", "rev-2"]
    assert team["admin"].name == "boss"
    assert all(saved.cookies and saved.csrf for saved in team.values())


@pytest.mark.postgres
def test_a_postgresql_copy_of_the_base_snapshot_is_the_web_project(
    web_snapshots: WebSnapshots, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for built_url in pg_database():
        monkeypatch.setenv("CASEWORK_DB_URL", built_url)
        web_project(tmp_path / "built")
        for copied_url in web_snapshots.pg_database("base"):
            web_snapshots.restore_pg_project("base", tmp_path / "copied")
            assert _files(tmp_path / "copied") == _files(tmp_path / "built")
            rows = _rows(built_url)
            assert rows["labelling_assignments"] > 0
            assert _rows(copied_url) == rows
