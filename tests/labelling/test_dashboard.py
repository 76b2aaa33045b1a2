"""Dashboard figures against a hand-built workbench: counts, kappa and CI (statsmodels, sklearn), seconds."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa

from casework.cli import cli
from casework.dataset import load_dataset, release
from casework.labelling import dashboard, labelling_status
from casework.project import Project, load_project
from casework.review import add_items, decide_task, generated_case_item
from casework.schema import OUTCOMES, Case
from casework.workbench import open_workbench
from casework.workbench.models_labelling import AssignmentRow, RawLabelRow
from tests.factories import write_lines
from tests.labelling.builders import draft, make_project, workbench_url

__all__ = ["workbench_url"]

NOW = datetime(2026, 12, 1, 9, tzinfo=UTC)
VERSIONS = {"refunds": "refunds-g7", "status": "status-g1"}
# case -> slice, [(labeller, role, outcome, seconds)]
LABELS: dict[str, tuple[str, list[tuple[str, str, str, float | None]]]] = {
    "c-1": ("refunds", [("lab-1", "first", "resolve", 10), ("lab-2", "second", "resolve", 5)]),
    "c-2": ("refunds", [("lab-1", "first", "resolve", 20), ("lab-2", "second", "resolve", 15)]),
    "c-3": ("refunds", [("lab-1", "first", "escalate", 30), ("lab-2", "second", "escalate", None)]),
    "c-4": ("refunds", [("lab-1", "first", "resolve", 40), ("lab-2", "second", "escalate", 25)]),
    "c-5": ("refunds", [("lab-1", "first", "clarify", 50)]),
    "c-6": ("refunds", []),
    "s-1": ("status", [("lab-1", "first", "resolve", 60), ("lab-2", "second", "clarify", 35)]),
    "s-2": ("status", [("lab-1", "first", "clarify", 70), ("lab-2", "second", "clarify", 45)]),
    "s-3": ("status", [("lab-2", "first", "resolve", 55)]),
    "s-4": ("status", [("lab-1", "first", "resolve", 80), ("lab-2", "second", "resolve", 65)]),
}


def _rows(case_id: str, slice_name: str, who: str, role: str) -> dict[str, object]:
    return {
        "dataset": "refunds",
        "case_id": case_id,
        "slice": slice_name,
        "labeller": who,
        "role": role,
        "overlap_reason": "calibration" if role == "second" else None,
        "guideline_version": VERSIONS[slice_name],
    }


@pytest.fixture
def board_project(tmp_path: Path, workbench_url: str, monkeypatch: pytest.MonkeyPatch) -> Project:
    root = make_project(tmp_path / "proj")
    with (root / "casework.toml").open("a", encoding="utf-8") as handle:
        handle.write("\n[thresholds]\nkappa_min_rows = 4\n")
    write_lines(
        root / "datasets" / "refunds" / "cases.jsonl",
        [draft(case_id, slice=s) for case_id, (s, _) in LABELS.items()],
    )
    monkeypatch.chdir(root)
    project = load_project(root)
    release(project, "refunds", load_dataset(project, "refunds").cases, "drafts")
    with open_workbench(project) as wb, wb.session() as session:
        for case_id, (slice_name, labels) in LABELS.items():
            for i, (who, role, outcome, seconds) in enumerate(labels):
                base = _rows(case_id, slice_name, who, role)
                session.add(AssignmentRow(**base, assigned_at=NOW, done=True, done_at=NOW))
                session.add(
                    RawLabelRow(
                        **base,
                        outcome=outcome,
                        required={},
                        forbidden={},
                        answer_facts=[],
                        assigned_at=NOW,
                        labelled_at=NOW + timedelta(minutes=i),
                        source="web",
                        seconds_on_screen=seconds,
                    )
                )
        session.add(
            AssignmentRow(**_rows("c-6", "refunds", "lab-3", "first"), assigned_at=NOW, done=False)
        )
    return project


def _generated(case_id: str) -> Case:
    return Case.model_validate(draft(case_id))


def test_dashboard_figures(board_project: Project) -> None:
    project = board_project
    items = add_items(
        project,
        [
            generated_case_item("refunds", _generated("g-1"), source="gen"),
            generated_case_item("refunds", _generated("g-2"), source="gen"),
        ],
    ).created
    decide_task(project, items[1], "reject", reviewer="rev-1", reason="dup", seconds=120)
    board = dashboard(project, "refunds")
    refunds, status = board.slices
    assert (refunds.slice, refunds.rows, refunds.labelled_once, refunds.labelled_twice) == (
        "refunds",
        6,
        1,
        4,
    )
    assert (status.slice, status.rows, status.labelled_once, status.labelled_twice) == (
        "status",
        4,
        1,
        3,
    )
    assert (refunds.open_disagreements, status.open_disagreements) == (1, 1)
    assert (refunds.open_review_items, status.open_review_items) == (1, 0)
    assert refunds.guideline_version == "refunds-g7" and status.guideline_version == "status-g1"
    for entry in (refunds, status):
        pairs = [labs for s, labs in LABELS.values() if s == entry.slice and len(labs) == 2]
        first, second = [p[0][2] for p in pairs], [p[1][2] for p in pairs]
        index: dict[str, int] = {o: i for i, o in enumerate(OUTCOMES)}
        table = [[0] * len(OUTCOMES) for _ in OUTCOMES]
        for a, b in zip(first, second, strict=True):
            table[index[a]][index[b]] += 1
        oracle = cohens_kappa(table)
        assert entry.kappa_rows == len(pairs)
        assert entry.kappa == pytest.approx(cohen_kappa_score(first, second))
        assert entry.kappa == pytest.approx(oracle.kappa)
        assert entry.kappa_low == pytest.approx(max(-1.0, oracle.kappa_low))
        assert entry.kappa_high == pytest.approx(min(1.0, oracle.kappa_upp))
    assert refunds.kappa == pytest.approx(0.5)  # p_o 3/4, p_e 1/2
    assert refunds.band == "ambiguous" and refunds.provisional  # the interval crosses 0.6
    assert status.kappa == pytest.approx(0.4)  # p_o 2/3, p_e 4/9
    assert status.band is None and "rows" in status.band_reason  # 3 rows < kappa_min_rows 4
    assert refunds.seconds_per_label == pytest.approx((10 + 20 + 30 + 40 + 50 + 5 + 15 + 25) / 8)
    assert status.seconds_per_label == pytest.approx((60 + 70 + 80 + 35 + 45 + 55 + 65) / 7)
    people = {p.labeller: (p.done, p.assigned, p.median_seconds) for p in board.labellers}
    assert people == {
        "lab-1": (8, 8, 45.0),  # median of 10, 20, ..., 80
        "lab-2": (8, 8, 35.0),  # median of 5, 15, ..., 65 (c-3 untimed)
        "lab-3": (0, 1, None),
    }
    assert board.minutes_per_accepted_case is None  # nothing accepted yet
    decide_task(project, items[0], "accept", reviewer="rev-1", seconds=180)
    assert dashboard(project, "refunds").minutes_per_accepted_case == pytest.approx(5.0)
    assert json.loads(json.dumps(board.as_json()))["slices"][0]["kappa"] == pytest.approx(0.5)


def test_label_status_reports_cost_and_minutes(board_project: Project) -> None:
    status = labelling_status(board_project, "refunds")
    costs = {s.slice: s.seconds_per_label for s in status.slices}
    assert costs == {"refunds": pytest.approx(24.375), "status": pytest.approx(410 / 7)}
    assert status.minutes_per_accepted_case is None
    text = CliRunner().invoke(cli, ["label", "status", "refunds"])
    assert text.exit_code == 0, text.output
    assert "24.4 s" in text.stdout and "58.6 s" in text.stdout
    assert "human minutes per accepted case: n/a" in text.stdout
    data = json.loads(
        CliRunner().invoke(cli, ["label", "status", "refunds", "--format", "json"]).stdout
    )
    assert data["minutes_per_accepted_case"] is None
    assert [s["seconds_per_label"] for s in data["slices"]] == pytest.approx([24.375, 410 / 7])
    board = CliRunner().invoke(cli, ["label", "status", "refunds", "--dashboard"])
    assert board.exit_code == 0, board.output
    assert "lab-3" in board.stdout and "human minutes per accepted case: n/a" in board.stdout
    shown = CliRunner().invoke(
        cli, ["label", "status", "refunds", "--dashboard", "--format", "json"]
    )
    # The command's JSON is the dashboard's, with the output model's kind and schema version.
    assert json.loads(shown.stdout) == {
        "output": "label-dashboard",
        "schema_version": 1,
        **json.loads(json.dumps(dashboard(board_project, "refunds").as_json())),
    }


def test_no_timings_means_n_a(
    tmp_path: Path, workbench_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    project = load_project(root)
    board = dashboard(project, "refunds")
    assert all(s.seconds_per_label is None and s.kappa is None for s in board.slices)
    assert board.labellers == () and board.minutes_per_accepted_case is None
    text = CliRunner().invoke(cli, ["label", "status", "refunds"]).stdout
    assert "human minutes per accepted case: n/a" in text
    data = json.loads(
        CliRunner().invoke(cli, ["label", "status", "refunds", "--format", "json"]).stdout
    )
    assert [s["seconds_per_label"] for s in data["slices"]] == [None, None]
