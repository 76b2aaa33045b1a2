from __future__ import annotations

from typing import Any

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect

from casework.workbench import open_workbench
from casework.workbench.base import Base

TABLES = {"labelling_assignments", "labelling_labels"}


@pytest.fixture
def workbench_from_template() -> None:
    """No template copy: the schema compared with the models is migrated from nothing."""


def _tables_of(diff: Any) -> set[str]:
    """Table names a (possibly nested) autogenerate diff entry touches."""
    if isinstance(diff, list):
        return set().union(*(_tables_of(d) for d in diff)) if diff else set()
    names = set()
    for part in diff[1:]:
        table = getattr(part, "table", None)
        name = getattr(part, "name", None) if table is None else table.name
        if isinstance(part, str):
            names.add(part)
        elif isinstance(name, str):
            names.add(name)
    return names


def test_migration_matches_the_models(workbench_url: str) -> None:
    open_workbench(url=workbench_url).close()
    engine = create_engine(workbench_url)
    try:
        with engine.connect() as conn:
            diffs = compare_metadata(MigrationContext.configure(conn), Base.metadata)
            inspector = inspect(conn)
            uniques = {
                table: {
                    u["name"]: u["column_names"] for u in inspector.get_unique_constraints(table)
                }
                for table in TABLES
            }
    finally:
        engine.dispose()
    assert [d for d in diffs if _tables_of(d) & TABLES] == []
    assert uniques == {
        "labelling_assignments": {
            "uq_labelling_assignments_case_labeller": [
                "dataset",
                "case_id",
                "labeller",
                "guideline_version",
            ]
        },
        "labelling_labels": {
            "uq_labelling_labels_case_labeller": [
                "dataset",
                "case_id",
                "labeller",
                "guideline_version",
            ]
        },
    }
