"""Verdict sheets: blind to the judge, read back with located errors, imported all or nothing."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import func, select

from casework.cli import cli
from casework.errors import InputErrors
from casework.project import load_project
from casework.review import import_verdicts, sample_verdicts
from casework.review._sheets import CSV_COLUMNS, read_verdict_sheet
from casework.workbench import open_workbench
from casework.workbench.models_judge import ReviewItemRow, ReviewVerdictRow
from tests.review import builders

#: What a sheet line holds: what the check needs, and the bookkeeping to read the answer back.
SHEET_KEYS = {
    "sheet", "item", "reviewer", "kind", "question", "rubric", "fact", "conversation",
    "tool_calls", "reply", "answer", "signature",
}  # fmt: skip

#: Never on a sheet: the judge's verdict, reason and evidence, the label beyond the check's
#: question, satisfiable, provenance, the case and run ids.
FORBIDDEN = (
    builders.REASON,
    "evidence",
    "judged",
    "admissible",
    "satisfiable",
    "judge_pass",
    "passed",
    "findings",
    "PROVENANCE-MARK",
    "TRACE-MARK",
    "outside_policy",
    "provenance",
    "SECRET-GOAL",
    "SECRET-STATE",
    "labellers",
    "guideline_version",
    "run-judge-1-0",
    '"r-1"',
    "u-1",
    "judge-1",
)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    folder = builders.make(tmp_path / "proj")
    monkeypatch.chdir(folder)
    builders.run(folder, seed=0)
    return folder


def _sample(root: Path, fmt: str = "jsonl", n: int = 40, overlap: float = 0.25) -> dict[str, Path]:
    report = sample_verdicts(
        load_project(root),
        ["run-judge-1-0"],
        n=n,
        reviewers=["ann", "bo"],
        out=root / f"sheets-{fmt}",
        overlap=overlap,
        sheet_format=fmt,  # type: ignore[arg-type]
    )
    return report.sheets


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _write(path: Path, lines: list[dict[str, object]]) -> None:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def test_sheets_show_only_what_the_check_needs(root: Path) -> None:
    sheets = _sample(root, n=20) | {f"{k}.csv": v for k, v in _sample(root, "csv", n=20).items()}
    for path in sheets.values():
        text = path.read_text()
        for marker in FORBIDDEN:
            assert marker not in text, (path.name, marker)
    lines = _lines(sheets["ann"])
    assert {k for line in lines for k in line} == SHEET_KEYS
    kinds = {str(line["kind"]) for line in lines}
    assert kinds == {"outcome", "answer_fact"}
    for line in lines:
        assert line["answer"] is None and str(line["item"]).startswith("v-")
        assert line["rubric"] in (builders.RUBRIC, None)
        if line["kind"] == "answer_fact":
            assert str(line["question"]).startswith("Does the reply state this fact?")
            assert line["fact"]
        else:
            assert str(line["question"]).startswith("Which outcome does this reply take?")
            assert line["fact"] is None
    header = next(csv.reader(io.StringIO(sheets["ann.csv"].read_text())))
    assert tuple(header) == CSV_COLUMNS


def _answer_all(path: Path) -> list[dict[str, object]]:
    lines = _lines(path)
    for line in lines:
        if line["kind"] == "outcome":
            line["answer"] = "refuse" if "can't" in str(line["reply"]) else "resolve"
        else:
            line["answer"] = "yes" if str(line["fact"]).split()[-1] in str(line["reply"]) else "no"
    _write(path, lines)
    return lines


def _stored(root: Path) -> int:
    with open_workbench(load_project(root)) as wb, wb.session() as s:
        return int(s.scalar(select(func.count()).select_from(ReviewVerdictRow)) or 0)


def test_import_stores_every_answer_and_measures_human_agreement(root: Path) -> None:
    sheets = _sample(root)
    ann, bo = _answer_all(sheets["ann"]), _answer_all(sheets["bo"])
    shared = {str(a["item"]) for a in ann} & {str(b["item"]) for b in bo}
    assert len(shared) == 10  # a quarter of 40
    # bo reads one shared fact item the other way
    flipped = next(b for b in bo if b["item"] in shared and b["kind"] == "answer_fact")
    flipped["answer"] = "no" if flipped["answer"] == "yes" else "yes"
    _write(sheets["bo"], bo)
    report = import_verdicts(load_project(root), list(sheets.values()))
    assert report.stored == len(ann) + len(bo) == 50 and report.unanswered == 0
    assert (report.agreement.items, report.agreement.agreeing) == (10, 9)
    again = import_verdicts(load_project(root), [sheets["ann"]])
    assert again.replaced == len(ann) and _stored(root) == 50


def test_csv_answers_are_read_back(root: Path) -> None:
    sheets = _sample(root, "csv", n=6, overlap=0)
    path = sheets["ann"]
    rows = list(csv.reader(io.StringIO(path.read_text())))
    answer = rows[0].index("answer")
    kind = rows[0].index("kind")
    for row in rows[1:]:
        row[answer] = "Escalate" if row[kind] == "outcome" else " YES "
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    path.write_text(buffer.getvalue())
    entries, problems = read_verdict_sheet(path, "ann.csv")
    assert problems == [] and {e.answer for e in entries} <= {"escalate", "yes"}
    assert import_verdicts(load_project(root), [path]).stored == 3


def test_bad_answers_are_located_and_nothing_is_stored(root: Path) -> None:
    sheets = _sample(root, n=8, overlap=0)
    lines = _answer_all(sheets["ann"])
    outcome = next(i for i, line in enumerate(lines) if line["kind"] == "outcome")
    fact = next(i for i, line in enumerate(lines) if line["kind"] == "answer_fact")
    lines[outcome]["answer"] = "resolved"
    lines[fact]["answer"] = "maybe"
    lines[0 if outcome and fact else 3]["item"] = "v-000000000000"
    _write(sheets["ann"], lines)
    bo = _answer_all(sheets["bo"])
    bo[0]["reviewer"] = "ann"
    _write(sheets["bo"], bo)
    with pytest.raises(InputErrors) as err:
        import_verdicts(load_project(root), list(sheets.values()))
    text = str(err.value)
    assert (
        f"sheets-jsonl/verdicts-ann.jsonl:{outcome + 1}: answer: must be resolve, clarify, refuse "
        "or escalate. Got 'resolved'." in text
    )
    assert (
        f"sheets-jsonl/verdicts-ann.jsonl:{fact + 1}: answer: must be yes or no. Got 'maybe'."
        in text
    )
    assert ": item: no sampled item has this id. Got 'v-000000000000'." in text
    assert (
        "sheets-jsonl/verdicts-bo.jsonl:1: reviewer: this item was given to bo. Got 'ann'." in text
    )
    assert _stored(root) == 0


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"sheet": "label", "item": "v-1", "reviewer": "a", "kind": "outcome"}\n', "1: sheet:"),
        (b'{"item": "v-1", "reviewer": "a", "kind": "x", "sheet": "verdict"}\n', "1: kind:"),
        (b"not json\n", "1:"),
        (b"\xff\xfe\n", "invalid UTF-8"),
    ],
)
def test_malformed_sheets_give_located_errors(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "v.jsonl"
    path.write_bytes(content)
    entries, problems = read_verdict_sheet(path, "v.jsonl")
    assert entries == [] and problems
    assert str(problems[0]).startswith("v.jsonl:") and message in str(problems[0])


def test_a_misspelt_answer_field_is_not_read_as_blank(tmp_path: Path) -> None:
    path = tmp_path / "v.jsonl"
    line = {"sheet": "verdict", "item": "v-1", "reviewer": "a", "kind": "outcome", "anwser": "x"}
    path.write_text(json.dumps(line) + "\n")
    _, problems = read_verdict_sheet(path, "v.jsonl")
    assert [str(p) for p in problems] == ["v.jsonl:1: anwser: unknown field. Got 'anwser'."]


def test_a_csv_without_the_answer_column_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "v.csv"
    path.write_text("sheet,item,reviewer,kind,colour\nverdict,v-1,a,outcome,red\n")
    _, problems = read_verdict_sheet(path, "v.csv")
    assert [str(p) for p in problems] == [
        "v.csv:1: colour: unknown column. Got 'colour'.",
        "v.csv:1: answer: column missing from the header row.",
        "v.csv:1: signature: column missing from the header row.",
    ]


def _answers(root: Path) -> dict[tuple[str, str], str]:
    """Stored answers by (sheet item id, reviewer)."""
    with open_workbench(load_project(root)) as wb, wb.session() as s:
        ids = {r.key: r.sheet_id for r in s.scalars(select(ReviewItemRow))}
        return {
            (ids[r.item_key], r.reviewer): r.answer for r in s.scalars(select(ReviewVerdictRow))
        }


def _flip(line: dict[str, object]) -> None:
    if line["kind"] == "outcome":
        line["answer"] = "escalate" if line["answer"] != "escalate" else "resolve"
    else:
        line["answer"] = "no" if line["answer"] == "yes" else "yes"


def test_a_sheet_edited_to_name_another_reviewer_is_refused(root: Path) -> None:
    sheets = _sample(root)
    ann, bo = _answer_all(sheets["ann"]), _answer_all(sheets["bo"])
    import_verdicts(load_project(root), [sheets["bo"]])
    before = _answers(root)
    shared = {str(b["item"]) for b in bo}
    for line in ann:  # ann answers the other way and files every line under bo's name
        _flip(line)
        line["reviewer"] = "bo"
    _write(sheets["ann"], ann)
    with pytest.raises(InputErrors) as err:
        import_verdicts(load_project(root), [sheets["ann"]])
    text = str(err.value)
    for number, line in enumerate(ann, start=1):
        at = f"sheets-jsonl/verdicts-ann.jsonl:{number}: reviewer: "
        if line["item"] in shared:
            assert (
                f"{at}this line was not written for bo (it is on ann's sheet); everyone returns "
                "the sheet written for them. Got 'bo'." in text
            )
        else:
            assert f"{at}this item was given to ann. Got 'bo'." in text
    assert _answers(root) == before


def test_a_line_copied_from_another_reviewers_sheet_is_refused(root: Path) -> None:
    sheets = _sample(root)
    ann, bo = _answer_all(sheets["ann"]), _answer_all(sheets["bo"])
    import_verdicts(load_project(root), [sheets["bo"]])
    before = _answers(root)
    copied = next(b for b in bo if any(a["item"] == b["item"] for a in ann))
    _flip(copied)  # bo's own signed line, answered the other way, slipped into ann's sheet
    _write(sheets["ann"], [*ann, copied])
    with pytest.raises(InputErrors) as err:
        import_verdicts(load_project(root), [sheets["ann"]])
    assert str(err.value).endswith(
        f"sheets-jsonl/verdicts-ann.jsonl:{len(ann) + 1}: reviewer: this sheet is ann's (line 1); "
        "a sheet holds one reviewer's answers, return each reviewer's own sheet. Got 'bo'."
    )
    assert _answers(root) == before


def test_a_duplicated_row_is_refused(root: Path) -> None:
    sheets = _sample(root, n=8, overlap=0)
    ann = _answer_all(sheets["ann"])
    twice = dict(ann[0])
    _flip(twice)
    _write(sheets["ann"], [*ann, twice])
    with pytest.raises(InputErrors) as err:
        import_verdicts(load_project(root), [sheets["ann"]])
    assert str(err.value).endswith(
        f"sheets-jsonl/verdicts-ann.jsonl:{len(ann) + 1}: item: answered twice by this reviewer "
        f"in these sheets (first at sheets-jsonl/verdicts-ann.jsonl:1). Got '{ann[0]['item']}'."
    )
    assert _stored(root) == 0


def test_a_line_without_its_signature_is_refused(root: Path) -> None:
    sheets = _sample(root, n=8, overlap=0)
    ann = _answer_all(sheets["ann"])
    ann[1]["signature"] = ""
    del ann[2]["signature"]
    _write(sheets["ann"], ann)
    with pytest.raises(InputErrors) as err:
        import_verdicts(load_project(root), [sheets["ann"]])
    missing = (
        "signature: missing; `judge sample` signs every line for the reviewer it was written for "
        "(answer on the sheet it wrote, without removing the signature)."
    )
    assert str(err.value).splitlines()[-2:] == [
        f"sheets-jsonl/verdicts-ann.jsonl:2: {missing}",
        f"sheets-jsonl/verdicts-ann.jsonl:3: {missing}",
    ]
    assert _stored(root) == 0


def test_a_csv_sheet_edited_to_name_another_reviewer_is_refused(root: Path) -> None:
    sheets = _sample(root, "csv", n=12, overlap=1)
    path = sheets["ann"]
    rows = list(csv.reader(io.StringIO(path.read_text())))
    header = rows[0]
    assert header[-1] == "signature" and all(len(row[-1]) == 32 for row in rows[1:])
    for row in rows[1:]:
        row[header.index("answer")] = "yes" if row[header.index("kind")] != "outcome" else "refuse"
        row[header.index("reviewer")] = "bo"
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    path.write_text(buffer.getvalue())
    with pytest.raises(InputErrors) as err:
        import_verdicts(load_project(root), [path])
    assert str(err.value).count(": reviewer: this line was not written for bo") == len(rows) - 1
    assert _stored(root) == 0


def test_the_command_refuses_an_edited_sheet_with_exit_1(root: Path) -> None:
    sheets = _sample(root, n=8, overlap=1)
    ann = _answer_all(sheets["ann"])
    ann[0]["reviewer"] = "bo"
    _write(sheets["ann"], ann)
    result = CliRunner().invoke(
        cli, ["--project", str(root), "judge", "verdicts", "import", str(sheets["ann"])]
    )
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert (
        "sheets-jsonl/verdicts-ann.jsonl:1: reviewer: this line was not written for bo (it is on "
        "ann's sheet)" in result.output
    )
    assert _stored(root) == 0
