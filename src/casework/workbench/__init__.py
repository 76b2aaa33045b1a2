"""The workbench: a SQL database (SQLite by default, any SQLAlchemy URL) for work in progress.

Labelling assignments and raw labels, review queues, runs and verdicts, the LLM response cache.
Entry points: :func:`open_workbench` (connect and check the schema revision), :func:`upgrade`
(apply Alembic migrations; ``casework db upgrade``), :class:`Base` (declarative base of all tables).
"""

from casework.workbench.base import Base
from casework.workbench.db import (
    Workbench,
    WorkbenchStatus,
    display_url,
    open_workbench,
    status,
    upgrade,
    workbench_exists,
)

__all__ = [
    "Base",
    "Workbench",
    "WorkbenchStatus",
    "display_url",
    "open_workbench",
    "status",
    "upgrade",
    "workbench_exists",
]
