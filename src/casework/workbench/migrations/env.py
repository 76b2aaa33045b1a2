"""Alembic environment: runs migrations against the URL casework passes in (no alembic.ini)."""

from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

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
    with engine.connect() as connection:
        context.configure(
            connection=connection,
            target_metadata=Base.metadata,
            render_as_batch=connection.dialect.name == "sqlite",
        )
        with context.begin_transaction():
            context.run_migrations()
    engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
