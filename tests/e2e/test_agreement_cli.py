"""`casework agreement`: the per-slice report on a project on disk, text and JSON, and its errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from casework.dataset.jsonl import canonical_line
from tests.agreement.builders import make_label, refunds_id, seed_dataset
from tests.factories import TOOLS


@pytest.fixture
def seed_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose dataset `refunds` holds the worked example's cases and raw labels."""
    root = tmp_path / "proj"
    (root / "agent").mkdir(parents=True)
    (root / "casework.toml").write_text('name = "seed"\n', encoding="utf-8")
    (root / "agent" / "tools.json").write_text(json.dumps(TOOLS), encoding="utf-8")
    cases, labels = seed_dataset()
    folder = root / "datasets" / "refunds"
    folder.mkdir(parents=True)
    (folder / "cases.jsonl").write_text("".join(canonical_line(c) + "\n" for c in cases))
    (folder / "labels.jsonl").write_text("".join(canonical_line(r) + "\n" for r in labels))
    monkeypatch.chdir(root)
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    return root


def run(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--project", str(root), "agreement", *args])


def test_json_report(seed_project: Path) -> None:
    result = run(seed_project, "refunds", "--format", "json", "--bootstrap", "500", "--seed", "3")
    assert result.exit_code == 0, result.stderr
    data = json.loads(result.stdout)
    assert data["dataset"] == "refunds@working"
    assert data["gate_eligibility"] == {"refunds": True, "status": False}
    g7, g8, status = data["slices"]
    assert (g7["guideline_version"], g7["rows"], g7["current"]) == ("refunds-g7", 60, False)
    assert g7["kappa"]["p_o"] == pytest.approx(0.75)
    assert g7["kappa"]["p_e"] == pytest.approx(0.48)
    assert g7["kappa"]["kappa"] == pytest.approx(0.5192, abs=1e-4)
    assert g7["bootstrap"]["n_resamples"] == 500 and g7["bootstrap"]["seed"] == 3
    assert g7["verdict"] == {
        "status": "ok",
        "band": "ambiguous",
        "provisional": True,
        "gate_eligible": False,
        "reason": "kappa 0.52 is below 0.6: the guideline leaves these rows open; "
        "provisional: the CI crosses 0.6",
    }
    assert g7["clusters"][0]["feature"] == "orders.age_days>30"
    assert g7["clusters"][0]["in_disagreements"] == 11
    assert len(g7["disagreeing_case_ids"]) == 15
    assert {(t["tool"], t["question"]) for t in g7["tools"]} == {
        (tool["name"], q) for tool in TOOLS for q in ("required", "forbidden")
    }
    assert g8["verdict"]["band"] == "dependable" and g8["current"]
    assert status["verdict"]["status"] == "undefined_single_category"
    assert status["kappa"]["kappa"] is None
    again = run(seed_project, "refunds", "--format", "json", "--bootstrap", "500", "--seed", "3")
    assert again.stdout == result.stdout


def test_text_report(seed_project: Path) -> None:
    result = run(seed_project, "refunds", "--bootstrap", "200")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert out.startswith("Agreement on refunds@working (")
    assert "grouped by slice and guideline version: versions are never pooled" in out
    assert "refunds under refunds-g7: kappa 0.52 is below 0.6" in out
    assert "11 of 15 disagreements involve orders.age_days>30 (20 of 60 rows; lift 2.2" in out
    assert "Cases disagreeing on the outcome: r-000, r-001," in out
    assert "Cases disagreeing on tools: r-000" in out
    assert (
        "Left out: 15 adjudicator labels, 1 disagreement-overlap label, 4 single-labelled rows."
        in out
    )
    assert (
        "More than two labellers on 3 rows: Fleiss' kappa 0.52, Krippendorff's alpha 0.53." in out
    )
    assert "Note: 15 adjudicator labels left out: adjudicators are not blind." in out
    assert "Per-tool agreement" in out
    assert result.stderr == ""


def test_slice_and_guideline_filters(seed_project: Path) -> None:
    result = run(
        seed_project, "refunds", "--slice", "status", "--format", "json", "--bootstrap", "0"
    )
    data = json.loads(result.stdout)
    assert [s["slice"] for s in data["slices"]] == ["status"]
    assert data["slices"][0]["bootstrap"] is None
    g8 = run(seed_project, "refunds", "--guideline", "refunds-g8", "--format", "json")
    data = json.loads(g8.stdout)
    assert [s["guideline_version"] for s in data["slices"]] == ["refunds-g8"]
    assert data["grouping"].startswith("only labels under guideline 'refunds-g8' (167 labels")


def test_thresholds_come_from_the_config(seed_project: Path) -> None:
    (seed_project / "casework.toml").write_text(
        'name = "seed"\n[thresholds]\nkappa_gate = 0.5\nkappa_dependable = 0.95\nkappa_min_rows = 25\n'
    )
    data = json.loads(run(seed_project, "refunds", "--format", "json", "--bootstrap", "0").stdout)
    g7, g8, _ = data["slices"]
    assert g7["verdict"]["band"] == "review"
    assert g8["verdict"]["status"] == "insufficient_rows"  # 20 rows < 25
    assert data["settings"]["edges"] == {"gate": 0.5, "dependable": 0.95}


def test_inverted_edges_are_a_config_error(seed_project: Path) -> None:
    (seed_project / "casework.toml").write_text(
        'name = "seed"\n[thresholds]\nkappa_gate = 0.9\nkappa_dependable = 0.8\n'
    )
    result = run(seed_project, "refunds")
    assert result.exit_code == 1
    assert result.stderr == (
        "casework.toml:3: thresholds.kappa_gate: must not exceed kappa_dependable (0.8). Got 0.9.\n"
    )


def test_missing_tools_file_still_reports(seed_project: Path) -> None:
    (seed_project / "agent" / "tools.json").unlink()
    result = run(seed_project, "refunds", "--format", "json", "--bootstrap", "0")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert data["notes"][-1] == (
        "declared tools unavailable (casework.toml: agent.tools: declared tools file "
        "agent/tools.json not found. Got 'agent/tools.json'.); per-tool rows cover tools named "
        "in labels."
    )


def test_usage_errors(seed_project: Path) -> None:
    result = run(seed_project, "refunds", "--slice", "nope")
    assert result.exit_code == 2
    assert result.stderr == (
        "--slice: no case of refunds@working is in slice 'nope' (slices: refunds, status).\n"
    )
    result = run(seed_project, "refunds", "--guideline", "g1")
    assert result.exit_code == 2
    assert result.stderr == (
        "--guideline: no label of refunds@working is under 'g1' "
        "(versions: refunds-g7, refunds-g8, status-g2).\n"
    )
    result = run(seed_project, "nope")
    assert result.exit_code == 2
    assert (
        result.stderr == "datasets/nope/cases.jsonl: no dataset 'nope' (datasets here: refunds).\n"
    )
    result = run(seed_project, "refunds", "--bootstrap", "-1")
    assert result.exit_code == 2
    assert "Invalid value for '--bootstrap': -1 is not in the range x>=0." in result.stderr


def test_duplicate_label_is_reported_with_its_line(seed_project: Path) -> None:
    labels = seed_project / "datasets" / "refunds" / "labels.jsonl"
    lines = labels.read_text().splitlines()
    dup = make_label(refunds_id(0), "lab-a", "second", "clarify", "refunds-g7", reason="audit")
    labels.write_text("\n".join([*lines, canonical_line(dup)]) + "\n")
    result = run(seed_project, "refunds")
    assert result.exit_code == 1
    assert result.stderr == (
        f"datasets/refunds/labels.jsonl:{len(lines) + 1}: labeller: labelled case 'r-000' twice "
        "under guideline 'refunds-g7'; agreement needs one label per person. Got 'lab-a'.\n"
    )
    assert result.stdout == ""
