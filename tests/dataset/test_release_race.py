"""Concurrent releases of one dataset lose nothing (issue 11, item 1).

Four real processes — two `mine`, a `label release` and a `release` — start at once on the same
dataset, each reading slowly (so that, unserialised, every one of them releases from a stale read).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.dataset.integrity import (
    chain_intact,
    cli,
    env,
    labelled_project,
    traces,
    versions,
    working_hash,
)


@pytest.mark.slow
def test_four_processes_releasing_one_dataset_lose_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "proj"
    labelled_project(root, monkeypatch)
    before = versions(root)
    a = traces(tmp_path / "traces" / "a.jsonl", [f"sess-a{i}" for i in range(5)])
    b = traces(tmp_path / "traces" / "b.jsonl", [f"sess-b{i}" for i in range(5)])
    commands = [
        cli(root, "mine", str(a), "--dataset", "refunds", "--slice", "refunds", slow_read=0.5),
        cli(root, "mine", str(b), "--dataset", "refunds", "--slice", "refunds", slow_read=0.5),
        cli(root, "label", "release", "refunds", "-m", "labels", slow_read=0.5),
        cli(root, "dataset", "release", "refunds", "-m", "tidy", slow_read=0.5),
    ]
    procs = [
        subprocess.Popen(
            c, cwd=root, env=env(root), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for c in commands
    ]
    outputs = [p.communicate(timeout=180) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], outputs

    log = versions(root)
    assert chain_intact(log), [(v["number"], v.get("parent"), v["hash"]) for v in log]
    assert log[-1]["hash"] == working_hash(root)
    # Both mines and the label release each made one release; `release` found nothing new.
    assert len(log) == len(before) + 3
    cases = [
        json.loads(line)
        for line in (root / "datasets" / "refunds" / "cases.jsonl").read_text().splitlines()
    ]
    mined = [c for c in cases if c["source"] == "mined"]
    assert len(mined) == 10
    labelled = {c["id"] for c in cases if c.get("label")}
    assert {"d-1", "d-2", "d-3", "d-4", "s-1"} <= labelled
    raw = (root / "datasets" / "refunds" / "labels.jsonl").read_text().splitlines()
    assert len(raw) == 10  # u-1 is held (unsatisfiable, labelled resolve): its labels wait
