"""Alembic environment: runs migrations against the URL casework passes in (no alembic.ini)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine, event

import casework.workbench.models  # noqa: F401  (registers every table on Base.metadata)
from casework.workbench.base import Base

config = context.config
url = config.attributes.get("casework_url") or config.get_main_option("sqlalchemy.url")


def run_migrations_offline() -> None:
    """Emit SQL without a connection (`alembic upgrade --sql`)."""
    context.configure(url=url, target_metadata=Base.metadata, literal_binds=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    """Apply migrations over a live connection, in one transaction."""
    engine = create_engine(str(url))
    sqlite = engine.dialect.name == "sqlite"
    if sqlite:
        # Python's sqlite3 sends no BEGIN before DDL, so every CREATE and ALTER committed on its
        # own (a crash could leave half a schema, and each commit waited for the disk: ~0.9 s to
        # create a workbench). SQLite's DDL is transactional: the driver is left in autocommit and
        # the transaction opened here, so the whole upgrade commits once, or not at all.
        @event.listens_for(engine, "connect")
        def _driver_autocommit(dbapi_conn: object, _record: object) -> None:
            dbapi_conn.isolation_level = None  # type: ignore[attr-defined]

        @event.listens_for(engine, "begin")
        def _begin(conn: Connection) -> None:
            conn.exec_driver_sql("BEGIN")

    try:
        with engine.connect() as connection:
            context.configure(
                connection=connection,
                target_metadata=Base.metadata,
                render_as_batch=sqlite,
                transactional_ddl=True,
            )
            with context.begin_transaction():
                context.run_migrations()
    finally:  # a failed migration too: the pool's connection is closed, not left to the collector
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
