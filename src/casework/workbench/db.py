"""Connecting to the workbench and keeping its schema at the current Alembic revision."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from alembic import command
from alembic.config import Config as AlembicConfig
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event, inspect, make_url
from sqlalchemy.engine import Connection
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from casework import __version__
from casework.errors import Hint, WorkbenchError
from casework.project import Project

__all__ = [
    "Workbench",
    "WorkbenchStatus",
    "display_url",
    "open_workbench",
    "status",
    "upgrade",
    "workbench_exists",
]

_MIGRATIONS = Path(__file__).parent / "migrations"


def display_url(url: str) -> str:
    """The URL with any password masked, for messages."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except Exception:  # an unparsable URL is shown as given: it holds no parsed password
        return url


def workbench_exists(project: Project) -> bool:
    """Whether the project's workbench may hold rows: a server database, or a SQLite file present.

    Commands that only read (dry runs) use it to avoid creating a database.
    """
    parsed = make_url(project.workbench_url())
    if parsed.get_backend_name() != "sqlite":
        return True
    return parsed.database not in (None, "", ":memory:") and Path(parsed.database).exists()


def _alembic_config(url: str) -> AlembicConfig:
    cfg = AlembicConfig()
    cfg.set_main_option("path_separator", "os")
    cfg.set_main_option("script_location", str(_MIGRATIONS))
    cfg.set_main_option("version_locations", str(_MIGRATIONS / "versions"))
    cfg.attributes["casework_url"] = url
    return cfg


#: Connections a server's engine keeps open by default (``pool_size`` of :func:`open_workbench`).
#: Each request holds one at a time; connections beyond the pool are opened at a peak and closed
#: again when returned, which costs a connect each time (a few ms on PostgreSQL), so the pool
#: should cover the requests a worker really runs at once.
SERVER_POOL_SIZE = 20
#: Connections a server's engine may open beyond its pool at a peak (then closes again).
SERVER_POOL_OVERFLOW = 10


def _engine(url: str, *, server: bool = False, pool_size: int | None = None) -> Engine:
    parsed = make_url(url)
    sqlite = parsed.get_backend_name() == "sqlite"
    file = parsed.database if sqlite and parsed.database not in (None, "", ":memory:") else None
    if file is not None:
        Path(file).parent.mkdir(parents=True, exist_ok=True)
    if server and (file is not None or not sqlite):  # one in-memory SQLite: keep its own pool
        size = SERVER_POOL_SIZE if pool_size is None else pool_size
        engine = create_engine(url, future=True, pool_size=size, max_overflow=SERVER_POOL_OVERFLOW)
    else:
        engine = create_engine(url, future=True)
    if sqlite:
        wal = server and file is not None

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn: object, _record: object) -> None:
            cursor = dbapi_conn.cursor()  # type: ignore[attr-defined]
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA busy_timeout=5000")
            if wal:  # readers never wait for the writer, and it for them
                cursor.execute("PRAGMA journal_mode=WAL")
                # In WAL mode NORMAL syncs at checkpoints, not at every commit: still safe against
                # corruption; a power cut may lose the last commits (an OS crash alone does not).
                cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

    return engine


@dataclass(frozen=True)
class WorkbenchStatus:
    """Where a workbench database stands against the migrations this casework ships."""

    url: str
    current: tuple[str, ...]
    heads: tuple[str, ...]
    empty: bool

    @property
    def up_to_date(self) -> bool:
        """True when the database is at every head revision."""
        return set(self.current) == set(self.heads)


@functools.cache
def _shipped_heads() -> tuple[str, ...]:
    """The head revisions of the migrations this casework ships, read once a process.

    Every open of a workbench compares against them, and reading the scripts costs ~6 ms a time.
    """
    script = ScriptDirectory.from_config(_alembic_config(""))
    return tuple(sorted(script.get_heads()))


def _status_on(conn: Connection, url: str) -> WorkbenchStatus:
    context = MigrationContext.configure(conn)
    current = tuple(sorted(context.get_current_heads()))
    empty = not current and not inspect(conn).get_table_names()
    return WorkbenchStatus(url=url, current=current, heads=_shipped_heads(), empty=empty)


