"""Web projects made once per session and copied into each test: the labelling project, and the
same project with the staff pages' team signed in and labelling done."""

from __future__ import annotations

import shutil
import sqlite3
from dataclasses import dataclass
from http.cookiejar import Cookie
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from casework.project import Project, load_project
from casework.web import create_app
from casework.workbench import Workbench, open_workbench
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
    """The web project built once per session, copied into each test that uses SQLite.

    ``base`` is :func:`web_project` (released, assigned; its workbench made by the migrations).
    ``team`` is ``base`` after :func:`plant_run` and :func:`sign_in_team`: the people's sessions
    and labels are rows of the copied database, so the saved cookies sign them in there too.
    """

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._built: set[str] = set()
        self._team: dict[str, SavedSignIn] = {}

    def restore(self, kind: str, root: Path, database: Path) -> None:
        """Copy snapshot ``kind`` (``base`` or ``team``) to project ``root`` and ``database``."""
        self._build(kind)
        shutil.copytree(self._folder / kind / "proj", root, symlinks=True)
        shutil.copyfile(self._folder / kind / "workbench.db", database)

    def team(self) -> dict[str, SavedSignIn]:
        """The team's saved sign-ins, by :data:`TEAM` key."""
        self._build("team")
        return self._team

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
                self._team = _signed_in_team(load_project(where / "proj"))
        _checkpoint(database)
        self._built.add(kind)


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
