"""Isolation of pytest-xdist workers: each worker gets its own PostgreSQL test database.

The PostgreSQL tests reset the ``public`` schema of ``CASEWORK_TEST_PG_URL`` or create throwaway
databases through it; two workers sharing that database would drop each other's tables mid-test.
Each worker (``gw0``, ``gw1`` …) therefore points the variable at ``<database>_<worker>`` on the
same server, created once and kept between runs like the base database itself.
"""

from __future__ import annotations

import os
import re
import time

import pytest
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.exc import DBAPIError

from tests.ray_cluster import FIXTURE as RAY_FIXTURE

PG_ENV = "CASEWORK_TEST_PG_URL"

_WORKER_ID = re.compile(r"gw[0-9]+")


def worker_database_url(base_url: str, worker: str) -> str:
    """The URL of ``worker``'s own database: the base URL with ``_<worker>`` after its name."""
    if not _WORKER_ID.fullmatch(worker):
        raise ValueError(f"not a pytest-xdist worker id: {worker!r}")
    url = make_url(base_url)
    # A process started by a worker inherits its variables: it keeps the worker's database.
    base = re.sub(r"_gw[0-9]+$", "", url.database or "")
    return url.set(database=f"{base}_{worker}").render_as_string(hide_password=False)


def ensure_database(url: str) -> None:
    """Create the database of ``url`` on its server unless it exists (connecting to the base one).

    Two workers may create their databases at the same moment, and PostgreSQL refuses to copy
    ``template1`` while another CREATE DATABASE reads it: such a refusal is retried briefly.
    """
    parsed = make_url(url)
    name = parsed.database
    base = re.sub(r"_gw[0-9]+$", "", name or "")
    admin = create_engine(parsed.set(database=base), isolation_level="AUTOCOMMIT")
    try:
        for attempt in range(20):
            try:
                with admin.connect() as conn:
                    found = conn.execute(
                        text("SELECT 1 FROM pg_database WHERE datname = :name"), {"name": name}
                    ).first()
                    if found is None:
                        conn.execute(text(f'CREATE DATABASE "{name}"'))
                return
            except DBAPIError:
                if attempt == 19:
                    raise
                time.sleep(0.25)
    finally:
        admin.dispose()


def isolate_postgres(worker: str | None) -> None:
    """Point ``CASEWORK_TEST_PG_URL`` at this worker's database (nothing to do outside xdist)."""
    base = os.environ.get(PG_ENV)
    if not worker or not base:
        return
    url = worker_database_url(base, worker)
    ensure_database(url)
    os.environ[PG_ENV] = url


#: The group of the tests that use the worker's local Ray (one Ray started for all of them).
RAY = "ray"

#: The group of tests that fork worker processes (``@pytest.mark.forks``): handed out first, so
#: that they run in a worker no earlier test has left a thread in (casework scans sequentially
#: in a process with threads alive, as forking it could deadlock the child).
FORKS = "forks"


def xdist_group_of(item: pytest.Item) -> str | None:
    """The worker group ``item`` belongs to under ``--dist loadgroup`` (None: any worker).

    The browser tests share one group so that two Chromium instances never compete for the two
    cores (their waits would then time out); the Ray tests share one so that they share one
    local Ray (:mod:`tests.ray_cluster`); a module whose tests share a module-scoped fixture
    is one group, so the fixture is built once rather than once per worker.
    """
    if item.path.name.startswith("test_browser"):
        return "browser"
    if item.get_closest_marker("forks") is not None:
        return FORKS
    if RAY_FIXTURE in getattr(item, "fixturenames", ()):
        return RAY
    fixtureinfo = getattr(item, "_fixtureinfo", None)
    if fixtureinfo is None:
        return None
    for definitions in fixtureinfo.name2fixturedefs.values():
        if any(definition.scope == "module" for definition in definitions):
            return item.nodeid.split("::", 1)[0]
    return None


def name_group(item: pytest.Item, group: str) -> None:
    """Append ``@group`` to ``item``'s node id, which is how ``--dist loadgroup`` finds groups.

    pytest-xdist's worker appends it by assigning ``item._nodeid``, which pytest 9.2 no longer
    reads (a node id is ``item._id`` now): without this every group would be split across the
    workers, silently. Nothing is done when the id already ends with the group (an xdist that
    works again) or the run does not use ``--dist loadgroup``.
    """
    if item.nodeid.endswith(f"@{group}"):
        return
    from _pytest.nodeid import NodeId

    item._id = NodeId.parse(f"{item.nodeid}@{group}")


def groups_first(items: list[pytest.Item]) -> None:
    """Reorder ``items`` in place: the grouped tests first, each keeping its order.

    ``--dist loadgroup`` hands a group to one worker as a whole; handed out last, the largest
    group (the reader fuzz module, minutes on this machine) would leave the other core idle at
    the end. Long units first and single tests filling in after is the usual schedule.
    """
    items.sort(key=lambda item: (_group_name(item) != FORKS, _group_name(item) is None))


def _group_name(item: pytest.Item) -> str | None:
    marker = item.get_closest_marker("xdist_group")
    if marker is None:
        return None
    return str(marker.kwargs.get("name", marker.args[0] if marker.args else ""))
