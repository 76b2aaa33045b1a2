"""Two reviewers deciding the same item at once: exactly one wins, the other gets a clear error.

Runs on SQLite and, when CASEWORK_TEST_PG_URL is set, on PostgreSQL. A test kind whose apply
holds the claiming transaction open for a moment makes the two decisions overlap for certain.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from casework.errors import DecisionConflict
from casework.project import Project, load_project
from casework.review import ReviewTask, add_items, decide_task, get_task, list_tasks, sync_leakage
from casework.review._kinds import register_kind
from casework.review._task import NewItem
from tests.labelling.builders import make_project, workbench_url
from tests.leakage.corpora import PROMPT, project_rows, write_project

__all__ = ["workbench_url"]


@dataclass
class SlowKind:
    """A review kind whose apply waits, recording who applied."""

    name: str = "slow-test"
    decisions: tuple[str, ...] = ("yes", "no")
    applied: list[str] = field(default_factory=list)

    def check(
        self,
        project: Project,
        task: ReviewTask,
        decision: str,
        reason: str | None,
        data: Mapping[str, Any] | None,
    ) -> dict[str, Any] | None:
        return None

    def apply(
        self,
        project: Project,
        task: ReviewTask,
        decision: str,
        *,
        reason: str | None,
        reviewer: str,
        data: dict[str, Any] | None,
        now: datetime,
    ) -> None:
        time.sleep(0.4)
        self.applied.append(reviewer)


def _race(
    project: Project, task_id: int, decisions: list[tuple[str, str]]
) -> tuple[list[str], list[Exception]]:
    barrier = threading.Barrier(len(decisions))
    won: list[str] = []
    lost: list[Exception] = []

    def decide(decision: str, reviewer: str) -> None:
        barrier.wait()
        try:
            decide_task(project, task_id, decision, reviewer=reviewer)
            won.append(reviewer)
        except DecisionConflict as exc:
            lost.append(exc)

    threads = [threading.Thread(target=decide, args=d) for d in decisions]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    return won, lost


def test_two_reviewers_one_item_exactly_one_wins(
    tmp_path: Path, workbench_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    project = load_project(root)
    kind = SlowKind()
    register_kind(kind)
    item = NewItem("slow-test", "refunds", "thing-1", "refunds", {"text": "decide me"})
    [task_id] = add_items(project, [item]).created
    assert add_items(project, [item]).existing == (task_id,)  # idempotent

    won, lost = _race(project, task_id, [("yes", "rev-1"), ("no", "rev-2")])
    assert len(won) == 1 and len(lost) == 1, (won, lost)
    assert kind.applied == won
    decided = get_task(project, task_id)
    assert (decided.status, decided.reviewer) == ("decided", won[0])
    assert decided.decision == ("yes" if won[0] == "rev-1" else "no")
    assert str(lost[0]).startswith(f"review item {task_id} was already decided (")
    assert f"by {won[0]} at " in str(lost[0])


def test_two_reviewers_one_leakage_pair(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = tmp_path / "leak"
    write_project(root, project_rows(), PROMPT.format(copied="nothing copied"))
    monkeypatch.chdir(root)
    project = load_project(root)
    from casework.dataset import load_dataset, release
    from casework.leakage import scan_dataset
    from casework.leakage.flagfile import read_flags

    release(project, "support", load_dataset(project, "support").cases, "first")
    scan_dataset(project, "support")
    sync_leakage(project, "support")
    task = next(t for t in list_tasks(project) if t.subject == "d-copy~h-copy")
    won, lost = _race(project, task.id, [("keep", "rev-1"), ("template", "rev-2")])
    assert len(won) == 1 and len(lost) == 1, (won, lost)
    [flag] = [f for f in read_flags(project, "support") if f.left_id == "d-copy"]
    assert (flag.status, flag.reviewer) == ("decided", won[0])
    assert flag.decision == ("keep" if won[0] == "rev-1" else "template")
