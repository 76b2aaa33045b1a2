"""Web projects made once per session and copied into each test: the labelling project, and the
same project with the staff pages' team signed in and labelling done.

On SQLite a test's workbench is a copy of the snapshot's file; on PostgreSQL it is a database
created with the snapshot's database as its template (PostgreSQL copies it; no migration runs).
"""

from __future__ import annotations

import shutil
import sqlite3
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.cookiejar import Cookie
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.exc import DBAPIError
from starlette.testclient import TestClient

from casework.project import Project, load_project
from casework.web import create_app
from casework.workbench import Workbench, open_workbench
from tests.labelling.builders import PG_URL, drop_database
from tests.web.helpers import Person, person, plant_run, web_project
from tests.web.pages import label_all

#: The staff pages' team: who signs in, with which roles (labels come from ``label_all``).
TEAM: dict[str, tuple[str, ...]] = {
    "lab-1": ("labeller",),
    "lab-2": ("labeller",),
    "adj-1": ("adjudicator",),
    "adj-2": ("adjudicator",),
    "rev-1": ("reviewer",),
    "rev-2": ("reviewer",),
    "admin": ("admin",),
}
#: The user name of the team's admin (their key in :data:`TEAM` is ``admin``).
_USER_OF = {"admin": "boss"}


def sign_in_team(app: Any, wb: Workbench) -> dict[str, Person]:
    """Sign in :data:`TEAM`; lab-1 and lab-2 label (disagreeing on d-1 and u-1)."""
    people = {key: person(app, wb, _USER_OF.get(key, key), *roles) for key, roles in TEAM.items()}
    label_all(people["lab-1"], people["lab-2"])
    return people


@dataclass(frozen=True)
class SavedSignIn:
    """A signed-in person of a snapshot: the cookies their sign-in set and their CSRF token."""

    name: str
    cookies: tuple[Cookie, ...]
    csrf: str

    def person(self, app: Any) -> Person:
        """A client of ``app`` holding this session (valid in any copy of the snapshot)."""
        client = TestClient(app)
        for cookie in self.cookies:
            client.cookies.jar.set_cookie(cookie)
        return Person(self.name, client, self.csrf)


