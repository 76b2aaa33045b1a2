"""The response cache in the workbench database: a re-run is free and gives the same replies."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from casework.llm import Message, ScriptedProvider, WorkbenchCache
from casework.llm.cache import CacheEntry
from casework.llm.client import Client
from casework.llm.scripted import ScriptRule
from casework.workbench import open_workbench


def test_entries_survive_reopening_and_can_be_cleared(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'wb.db'}"
    entry = CacheEntry("completion", "openai:m", "p" * 64, "{}", "reply", 3, 2)

    first = open_workbench(url=url)
    cache = WorkbenchCache(workbench=first)
    cache.put("k1", entry)
    cache.put("k1", CacheEntry("completion", "openai:m", "p" * 64, "{}", "other"))
    first.close()

    second = open_workbench(url=url)
    cache = WorkbenchCache(workbench=second)
    assert cache.get("k1") == entry
    assert cache.get("k2") is None
    assert cache.count() == {"openai:m": 1}
    cache.delete("k1")
    assert cache.get("k1") is None
    cache.put("k3", entry)
    assert cache.clear() == 1
    second.close()


def test_client_rerun_reads_from_the_workbench(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'wb.db'}"
    texts = []
    for reply in ("first", "changed"):
        wb = open_workbench(url=url)
        client = Client(
            ScriptedProvider([ScriptRule(reply=reply)]),
            provider_name="openai",
            cache=WorkbenchCache(workbench=wb),
        )
        completion = client.complete([Message("user", "q")], temperature=0)
        texts.append((completion.text, completion.cached))
        wb.close()
    assert texts == [("first", False), ("first", True)]


@pytest.mark.postgres
def test_cache_on_postgresql() -> None:
    url = os.environ.get("CASEWORK_TEST_PG_URL")
    if not url:
        pytest.skip("CASEWORK_TEST_PG_URL is not set (CI sets it to a live PostgreSQL server)")
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    wb = open_workbench(url=url)
    try:
        cache = WorkbenchCache(workbench=wb)
        entry = CacheEntry("completion", "openai:m", "p" * 64, "{}", "reply", 3, 2)
        with ThreadPoolExecutor(max_workers=4) as pool:
            list(pool.map(lambda _: cache.put("same", entry), range(8)))
        assert cache.get("same") == entry
        assert cache.count() == {"openai:m": 1}
        assert cache.clear("openai:m") == 1
    finally:
        wb.close()
