"""The labelling commands end to end: blind sheets out, answers in, adjudication, bump, relabel."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from casework.cli._moved import note_text
from tests.labelling.builders import (
    answer_csv,
    answer_jsonl,
    make_project,
    read_jsonl,
    workbench_url,
)
from tests.output_schema import printed

__all__ = ["workbench_url"]

Run = Callable[..., Result]
LABELLERS = "lab-14,lab-22,lab-31"


@pytest.fixture
def project(tmp_path: Path, workbench_url: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = make_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def run(project: Path) -> Iterator[Run]:
    runner = CliRunner()

    def _run(*args: str) -> Result:
        return runner.invoke(cli, ["--project", str(project), *args], catch_exceptions=False)

    yield _run


def ok(result: Result) -> Result:
    assert result.exit_code == 0, result.output
    return result


def answer_folder(
    folder: Path, kind: str, answer: Callable[[str, str], dict[str, object]]
) -> list[str]:
    """Fill every sheet in ``folder``: lab-22 uses the CSV, everyone else the JSONL."""
    paths = []
    for jsonl in sorted(folder.glob(f"*.{kind}.jsonl")):
        labeller = jsonl.name.split(".")[1]
        answers = {line["case_id"]: answer(line["case_id"], labeller) for line in read_jsonl(jsonl)}
        if labeller == "lab-22":
            answer_csv(jsonl.with_suffix(".csv"), answers)
            paths.append(str(jsonl.with_suffix(".csv")))
        else:
            answer_jsonl(jsonl, answers)
            paths.append(str(jsonl))
    return paths


def test_the_labelling_workflow(project: Path, run: Run, tmp_path: Path) -> None:
    ok(run("dataset", "release", "refunds", "-m", "drafts"))
    assigned = ok(run("label", "assign", "refunds", "--labellers", LABELLERS))
    assert "refunds: assigned 12 tasks over 6 cases" in assigned.stdout
    out = tmp_path / "sheets"
    exported = ok(run("label", "export", "refunds", "--out", str(out)))
    assert exported.stdout.count(" cases -> ") == 3
    second_of_d2: list[str] = []

    def blind(case_id: str, labeller: str) -> dict[str, object]:
        if case_id == "d-2" and not second_of_d2:
            second_of_d2.append(labeller)
            return {"outcome": "escalate", "required": ["escalate_to_human"]}
        if case_id == "u-1":
            return {"outcome": "refuse", "forbidden": ["issue_refund"]}
        return {"outcome": "resolve", "required": ["get_order", "issue_refund"]}

    sheets = answer_folder(out, "labels", blind)
    imported = ok(run("label", "import", *sheets))
    assert imported.stdout.startswith("stored 12 labels from 3 sheets")

    listed = ok(run("adjudicate", "list", "refunds", "--format", "json"))
    [contested] = printed("disagreement-list", listed.stdout)
    assert (contested["case_id"], contested["differs"], contested["adjudicator"]) == (
        "d-2",
        ["outcome", "required_tools"],
        None,
    )
    ok(run("label", "assign", "refunds", "--labellers", LABELLERS))
    adj_dir = tmp_path / "adjudication"
    ok(run("adjudicate", "export", "refunds", "--out", str(adj_dir)))
    [adj_sheet] = sorted(adj_dir.glob("*.adjudication.jsonl"))
    adjudicator = adj_sheet.name.split(".")[1]
    assert adjudicator not in {label["labeller"] for label in contested["labels"]}
    answer_jsonl(
        adj_sheet, {"d-2": {"outcome": "escalate", "required": ["get_order", "escalate_to_human"]}}
    )
    assert "stored 1 labels" in ok(run("adjudicate", "import", str(adj_sheet))).stdout
    applied = ok(run("adjudicate", "apply", "refunds", "-m", "first labels"))
    assert applied.stdout.splitlines() == [
        f"refunds@2 released: {applied.stdout.split()[2]} (8 cases)",
        "  - labelled 6 cases",
        "  - 1 case decided by adjudication",
        "  - added 13 raw labels to labels.jsonl",
    ]
    d2 = json.loads(ok(run("dataset", "show", "refunds", "d-2")).stdout)["label"]
    assert d2["adjudicated"] is True and d2["labellers"][-1] == adjudicator
    agreement = json.loads(
        ok(run("agreement", "refunds", "--format", "json", "--bootstrap", "0")).stdout
    )
    assert {s["slice"]: s["rows"] for s in agreement["slices"]}["refunds"] == 5

    bumped = ok(
        run(
            "label",
            "guideline",
            "bump",
            "refunds",
            "-m",
            "Damaged items over 30 days go to a person",
        )
    )
    assert bumped.stdout.startswith("refunds: refunds-g7 -> refunds-g8 (guidelines/refunds.md)")
    listed_guidelines = json.loads(ok(run("label", "guideline", "list", "--format", "json")).stdout)
    assert [(g["slice"], g["version"]) for g in listed_guidelines] == [
        ("refunds", "refunds-g8"),
        ("status", "status-g1"),
    ]
    stale = json.loads(
        ok(
            run("dataset", "cases", "refunds", "--labelled-under", "refunds-g7", "--format", "json")
        ).stdout
    )
    assert stale == ["d-1", "d-2", "d-3", "d-4", "r-1", "r-2", "u-1"]
    relabel = ok(
        run("label", "assign", "refunds", "--labellers", LABELLERS, "--relabel-under", "refunds-g7")
    )
    assert "7 cases sent back for relabelling" in relabel.stdout
    relabel_dir = tmp_path / "relabel"
    ok(run("label", "export", "refunds", "--out", str(relabel_dir)))
    sheets = answer_folder(
        relabel_dir,
        "labels",
        lambda case_id, labeller: {"outcome": "escalate", "required": ["escalate_to_human"]},
    )
    ok(run("label", "import", *sheets))
    released = ok(run("label", "release", "refunds", "-m", "relabel under refunds-g8"))
    assert "refunds@3 released" in released.stdout and "  - relabelled 7 cases" in released.stdout
    assert (
        json.loads(
            ok(
                run(
                    "dataset",
                    "cases",
                    "refunds",
                    "--labelled-under",
                    "refunds-g7",
                    "--format",
                    "json",
                )
            ).stdout
        )
        == []
    )
    versions = json.loads(ok(run("dataset", "versions", "refunds", "--format", "json")).stdout)
    assert [v["number"] for v in versions] == [1, 2, 3]
    status = json.loads(ok(run("label", "status", "refunds", "--format", "json")).stdout)
    assert status["totals"] == {"done": 8}


def test_bad_sheet_lines_exit_1_with_every_line_and_store_nothing(
    project: Path, run: Run, tmp_path: Path
) -> None:
    ok(run("label", "assign", "refunds", "--labellers", "lab-14,lab-22"))
    ok(run("label", "export", "refunds", "--labeller", "lab-14", "--out", "sheets"))
    sheet = project / "sheets" / "refunds.lab-14.labels.csv"
    text = sheet.read_text()
    header, *rows = text.splitlines()
    columns = header.split(",")
    bad = []
    for i, row in enumerate(rows[:2]):
        cells = row.split(",")
        cells[columns.index("outcome")] = "resolved" if i == 0 else "resolve"
        if i == 1:
            cells[columns.index("guideline_version")] = "refunds-g6"
        bad.append(",".join(cells))
    sheet.write_text("\n".join([header, *bad]) + "\n")
    result = run("label", "import", str(sheet))
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [
        "sheets/refunds.lab-14.labels.csv:2: outcome: Input should be 'resolve', 'clarify', 'refuse' or 'escalate'. Got 'resolved'.",
        "sheets/refunds.lab-14.labels.csv:3: guideline_version: must be the current guideline of slice 'refunds', refunds-g7 (export a fresh sheet after a guideline bump). Got 'refunds-g6'.",
    ]
    status = json.loads(ok(run("label", "status", "refunds", "--format", "json")).stdout)
    assert all(lab["done"] == 0 for lab in status["labellers"])


def test_usage_errors_exit_2(project: Path, run: Run) -> None:
    current = run(
        "label", "assign", "refunds", "--labellers", LABELLERS, "--relabel-under", "refunds-g7"
    )
    assert current.exit_code == 2
    assert current.stderr == (
        "--relabel-under: refunds-g7 is the current guideline of slice 'refunds'. "
        "Bump the guideline first.\n"
    )
    no_message = run("adjudicate", "apply", "refunds")
    assert no_message.exit_code == 2
    assert "Missing option '-m' / '--message'." in no_message.stderr
    no_folder = run("adjudicate", "export", "refunds")
    assert no_folder.exit_code == 2
    assert "Missing option '--out'." in no_folder.stderr
    bad_id = run("label", "assign", "refunds", "--labellers", "lab 14")
    assert bad_id.exit_code == 2
    assert "Got 'lab 14'." in bad_id.stderr
    bad_adjudicator = run("adjudicate", "export", "refunds", "--out", "x", "--adjudicator", "lab 9")
    assert bad_adjudicator.exit_code == 2
    note, _, error = bad_adjudicator.stderr.partition("\n")
    assert note == note_text("adjudicate export", "review export")
    assert error.startswith("--adjudicator: ")
    assert "Got 'lab 9'." in bad_adjudicator.stderr
    version = run("label", "status", "refunds@1")
    assert (version.exit_code, version.stderr) == (
        2,
        "label status refunds@1: labelling works on the working tree; name the dataset without @VERSION.\n",
    )
    adjudicate_version = run("adjudicate", "list", "refunds@1")
    assert (adjudicate_version.exit_code, adjudicate_version.stderr) == (
        2,
        note_text("adjudicate list", "review list --kind disagreement")
        + "\nreview list refunds@1: labelling works on the working tree; name the dataset without @VERSION.\n",
    )
    missing = run("label", "guideline", "show", "returns")
    assert missing.exit_code == 1
    assert missing.stderr.startswith("guidelines/returns.md: no guideline for slice 'returns'.")


def test_guideline_show_and_text_outputs(project: Path, run: Run) -> None:
    shown = ok(run("label", "guideline", "show", "refunds"))
    assert shown.stdout.startswith(
        "refunds-g7  (guidelines/refunds.md)\n---\nversion: refunds-g7\n"
    )
    planned = json.loads(
        ok(
            run(
                "label",
                "assign",
                "refunds",
                "--labellers",
                LABELLERS,
                "--dry-run",
                "--format",
                "json",
            )
        ).stdout
    )
    assert planned["dry_run"] is True and len(planned["assignments"]) == 12
    assert {lab: sum(roles.values()) for lab, roles in planned["by_labeller"].items()} == {
        "lab-14": 4,
        "lab-22": 4,
        "lab-31": 4,
    }
    assert planned["calibration"]["refunds"] == {
        "slice": "refunds",
        "guideline_version": "refunds-g7",
        "rows": 0,
        "kappa": None,
        "calibrated": False,
    }
    status = ok(run("label", "status", "refunds"))
    assert "calibrated = kappa >= 0.6 over >= 4 double-labelled rows" in status.stdout
    assert "queued 5" in status.stdout
    assert ok(run("adjudicate", "list", "refunds")).stdout == "refunds: no open disagreements.\n"
