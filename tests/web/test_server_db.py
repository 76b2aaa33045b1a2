"""How the web app opens its workbench: WAL with synchronous=NORMAL, a pool of the size asked for."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from click.testing import Result
from sqlalchemy import text

from casework.errors import UsageError
from casework.labelling._cache import has_dataset
from casework.project import Project
from casework.web import app_from_env, create_app
from casework.workbench import Workbench
from casework.workbench.db import SERVER_POOL_SIZE


def _pool_size(wb: Workbench) -> int:
    size = getattr(wb.engine.pool, "size", None)
    assert callable(size), type(wb.engine.pool)
    return int(size())


def test_the_app_pool_holds_the_default_or_the_size_asked_for(
    project: Project, wb: Workbench
) -> None:
    for asked, want in ((None, SERVER_POOL_SIZE), (3, 3)):
        app = create_app(project, db_pool=asked)
        try:
            workbench: Workbench = app.state.workbench
            assert _pool_size(workbench) == want
            if workbench.engine.dialect.name == "sqlite":
                with workbench.engine.connect() as conn:
                    assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
                    assert conn.execute(text("PRAGMA synchronous")).scalar() == 1  # NORMAL
        finally:
            app.state.workbench.close()


def test_a_pool_below_one_is_refused_with_a_message(
    project: Project, wb: Workbench, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(UsageError) as caught:
        create_app(project, db_pool=0)
    assert caught.value.render() == "db_pool: the pool needs at least 1 connection. Got 0."
    monkeypatch.setenv("CASEWORK_WEB_PROJECT", str(project.root))
    monkeypatch.setenv("CASEWORK_WEB_DB_POOL", "ten")
    with pytest.raises(UsageError) as caught:
        app_from_env()
    assert caught.value.render() == (
        "db_pool: CASEWORK_WEB_DB_POOL must be a whole number. Got 'ten'."
    )


def test_serve_refuses_a_pool_of_zero(project: Project, run_cli: Callable[..., Result]) -> None:
    result = run_cli("--project", str(project.root), "serve", "--db-pool", "0")
    assert result.exit_code == 2
    assert "Invalid value for '--db-pool': 0 is not in the range 1<=x<=500." in result.output


def test_has_dataset_agrees_with_dataset_names(project: Project) -> None:
    (project.datasets_dir / "empty").mkdir()
    (project.datasets_dir / ".hidden").mkdir()
    (project.datasets_dir / ".hidden" / "cases.jsonl").write_text("", encoding="utf-8")
    names = project.dataset_names()
    assert "refunds" in names
    assert ".hidden" in names
    for name in [*names, "empty", "missing", "", ".", "..", "../proj", "refunds/", "a\0b"]:
        assert has_dataset(project, name) == (name in names), name
