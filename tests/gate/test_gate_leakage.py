"""The gate sees leakage review state from the dataset folder in git, not from one workbench.

Issue 12 item 11: open near-duplicate flags lived only in the workbench database, so a CI clone (or
another `CASEWORK_DB_URL`) passed the gate, and a rescan at `--threshold 1.0` marked them gone.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from casework.dataset import load_dataset, release
from casework.gate import gate_run
from casework.leakage import scan_dataset
from casework.leakage.flagfile import read_flags
from casework.leakage.review import unresolved_flags
from casework.project import Project, load_project
from casework.runner import RunRequest, run_agent
from tests.gate.test_gate import judgeless_cases
from tests.runner.builders import make_project, refund_case

GOOD_AGENT = "python:tests.runner.sample_agents:good"
TEXT = "hello I would like a refund for order o1 because the mug arrived broken and chipped"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]


def _near_duplicates() -> list[dict[str, object]]:
    """A dev row and a holdout row whose user text differs by one word (Jaccard 14/15)."""
    out = []
    for case_id, split, text in (
        ("d-dup", "dev", TEXT),
        ("h-dup", "holdout", TEXT + " yesterday"),
    ):
        case = refund_case(case_id, "o1", 12.0, split=split)
        case["situation"]["turns"] = [{"role": "user", "content": text}]
        out.append(case)
    return out


@pytest.fixture
def scanned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A released project whose near-duplicate pair a scan has flagged, committed to git."""
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = make_project(
        tmp_path / "origin",
        [*judgeless_cases(), *_near_duplicates()],
        config="[gate]\nmin_pass_rate = 0.5\n",
    )
    (root / ".gitignore").write_text(".casework/\nruns/\n", encoding="utf-8")
    monkeypatch.chdir(root)
    project = load_project(root)
    ds = load_dataset(project, "refunds")
    assert release(project, "refunds", ds.cases, "first") is not None
    report = scan_dataset(project, "refunds")
    assert [(f.left_id, f.right_id, f.status) for f in report.flags] == [("d-dup", "h-dup", "open")]
    subprocess.run([*GIT, "add", "-A"], cwd=root, check=True)
    subprocess.run([*GIT, "commit", "-qm", "dataset and leakage review"], cwd=root, check=True)
    return project


def _gate_codes(project: Project, run_id: str) -> set[str]:
    request = RunRequest(dataset="refunds", agent=GOOD_AGENT, k=1, use_judge=False, run_id=run_id)
    run_agent(project, request)
    return {r.code for r in gate_run(project, run_id).failures}


def test_the_review_state_is_a_file_in_the_dataset_folder(scanned: Project) -> None:
    path = scanned.dataset_dir("refunds") / "leakage.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 1
    line = json.loads(lines[0])
    assert list(line)[:4] == ["schema_version", "id", "left_id", "right_id"]
    assert (line["left_id"], line["right_id"], line["status"]) == ("d-dup", "h-dup", "open")
    assert (line["left_split"], line["right_split"]) == ("dev", "holdout")
    assert line["jaccard"] == pytest.approx(14 / 15, abs=1e-6)
    assert len(line["left_hash"]) == len(line["right_hash"]) == 64
    tracked = subprocess.run(
        ["git", "ls-files", "datasets/refunds"], cwd=scanned.root, capture_output=True, text=True
    ).stdout.split()
    assert "datasets/refunds/leakage.jsonl" in tracked


def test_a_fresh_clone_with_an_empty_workbench_still_fails_the_gate(
    scanned: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clone = tmp_path / "ci"
    subprocess.run(["git", "clone", "-q", str(scanned.root), str(clone)], check=True)
    assert not (clone / ".casework").exists()
    monkeypatch.setenv("CASEWORK_DB_URL", f"sqlite:///{tmp_path / 'fresh.db'}")
    monkeypatch.chdir(clone)
    project = load_project(clone)
    assert [(f.left_id, f.right_id) for f in unresolved_flags(project, "refunds")] == [
        ("d-dup", "h-dup")
    ]
    assert _gate_codes(project, "ci") == {"leakage_unresolved"}
    [failure] = gate_run(project, "ci").failures
    assert failure.message == (
        "d-dup (dev) ~ h-dup (holdout): near-duplicate across splits (Jaccard 0.93) is still "
        "open (datasets/refunds/leakage.jsonl)"
    )
    assert failure.hint is not None
    assert failure.hint.command_line() == (
        "casework review list --kind leakage-pair --dataset refunds"
    )


def test_a_rescan_at_threshold_one_keeps_the_flags_open(scanned: Project) -> None:
    rescan = scan_dataset(scanned, "refunds", threshold=1.0)
    assert rescan.result.pairs == [] and rescan.gone == 0
    assert rescan.configured_threshold == 0.8
    assert [(f.left_id, f.status) for f in rescan.held] == [("d-dup", "open")]
    assert [f.status for f in unresolved_flags(scanned, "refunds")] == ["open"]
    assert _gate_codes(scanned, "after-rescan") == {"leakage_unresolved"}


def test_a_change_to_the_rows_supersedes_a_flag_at_any_threshold(scanned: Project) -> None:
    ds = load_dataset(scanned, "refunds")
    other = "where is the invoice for my kettle order, I need it for my expenses claim"
    edited = [
        c.model_copy(
            update={
                "situation": c.situation.model_copy(
                    update={"turns": [c.situation.turns[0].model_copy(update={"content": other})]}
                )
            }
        )
        if c.id == "h-dup"
        else c
        for c in ds.cases
    ]
    assert release(scanned, "refunds", edited, "reword the holdout row") is not None
    rescan = scan_dataset(scanned, "refunds", threshold=1.0)
    assert rescan.gone == 1 and rescan.held == []
    assert [r.status for r in read_flags(scanned, "refunds")] == ["gone"]


def test_a_scan_at_the_configured_threshold_may_supersede(scanned: Project) -> None:
    (scanned.root / "casework.toml").write_text(
        'name = "runner-test"\n[gate]\nmin_pass_rate = 0.5\n[thresholds]\nleakage_jaccard = 0.95\n',
        encoding="utf-8",
    )
    project = load_project(scanned.root)
    rescan = scan_dataset(project, "refunds")
    assert rescan.gone == 1 and rescan.held == []
    assert unresolved_flags(project, "refunds") == []