class WebSnapshots:
    """The web project built once per session (per backend), copied into each test.

    ``base`` is :func:`web_project` (released, assigned; its workbench made by the migrations).
    ``team`` is ``base`` after :func:`plant_run` and :func:`sign_in_team`: the people's sessions
    and labels are rows of the copied database, so the saved cookies sign them in there too.
    The PostgreSQL snapshots are databases on the test server, dropped by :meth:`close`.
    """

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._built: set[str] = set()
        self._team: dict[str, dict[str, SavedSignIn]] = {}
        self._pg_templates: dict[str, str] = {}

    def restore(self, kind: str, root: Path, database: Path) -> None:
        """Copy snapshot ``kind`` (``base`` or ``team``) to project ``root`` and ``database``."""
        self._build(kind)
        shutil.copytree(self._folder / kind / "proj", root, symlinks=True)
        shutil.copyfile(self._folder / kind / "workbench.db", database)

    def restore_pg_project(self, kind: str, root: Path) -> None:
        """Copy the project folder of PostgreSQL snapshot ``kind`` to ``root``.

        Its database is the one :meth:`pg_database` made for the test.
        """
        self._build_pg(kind)
        shutil.copytree(self._folder / "pg" / kind / "proj", root, symlinks=True)

    def pg_database(self, kind: str) -> Iterator[str]:
        """A new PostgreSQL database holding snapshot ``kind``'s workbench, dropped afterwards."""
        template = self._build_pg(kind)
        name = f"cw_web_{uuid.uuid4().hex[:12]}"
        _create_database(name, template)
        try:
            yield _pg_url(name)
        finally:
            _admin(drop_database, name)

    def team(self, *, postgresql: bool = False) -> dict[str, SavedSignIn]:
        """The team's saved sign-ins, by :data:`TEAM` key."""
        if postgresql:
            self._build_pg("team")
            return self._team["postgresql"]
        self._build("team")
        return self._team["sqlite"]

    def close(self) -> None:
        """Drop the PostgreSQL snapshot databases made this session."""
        for name in self._pg_templates.values():
            _admin(drop_database, name)
        self._pg_templates.clear()

    def _build(self, kind: str) -> None:
        if kind in self._built:
            return
        where = self._folder / kind
        where.mkdir()
        database = where / "workbench.db"
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(where)
            mp.setenv("CASEWORK_DB_URL", f"sqlite:///{database}")
            if kind == "base":
                web_project(where / "proj")
            else:
                self.restore("base", where / "proj", database)
                self._team["sqlite"] = _signed_in_team(load_project(where / "proj"))
        _checkpoint(database)
        self._built.add(kind)

    def _build_pg(self, kind: str) -> str:
        """The name of snapshot ``kind``'s PostgreSQL database, built on first use."""
        if not PG_URL:  # before any folder is made: every later test skips the same way
            pytest.skip("CASEWORK_TEST_PG_URL is not set (CI sets it to a live PostgreSQL server)")
        found = self._pg_templates.get(kind)
        if found is not None:
            return found
        where = self._folder / "pg" / kind
        where.mkdir(parents=True)
        name = f"cw_web_snapshot_{kind}_{uuid.uuid4().hex[:12]}"
        base = self._build_pg("base") if kind == "team" else None
        _create_database(name, base)
        self._pg_templates[kind] = name
        with pytest.MonkeyPatch.context() as mp:
            mp.chdir(where)
            mp.setenv("CASEWORK_DB_URL", _pg_url(name))
            if kind == "base":
                web_project(where / "proj")
            else:
                shutil.copytree(
                    self._folder / "pg" / "base" / "proj", where / "proj", symlinks=True
                )
                self._team["postgresql"] = _signed_in_team(load_project(where / "proj"))
        return name


def _pg_url(name: str) -> str:
    if not PG_URL:
        pytest.skip("CASEWORK_TEST_PG_URL is not set (CI sets it to a live PostgreSQL server)")
    return make_url(PG_URL).set(database=name).render_as_string(hide_password=False)


def _admin(action: Any, *args: Any) -> Any:
    """Run ``action(engine, *args)`` on an AUTOCOMMIT engine of the test server's base database."""
    admin = create_engine(
        _pg_url(make_url(PG_URL or "").database or ""), isolation_level="AUTOCOMMIT"
    )
    try:
        return action(admin, *args)
    finally:
        admin.dispose()


def _create_database(name: str, template: str | None) -> None:
    """Create database ``name``, a copy of ``template`` when given.

    PostgreSQL refuses to copy a database another session is connected to; the snapshot's own
    sessions are closed by then, but autovacuum may visit it for a moment: such a refusal is
    retried briefly.
    """
    statement = f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else "")

    def create(admin: Any) -> None:
        for attempt in range(40):
            try:
                with admin.connect() as conn:
                    conn.execute(text(statement))
                return
            except DBAPIError:
                if attempt == 39:
                    raise
                time.sleep(0.25)

    _admin(create)


def _signed_in_team(project: Project) -> dict[str, SavedSignIn]:
    with open_workbench(project) as wb:
        plant_run(wb)
        app = create_app(project)
        try:
            people = sign_in_team(app, wb)
        finally:
            app.state.workbench.close()
    return {
        key: SavedSignIn(who.name, tuple(who.client.cookies.jar), who.csrf)
        for key, who in people.items()
    }


def _checkpoint(database: Path) -> None:
    """Fold a WAL into the database file, so that copying the one file copies everything."""
    conn = sqlite3.connect(database)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
    wal = database.with_name(database.name + "-wal")
    assert not wal.exists() or wal.stat().st_size == 0, f"{wal} still holds pages"
