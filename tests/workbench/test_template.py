"""The test suite's migrated template is the database the migrations make from nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, inspect, text

from casework.workbench import db, open_workbench, status
from casework.workbench.models import Meta
from tests.workbench_template import MigratedTemplate


def _schema(url: str) -> dict[str, Any]:
    """Every table with its columns, indexes, unique and foreign keys, and the stamped revision."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            found = inspect(conn)
            tables = {
                table: {
                    "columns": [
                        (c["name"], str(c["type"]), c["nullable"]) for c in found.get_columns(table)
                    ],
                    "primary": found.get_pk_constraint(table)["constrained_columns"],
                    "indexes": sorted(
                        (i["name"] or "", tuple(i["column_names"]))
                        for i in found.get_indexes(table)
                    ),
                    "uniques": sorted(
                        (u["name"] or "", tuple(u["column_names"]))
                        for u in found.get_unique_constraints(table)
                    ),
                    "foreign": sorted(
                        (tuple(f["constrained_columns"]), f["referred_table"])
                        for f in found.get_foreign_keys(table)
                    ),
                }
                for table in found.get_table_names()
            }
            revision = sorted(
                conn.execute(text("SELECT version_num FROM alembic_version")).scalars()
            )
    finally:
        engine.dispose()
    return {"tables": tables, "revision": revision}


def test_a_copy_of_the_template_equals_a_database_migrated_from_nothing(
    migrated_template: MigratedTemplate, tmp_path: Path
) -> None:
    fresh = f"sqlite:///{tmp_path / 'fresh.db'}"
    copied = f"sqlite:///{tmp_path / 'copied.db'}"
    open_workbench(url=fresh).close()
    migrated_template.upgrade(copied)
    assert _schema(copied) == _schema(fresh)
    assert len(_schema(fresh)["tables"]) > 5
    assert status(copied).up_to_date


def test_open_workbench_on_a_blank_file_uses_the_template_and_stamps_it(
    migrated_template: MigratedTemplate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    copies: list[str] = []

    def counting(url: str, revision: str = "heads") -> Any:
        copies.append(url)
        return migrated_template.upgrade(url, revision)

    monkeypatch.setattr(db, "upgrade", counting)
    url = f"sqlite:///{tmp_path / 'new.db'}"
    with open_workbench(url=url) as wb, wb.session() as session:
        assert session.get(Meta, "created_by") is not None
    assert copies == [url]
    assert _schema(url) == _schema(f"sqlite:///{migrated_template.path()}")


def test_a_file_with_content_or_another_revision_is_migrated_for_real(
    migrated_template: MigratedTemplate, tmp_path: Path
) -> None:
    path = tmp_path / "old.db"
    url = f"sqlite:///{path}"
    migrated_template.upgrade(url, "0001_base")
    assert status(url).current == ("0001_base",)
    migrated_template.upgrade(url)
    assert status(url).up_to_date
