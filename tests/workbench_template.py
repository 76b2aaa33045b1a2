"""A migrated SQLite workbench made once per test session, copied wherever a test opens a new one."""

from __future__ import annotations

import shutil
from pathlib import Path

from sqlalchemy import make_url

from casework.workbench import db as workbench_db
from casework.workbench.db import WorkbenchStatus

#: The real migration runner, kept before any test replaces ``workbench.db.upgrade``.
_REAL_UPGRADE = workbench_db.upgrade


class MigratedTemplate:
    """One SQLite workbench per test session, made by running every migration once.

    Opening a workbench on a blank SQLite file runs every migration, which costs more than most
    small tests do; a copy of a file those same migrations produced is the same database, made
    in a file copy. Only the automatic creation in ``open_workbench`` is served from the copy:
    ``casework db upgrade`` and explicit revisions still run the migrations.
    """

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._path: Path | None = None

    def path(self) -> Path:
        """The template file, migrated on first use."""
        if self._path is None:
            path = self._folder / "workbench.db"
            _REAL_UPGRADE(f"sqlite:///{path}")
            self._path = path
        return self._path

    def upgrade(self, url: str, revision: str = "heads") -> WorkbenchStatus:
        """``workbench.db.upgrade``, copying the template onto a blank SQLite file at ``heads``."""
        target = _blank_sqlite_file(url)
        if revision != "heads" or target is None:
            return _REAL_UPGRADE(url, revision)
        shutil.copyfile(self.path(), target)
        return workbench_db.status(url)


def _blank_sqlite_file(url: str) -> Path | None:
    """The file of a SQLite URL when it is missing or empty (nothing to keep), else None."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.query:
        return None
    if parsed.database in (None, "", ":memory:"):
        return None
    path = Path(parsed.database)
    if path.exists() and path.stat().st_size > 0:
        return None
    for suffix in ("-wal", "-journal"):
        if path.with_name(path.name + suffix).exists():
            return None
    return path
