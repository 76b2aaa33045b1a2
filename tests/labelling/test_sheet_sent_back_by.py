"""CSV sheets carry `sent_back_by` as JSONL sheets do, read it back, and still import signed."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest

from casework.errors import InputErrors
from casework.labelling.assign import assign_labels
from casework.labelling.exchange import export_sheets, import_sheets
from casework.labelling.guidelines import bump_guideline
from casework.labelling.relabel_rule import RelabelRule
from casework.labelling.sheets import read_sheet, render_csv, sheet_line
from casework.project import Project, load_project
from casework.schema import Case
from tests.factories import case_dict

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "refunds"
RULE = (
    "situation.fixtures[?tool=='get_order'].response[] "
    "| [?status=='partially_shipped' && age_days > `30`]"
)
READS_LABEL = "label.outcome == 'clarify'"
LABELLERS = ("lab-03", "lab-07")


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A scratch copy of the bundled example, its rule bumped and the touched rows sent back."""
    root = tmp_path / "refunds"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".casework", "runs", "build"))
    monkeypatch.chdir(root)
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    project = load_project(root)
    bump_guideline(project, "refunds", "partially shipped and old: escalate", relabel_where=RULE)
    assign_labels(project, "refunds", LABELLERS, relabel_under="refunds-g7")
    return project


def _rows(path: Path) -> tuple[list[str], list[list[str]]]:
    rows = list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))
    return rows[0], rows[1:]


def _write(path: Path, header: list[str], rows: list[list[str]]) -> None:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([header, *rows])
    path.write_text(buffer.getvalue(), encoding="utf-8")


def test_csv_sheets_carry_the_rules_the_jsonl_sheets_carry(example: Project) -> None:
    out = example.root / "sheets"
    export_sheets(example, "refunds", out)
    touched: set[str] = set()
    for labeller in LABELLERS:
        jsonl = [
            json.loads(x)
            for x in (out / f"refunds.{labeller}.labels.jsonl").read_text().splitlines()
        ]
        csv_path = out / f"refunds.{labeller}.labels.csv"
        header, rows = _rows(csv_path)
        assert "sent_back_by" in header
        cells = {r[header.index("case_id")]: r[header.index("sent_back_by")] for r in rows}
        entries, problems = read_sheet(csv_path, csv_path.name)
        assert problems == []
        read_back = {e.answer.case_id: e.answer.sent_back_by for e in entries}
        for line in jsonl:
            rules = line.get("sent_back_by", [])
            assert read_back[line["case_id"]] == rules
            if rules:
                touched.add(line["case_id"])
                assert cells[line["case_id"]] == f"refunds-g8: {RULE}"
            else:
                assert cells[line["case_id"]] == ""
    assert len(touched) == 28


def test_a_rule_that_reads_the_label_shows_only_its_version_in_csv(tmp_path: Path) -> None:
    case = Case.model_validate(case_dict("c-1"))
    rules = (RelabelRule("refunds-g9", READS_LABEL), RelabelRule("refunds-g8", RULE))
    line = sheet_line("label", "refunds", "lab-1", case, "refunds-g9", {}, sent_back_by=rules)
    path = tmp_path / "s.csv"
    path.write_bytes(render_csv([line], "label", []))
    assert READS_LABEL not in path.read_text()
    entries, problems = read_sheet(path, "s.csv")
    assert problems == []
    assert (
        entries[0].answer.sent_back_by
        == line["sent_back_by"]
        == [
            {"guideline_version": "refunds-g9", "rule": None},
            {"guideline_version": "refunds-g8", "rule": RULE},
        ]
    )


def test_signed_csv_sheets_with_and_without_the_column_import(example: Project) -> None:
    out = example.root / "sheets"
    export_sheets(example, "refunds", out)
    csv_path = out / f"refunds.{LABELLERS[0]}.labels.csv"
    header, rows = _rows(csv_path)
    outcome = header.index("outcome")
    rows[0][outcome] = "escalate"
    _write(csv_path, header, rows)
    report = import_sheets(example, [csv_path])
    assert report.stored == {LABELLERS[0]: 1}
    # A sheet written before the column existed: the same rows without it.
    col = header.index("sent_back_by")
    old_header = header[:col] + header[col + 1 :]
    old_rows = [r[:col] + r[col + 1 :] for r in rows[1:3]]
    old_rows[0][old_header.index("outcome")] = "resolve"
    old = out / "old.csv"
    _write(old, old_header, old_rows)
    assert import_sheets(example, [old]).stored == {LABELLERS[0]: 1}
    # The signature still binds the line to its labeller: answering as someone else is refused.
    forged_rows = [r[:] for r in rows[3:4]]
    forged_rows[0][outcome] = "resolve"
    forged_rows[0][header.index("labeller")] = LABELLERS[1]
    forged = out / "forged.csv"
    _write(forged, header, forged_rows)
    with pytest.raises(InputErrors, match="signature"):
        import_sheets(example, [forged])
