"""The workbench: a SQL database (SQLite by default, any SQLAlchemy URL) for work in progress.

Labelling assignments and raw labels, review queues, runs and verdicts, judge certifications, the LLM response cache.
Entry points: :func:`open_workbench` (connect and check the schema revision), :func:`upgrade`
(apply Alembic migrations; ``casework db upgrade``), :class:`Base` (declarative base of all tables).
"""

from casework.workbench.db import Workbench, display_url, open_workbench, status, upgrade
from casework.workbench.models_web import (
    WebLabelViewRow,
    WebServedUseRow,
    WebSessionRow,
    WebSigninRow,
    WebSkipRow,
    WebUserRow,
)

__all__ = [
    "WebLabelViewRow",
    "WebServedUseRow",
    "WebSessionRow",
    "WebSigninRow",
    "WebSkipRow",
    "WebUserRow",
    "Workbench",
    "display_url",
    "open_workbench",
    "status",
    "upgrade",
]
