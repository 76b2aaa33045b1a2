from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect, text

from casework.errors import WorkbenchError
from casework.workbench import open_workbench, status, upgrade
from casework.workbench.models import Meta

PG_URL = os.environ.get("CASEWORK_TEST_PG_URL")


def _reset_pg(url: str) -> None:
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'wb.db'}"
        return
    if not PG_URL:
        pytest.skip("CASEWORK_TEST_PG_URL is not set (CI sets it to a live PostgreSQL server)")
    _reset_pg(PG_URL)
    yield PG_URL
    _reset_pg(PG_URL)


def test_new_database_is_created_at_head(db_url: str) -> None:
    wb = open_workbench(url=db_url)
    try:
        st = status(db_url)
        assert st.up_to_date and st.current == st.heads
        with wb.session() as session:
            assert session.get(Meta, "created_by") is not None
    finally:
        wb.close()


def test_outdated_database_is_refused_until_upgraded(db_url: str) -> None:
    upgrade(db_url, "0001_base")
    st = status(db_url)
    if st.up_to_date:
        pytest.skip("only the base revision exists; nothing can be outdated yet")
    with pytest.raises(WorkbenchError) as info:
        open_workbench(url=db_url)
    assert "is at revision 0001_base, but this casework expects" in str(info.value)
    assert "Next: `casework db upgrade` to migrate it in place." in str(info.value)
    upgrade(db_url)
    open_workbench(url=db_url).close()


def test_every_table_of_the_models_is_created_by_migrations(db_url: str) -> None:
    from casework.workbench.base import Base

    open_workbench(url=db_url).close()
    engine = create_engine(db_url)
    try:
        tables = set(inspect(engine).get_table_names())
    finally:
        engine.dispose()
    assert set(Base.metadata.tables) <= tables


def test_unreachable_database_names_the_url_without_password() -> None:
    url = "postgresql+psycopg://me:secret@127.0.0.1:9/nowhere"
    with pytest.raises(WorkbenchError) as info:
        open_workbench(url=url)
    message = str(info.value)
    assert message.startswith(
        "workbench database postgresql+psycopg://me:***@127.0.0.1:9/nowhere is unreachable:"
    )
    assert "secret" not in message
    assert "CASEWORK_DB_URL" in message


def test_an_upgrade_that_fails_midway_leaves_no_half_schema(db_url: str) -> None:
    # Failed before migrations ran in one transaction on SQLite: the base revision's tables and
    # every migration applied before the failing one stayed behind (each DDL committed alone);
    # and the error came out of `casework db upgrade` as a traceback.
    engine = create_engine(db_url)
    try:
        with engine.begin() as conn:  # a later migration's table, in the way
            conn.execute(text("CREATE TABLE judge_review_items (x INTEGER)"))
        with pytest.raises(WorkbenchError, match="a migration failed, so nothing was changed"):
            upgrade(db_url)
        with pytest.raises(WorkbenchError, match="is at revision none"):
            open_workbench(url=db_url)
        assert set(inspect(engine).get_table_names()) == {"judge_review_items"}
    finally:
        engine.dispose()
