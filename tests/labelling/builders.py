"""Builders shared by the labelling tests and the labelling CLI tests."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import time
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, make_url, text
from sqlalchemy.exc import DBAPIError

from tests.factories import TOOLS, case_dict, write_lines

PG_URL = os.environ.get("CASEWORK_TEST_PG_URL")

CONFIG = """name = "labelling-test"

[labelling]
calibration_min_rows = 4
salt = "test-salt"
"""

GUIDELINE = """---
version: {version}
owner: support-ops
---
# {title}

Refund a damaged item when the order is within 30 days.
"""


def draft(case_id: str, **overrides: Any) -> dict[str, Any]:
    """A case waiting for labels."""
    data = case_dict(case_id, **overrides)
    data.pop("label", None)
    data["situation"]["state"] = {"orders": {f"ORD-{case_id}": {"age_days": 12}}}
    data["provenance"] = {"shape": "broken-item", "reviewer": "rev-1"}
    return data


def make_project(root: Path) -> Path:
    """A project with two slices: `refunds` (2 labelled cases, 5 drafts) and `status` (1 draft)."""
    (root / "agent").mkdir(parents=True)
    (root / "guidelines").mkdir()
    (root / "casework.toml").write_text(CONFIG, encoding="utf-8")
    (root / "agent" / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    (root / "guidelines" / "refunds.md").write_text(
        GUIDELINE.format(version="refunds-g7", title="Refunds"), encoding="utf-8"
    )
    (root / "guidelines" / "status.md").write_text(
        GUIDELINE.format(version="status-g1", title="Order status"), encoding="utf-8"
    )
    cases = [
        case_dict("r-1"),
        case_dict("r-2"),
        draft("d-1"),
        draft("d-2"),
        draft("d-3"),
        draft("d-4"),
        draft(
            "u-1",
            satisfiable=False,
        ),
        draft("s-1", slice="status"),
    ]
    cases[6]["provenance"]["unsatisfiable_kind"] = "outside_policy"
    write_lines(root / "datasets" / "refunds" / "cases.jsonl", cases)
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    return root


def drop_database(admin: Engine, name: str) -> None:
    """Drop a throwaway database; a backend the role may not end (autovacuum) gets a moment."""
    for attempt in range(10):
        try:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            return
        except DBAPIError:
            if attempt == 9:
                return  # a leftover empty database on the test server, not a test failure
            time.sleep(0.5)


def pg_database() -> Iterator[str]:
    """A fresh PostgreSQL database on the test server, dropped afterwards."""
    if not PG_URL:
        pytest.skip("CASEWORK_TEST_PG_URL is not set (CI sets it to a live PostgreSQL server)")
    name = f"cw_labelling_{uuid.uuid4().hex[:12]}"
    admin = create_engine(PG_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        yield make_url(PG_URL).set(database=name).render_as_string(hide_password=False)
        drop_database(admin, name)
    finally:
        admin.dispose()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def workbench_url(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """The workbench URL the project uses (SQLite file, or a fresh PostgreSQL database)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'workbench.db'}"
        monkeypatch.setenv("CASEWORK_DB_URL", url)
        yield url
        return
    for url in pg_database():
        monkeypatch.setenv("CASEWORK_DB_URL", url)
        yield url


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def answer_jsonl(path: Path, answers: Mapping[str, Mapping[str, Any]]) -> None:
    """Fill a JSONL sheet: ``answers[case_id]`` holds outcome, required, forbidden, answer_facts."""
    lines = read_jsonl(path)
    for line in lines:
        given = answers.get(line["case_id"])
        if given is None:
            continue
        line["outcome"] = given["outcome"]
        for group in ("required", "forbidden"):
            for tool in given.get(group, []):
                line[group][tool] = True
        line["answer_facts"] = list(given.get("answer_facts", []))
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")


def answer_csv(path: Path, answers: Mapping[str, Mapping[str, Any]]) -> None:
    """Fill a CSV sheet the way a spreadsheet user would (yes / no cells, facts one per line)."""
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    header = rows[0]
    for row in rows[1:]:
        given = answers.get(row[header.index("case_id")])
        if given is None:
            continue
        row[header.index("outcome")] = given["outcome"]
        for group in ("required", "forbidden"):
            for tool in given.get(group, []):
                row[header.index(f"{group}:{tool}")] = "yes"
        row[header.index("answer_facts")] = "\n".join(given.get("answer_facts", []))
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(rows)