def status(url: str) -> WorkbenchStatus:
    """Read the revision a workbench database is at.

    Raises:
        WorkbenchError: The database cannot be reached.
    """
    engine = _engine(url)
    try:
        with engine.connect() as conn:
            return _status_on(conn, url)
    except SQLAlchemyError as exc:
        raise WorkbenchError(
            f"workbench database {display_url(url)} is unreachable: "
            f"{exc.__class__.__name__}: {str(exc.orig if hasattr(exc, 'orig') else exc).strip()}. "
            "Check the URL (CASEWORK_DB_URL or [workbench] url in casework.toml) and that the server runs."
        ) from exc
    finally:
        engine.dispose()


def upgrade(url: str, revision: str = "heads") -> WorkbenchStatus:
    """Apply migrations up to ``revision`` (default: every head) and return the new status.

    The migrations run in one transaction: one that fails leaves the database as it was.

    Raises:
        WorkbenchError: Unreachable, or a migration failed (nothing was changed).
    """
    status(url)  # reachability first, with a clear message
    try:
        command.upgrade(_alembic_config(url), revision)
    except SQLAlchemyError as exc:
        cause = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
        raise WorkbenchError(
            f"workbench database {display_url(url)}: a migration failed, so nothing was changed "
            f"(they run in one transaction): {exc.__class__.__name__}: {cause}. A table of "
            "casework's in a database it did not create may be in the way; point the workbench at "
            "an empty database (CASEWORK_DB_URL or [workbench] url in casework.toml)."
        ) from exc
    return status(url)


@dataclass
class Workbench:
    """An open workbench database; a context manager that closes it (``with open_workbench(p) as wb``)."""

    url: str
    engine: Engine
    _sessions: sessionmaker[Session]
    _readers: sessionmaker[Session] | None = None

    @contextlib.contextmanager
    def session(self) -> Iterator[Session]:
        """A session in one transaction: committed on success, rolled back on error."""
        with self._sessions.begin() as session:
            yield session

    @contextlib.contextmanager
    def reading(self) -> Iterator[Session]:
        """A session for reads (and single-statement writes) that need no transaction of their own.

        Each statement sees what was committed when it started, as in :meth:`session` on
        PostgreSQL (READ COMMITTED) and SQLite, but a PostgreSQL server runs it in autocommit
        mode: no BEGIN and COMMIT round trips. Use :meth:`session` when statements must stand or
        fall together.
        """
        with (self._readers or self._sessions).begin() as session:
            yield session

    def close(self) -> None:
        """Release the connection pool."""
        self.engine.dispose()

    def __enter__(self) -> Workbench:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def open_workbench(
    project: Project | None = None,
    *,
    url: str | None = None,
    server: bool = False,
    pool_size: int | None = None,
) -> Workbench:
    """Open the project's workbench (or ``url``), creating a new one at the current schema.

    A database with no tables is brought to the current revision automatically; one at an older
    revision is refused with the command to run, so nothing writes into a schema it does not know.
    ``server`` tunes the engine for many concurrent requests (the web app): a SQLite file goes
    to WAL mode (kept in the file; writers queue on the 5 s busy timeout while readers go on)
    with ``synchronous=NORMAL``, and the pool keeps ``pool_size`` connections open (default
    :data:`SERVER_POOL_SIZE`) and opens up to :data:`SERVER_POOL_OVERFLOW` more at a peak.

    Raises:
        WorkbenchError: Unreachable, or at another revision than this casework expects.
    """
    if url is None:
        if project is None:
            raise ValueError("open_workbench needs a project or a url")
        url = project.workbench_url()
    st = status(url)
    if st.empty:
        st = upgrade(url)
        _stamp_meta(url)
    if not st.up_to_date:
        have = ", ".join(st.current) or "none"
        want = ", ".join(st.heads)
        raise WorkbenchError(
            f"workbench database {display_url(url)} is at revision {have}, "
            f"but this casework expects {want}."
        ).suggest(Hint("db upgrade", why="to migrate it in place"))
    engine = _engine(url, server=server, pool_size=pool_size)
    readers = None
    if engine.dialect.name != "sqlite":  # pysqlite never opens a transaction for reads anyway
        autocommit = engine.execution_options(isolation_level="AUTOCOMMIT")
        readers = sessionmaker(autocommit, expire_on_commit=False)
    return Workbench(url, engine, sessionmaker(engine, expire_on_commit=False), readers)


def _stamp_meta(url: str) -> None:
    # Lazy: models.py imports this package's __init__, which imports this module.
    from casework.workbench.models import Meta

    engine = _engine(url)
    try:
        with Session(engine) as session, session.begin():
            now = datetime.now(UTC)
            session.merge(Meta(key="created_by", value=f"casework {__version__}", updated_at=now))
    finally:
        engine.dispose()
