"""`forget` reaches the worker parts a killed sharded run left behind (`run --workers`)."""

from __future__ import annotations

import json
from pathlib import Path

from casework.atomic import PROJECT_TMP, atomic_writer, clean_temps
from casework.project import load_project
from casework.runner.redact import redact_run_logs


def test_a_killed_sharded_runs_parts_lose_the_removed_cases(project_dir: Path) -> None:
    parts = project_dir / "runs" / "r-9.shards"
    parts.mkdir(parents=True)
    lines = [
        {"kind": "trial", "run_id": "r-9", "case_id": "r-1", "trial": 0, "reply": "order_ab12"},
        {"kind": "trial", "run_id": "r-9", "case_id": "r-2", "trial": 0, "reply": "fine"},
        {"kind": "trial", "run_id": "r-9", "case_id": "r-3", "trial": 0, "reply": "order_ab12"},
    ]
    part = parts / "part-000.jsonl"
    part.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    project = load_project(project_dir)
    dry = redact_run_logs(project, "refunds", ["r-1"], ["order_ab12"], dry_run=True)
    assert [(r.path.name, r.run_id, r.trials) for r in dry] == [("part-000.jsonl", "r-9", 2)]
    assert len(part.read_text(encoding="utf-8").splitlines()) == 3  # a dry run writes nothing
    redact_run_logs(project, "refunds", ["r-1"], ["order_ab12"])
    kept = [json.loads(x)["case_id"] for x in part.read_text(encoding="utf-8").splitlines()]
    assert kept == ["r-2"]


def test_a_killed_parents_merged_log_goes_however_fresh(project_dir: Path) -> None:
    tmp = project_dir / PROJECT_TMP
    tmp.mkdir(parents=True, exist_ok=True)
    # What a sharded run's parent leaves when killed while merging: its log so far, unlocked.
    merged = tmp / ".r-9.jsonl.0123456789ab.tmp"
    merged.write_text('{"kind": "trial", "case_id": "r-1", "reply": "order_ab12"}\n')
    empty = tmp / ".cases.jsonl.ba9876543210.tmp"  # a writer between creating and locking
    empty.touch()
    project = load_project(project_dir)
    redact_run_logs(project, "refunds", ["r-1"], ["order_ab12"], dry_run=True)
    assert merged.exists()  # a dry run writes nothing
    redact_run_logs(project, "refunds", ["r-1"], ["order_ab12"])
    assert not merged.exists() and empty.exists()
    assert clean_temps(tmp) == []  # still fresh: every command's clean would have waited


def test_a_live_writers_temp_is_left_to_it(project_dir: Path) -> None:
    project = load_project(project_dir)
    with atomic_writer(project_dir / "runs" / "r-8.jsonl") as out:
        out.write(b'{"kind": "trial", "case_id": "r-1"}\n')
        out.flush()
        redact_run_logs(project, "refunds", ["r-1"], ["order_ab12"])
        assert len(list((project_dir / PROJECT_TMP).glob("*.tmp"))) == 1
