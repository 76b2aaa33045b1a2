"""Function-calling rows in: When2Call, BFCL and mapped JSONL with per-case tool catalogues."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from casework.dataset import load_dataset
from casework.errors import InputError, InputErrors
from casework.interop.fncall import FncallOptions, cases_from_fncall, parse_fncall_map
from casework.interop.generic import read_rows
from casework.project import load_project
from casework.schema import Case

Run = Callable[..., Result]
WEATHER = {
    "name": "get_weather",
    "description": "Weather of a city today.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}  # fmt: skip
FLIGHT = {"name": "book_flight", "description": "Book a flight.", "parameters": {"type": "object", "properties": {"to": {"type": "string"}}}}  # fmt: skip
W2C = [
    {"uuid": "w-1", "question": "Weather in Porto?", "tools": [json.dumps(WEATHER)],
     "correct_answer": "tool_call", "target_tool": json.dumps(WEATHER),
     "answers": {"tool_call": json.dumps({"name": "get_weather", "arguments": {"city": "Porto"}})}},
    {"uuid": "w-2", "question": "What's the weather like?", "tools": [json.dumps(WEATHER)],
     "correct_answer": "request_for_info", "target_tool": None},
    {"uuid": "w-3", "question": "Book me a flight to Oslo.", "tools": [json.dumps(WEATHER)],
     "correct_answer": "cannot_answer", "target_tool": None},
    {"uuid": "w-4", "question": "What is 2+2?", "tools": [], "correct_answer": "direct", "target_tool": None},
]  # fmt: skip
BFCL = [
    {"id": "simple_0", "question": [[{"role": "user", "content": "Weather in Lisbon or Lisboa?"}]],
     "function": [{"name": "get_weather", "description": "Weather.", "parameters": {"type": "dict", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}, "days": {"type": "float"}}}}],
     "ground_truth": [{"get_weather": {"city": ["Lisbon", "Lisboa"], "unit": ["", "celsius"], "days": [1.0]}}]},
    {"id": "irrelevance_0", "question": [[{"role": "user", "content": "Sing me a song."}]],
     "function": [FLIGHT]},
]  # fmt: skip


def _jsonl(rows: Sequence[object]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")


def _cases(rows: Sequence[object], style: Any, mapping: Sequence[str] = ()) -> dict[str, Case]:
    parsed = read_rows(_jsonl(rows), "rows.jsonl")
    cases, _ = cases_from_fncall(
        parsed, "rows.jsonl", parse_fncall_map(style, mapping), FncallOptions(style), "d"
    )
    return {c.id: c for c in cases}


def _names(reqs: Sequence[Any]) -> list[str]:
    return sorted(r.name for r in reqs)


def test_when2call_outcome_classes() -> None:
    cases = _cases(W2C, "when2call")
    call, ask, none, direct = (cases[f"w-{i}"] for i in range(1, 5))
    assert call.label is not None and call.label.outcome == "resolve"
    (req,) = call.label.required_tools
    assert req.name == "get_weather"
    assert req.arguments["city"].model_dump() == {"match": "exact", "value": "Porto"}
    assert ask.label is not None and ask.label.outcome == "clarify"
    assert _names(ask.label.forbidden_tools) == ["get_weather"]
    assert none.label is not None and none.label.outcome == "refuse"
    assert _names(none.label.forbidden_tools) == ["get_weather"]
    assert direct.label is not None and direct.label.outcome == "resolve"
    assert direct.situation.tools == [] and direct.situation.tools_file is None
    assert call.situation.tools_file is not None and call.situation.tools_sha256 is not None
    assert call.situation.tools_file == ask.situation.tools_file  # one file per distinct set


def test_bfcl_value_lists_become_matchers_and_irrelevance_refuses() -> None:
    cases = _cases(BFCL, "bfcl")
    simple = cases["simple_0"]
    assert simple.label is not None and simple.label.outcome == "resolve"
    (req,) = simple.label.required_tools
    args = {k: v.model_dump() for k, v in req.arguments.items()}
    assert args == {
        "city": {"match": "any_of", "value": ["Lisbon", "Lisboa"], "strings": "bfcl"},
        "unit": {"match": "any_of", "value": ["", "celsius"], "strings": "bfcl", "optional": True},
        "days": {"match": "any_of", "value": [1.0], "strings": "bfcl"},
    }  # "unit" may be left out ("" among its values) and, a string, may be given as ""
    irr = cases["irrelevance_0"]
    assert irr.label is not None and irr.label.outcome == "refuse"
    assert _names(irr.label.forbidden_tools) == ["book_flight"]


def test_bfcl_types_are_made_json_schema_in_the_catalogue(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    root = tmp_path / "p"
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "tools.json").write_text("[]", "utf-8")
    (root / "casework.toml").write_text('name = "t"\n', "utf-8")
    (root / "bfcl.jsonl").write_bytes(_jsonl(BFCL))
    monkeypatch.chdir(root)
    out = run_cli("import", "fncall", "bfcl.jsonl", "--dataset", "b", "--style", "bfcl")
    assert out.exit_code == 0, out.output
    assert "2 case(s)" in out.output and "1 refuse, 1 resolve" in out.output
    cases = {c.id: c for c in load_dataset(load_project(root), "b").cases}
    rel = cases["simple_0"].situation.tools_file
    assert rel is not None
    (decl,) = json.loads((root / rel).read_text("utf-8"))
    assert decl["parameters"]["type"] == "object"
    assert decl["parameters"]["properties"]["days"] == {"type": "number"}
    check = run_cli("dataset", "check", "b")
    assert check.exit_code == 0, check.output + check.stderr


def test_a_mapping_reads_similar_datasets() -> None:
    rows = [
        {"qid": 7, "prompt": "Weather in Rome", "fns": [WEATHER], "gold": {"kind": "call",
         "call": {"name": "get_weather", "arguments": {"city": "Rome"}}}},
        {"qid": 8, "prompt": "Weather?", "fns": [WEATHER], "gold": {"kind": "ask"}},
    ]  # fmt: skip
    mapping = ("id=qid", "input=prompt", "tools=fns", "expected=gold.call", "outcome=gold.kind")
    cases = _cases(rows, "generic", mapping)
    assert cases["7"].label is not None and cases["7"].label.outcome == "resolve"
    assert _names(cases["7"].label.required_tools) == ["get_weather"]
    assert cases["8"].label is not None and cases["8"].label.outcome == "clarify"


def test_every_mapping_error_is_reported_with_its_line(tmp_path: Path) -> None:
    rows = [
        {"uuid": "a", "question": "x", "tools": [WEATHER], "correct_answer": "maybe"},
        {"question": "x", "tools": [WEATHER], "correct_answer": "direct"},
        {"uuid": "c", "question": "x", "correct_answer": "direct"},
        {"uuid": "d", "question": "x", "tools": [WEATHER], "correct_answer": "tool_call",
         "answers": {"tool_call": {"name": "book_flight", "arguments": {}}}},
        {"uuid": "e", "question": "x", "tools": [{"description": "no name"}], "correct_answer": "direct"},
        {"uuid": "f", "question": "x", "tools": [WEATHER], "correct_answer": "tool_call"},
        {"uuid": "g", "question": "x", "tools": [], "correct_answer": "direct"},
        {"uuid": "g", "question": "x", "tools": [], "correct_answer": "direct"},
    ]  # fmt: skip
    with pytest.raises(InputError) as info:
        _cases(rows, "when2call")
    lines = str(info.value).splitlines()
    assert lines[0].startswith("rows.jsonl:1: correct_answer: outcome class must be one of")
    assert lines[1].startswith("rows.jsonl:2: uuid: every row needs an id")
    assert lines[2].startswith("rows.jsonl:3: tools: every row needs its offered tools")
    assert lines[3].startswith(
        "rows.jsonl:4: answers.tool_call: expected call names a tool the row does not offer"
    )
    assert lines[4].startswith("rows.jsonl:5: tools[0].name: tool needs a non-empty string name")
    assert lines[5].startswith(
        "rows.jsonl:6: answers.tool_call: a tool_call row needs its expected call"
    )
    assert lines[6].startswith("rows.jsonl:8: id: id repeats an earlier row (line 7)")
    assert len(lines) == 7


def test_the_cli_writes_nothing_on_a_bad_row_and_refuses_existing_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    root = tmp_path / "p"
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "tools.json").write_text("[]", "utf-8")
    (root / "casework.toml").write_text('name = "t"\n', "utf-8")
    monkeypatch.chdir(root)
    (root / "bad.jsonl").write_bytes(_jsonl([W2C[0], {"uuid": "x"}]))
    bad = run_cli("import", "fncall", "bad.jsonl", "--dataset", "w", "--style", "when2call")
    assert bad.exit_code != 0
    assert "bad.jsonl:2: question: every row needs an input" in bad.output + bad.stderr
    assert not (root / "datasets").exists() and not (root / "catalogues").exists()
    (root / "w2c.jsonl").write_bytes(_jsonl(W2C))
    ok = run_cli("import", "fncall", "w2c.jsonl", "--dataset", "w", "--style", "when2call")
    assert ok.exit_code == 0, ok.output
    assert run_cli("dataset", "check", "w").exit_code == 0
    again = run_cli("import", "fncall", "w2c.jsonl", "--dataset", "w", "--style", "when2call")
    assert again.exit_code != 0
    assert "case id 'w-1' is already in dataset 'w'" in again.output + again.stderr
    unknown = run_cli("import", "fncall", "w2c.jsonl", "--dataset", "w", "--map", "nope=x")
    assert (
        unknown.exit_code != 0 and "unknown destination 'nope'" in unknown.output + unknown.stderr
    )


def test_bfcl_answers_in_their_own_file_are_joined_by_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    root = tmp_path / "p"
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "tools.json").write_text("[]", "utf-8")
    (root / "casework.toml").write_text('name = "t"\n', "utf-8")
    monkeypatch.chdir(root)
    questions = [{k: v for k, v in row.items() if k != "ground_truth"} for row in BFCL]
    (root / "q.jsonl").write_bytes(_jsonl(questions))
    answer = {"id": "simple_0", "ground_truth": BFCL[0]["ground_truth"]}
    (root / "bad.jsonl").write_bytes(_jsonl([answer, {"id": "nope", "ground_truth": []}, {"x": 1}]))
    bad = run_cli(*("import", "fncall", "q.jsonl", "--dataset", "b", "--style", "bfcl"),
                  *("--answers", "bad.jsonl"))  # fmt: skip
    text = bad.output + bad.stderr
    assert bad.exit_code != 0
    assert "bad.jsonl:2: id: no row has this id. Got 'nope'." in text
    assert "bad.jsonl:3: id: an answer needs the id of its row" in text
    assert not (root / "datasets").exists()
    (root / "a.jsonl").write_bytes(_jsonl([answer]))
    ok = run_cli(*("import", "fncall", "q.jsonl", "--dataset", "b", "--style", "bfcl"),
                 *("--answers", "a.jsonl"))  # fmt: skip
    assert ok.exit_code == 0, ok.output
    cases = {c.id: c for c in load_dataset(load_project(root), "b").cases}
    label = cases["simple_0"].label
    assert label is not None and label.outcome == "resolve"
    assert [r.name for r in label.required_tools] == ["get_weather"]


def test_target_tool_is_a_declaration_never_read_as_the_expected_call() -> None:
    # When2Call's target_tool is the tool's declaration: read as a call, its JSON Schema would
    # have become the expected arguments.
    row = {"uuid": "w-1", "question": "Weather in Porto?", "tools": [json.dumps(WEATHER)],
           "correct_answer": "tool_call", "target_tool": json.dumps(WEATHER)}  # fmt: skip
    with pytest.raises(InputErrors) as caught:
        _cases([row], "generic")
    assert "rows.jsonl:1: expected: a tool_call row needs its expected call" in str(caught.value)
    (case,) = _cases([W2C[0]], "when2call").values()
    assert case.label is not None
    assert [r.name for r in case.label.required_tools] == ["get_weather"]
    assert set(case.label.required_tools[0].arguments) == {"city"}


@pytest.mark.parametrize(
    ("parameters", "shown"),
    [
        ({"type": "dict", "properties": 1.0}, "parameters.properties: must be an object. Got 1.0"),
        ({"type": "dict", "properties": ["city"]}, "parameters.properties: must be an object"),
        ({"type": "dict", "required": 1.0}, "parameters.required: must be a list of parameter"),
        ([1, 2], "function[0].parameters: must be a JSON Schema object. Got [1, 2]"),
    ],
)
def test_a_malformed_bfcl_declaration_is_a_located_row_error(parameters: Any, shown: str) -> None:
    # Found by the reader fuzz: `"properties": 1.0` ended in AttributeError, a traceback.
    row = {**BFCL[0], "function": [{"name": "get_weather", "parameters": parameters}]}
    with pytest.raises(InputErrors) as caught:
        _cases([row], "bfcl")
    assert "rows.jsonl:1:" in str(caught.value) and shown in str(caught.value)


def test_a_bfcl_required_list_may_hold_anything() -> None:
    # `required` was made a set: an object in it was unhashable (TypeError).
    params = {"type": "dict", "properties": {"city": {"type": "string"}}, "required": [{}, "city"]}
    row = {**BFCL[0], "function": [{"name": "get_weather", "parameters": params}],
           "ground_truth": [{"get_weather": {"city": ["Lisbon"]}}]}  # fmt: skip
    (case,) = _cases([row], "bfcl").values()
    assert case.label is not None
    assert [r.name for r in case.label.required_tools] == ["get_weather"]
