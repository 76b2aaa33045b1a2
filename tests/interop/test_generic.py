"""Labelled cases from rows: generic JSONL (and CSV) with --map."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from click.testing import Result

from casework.dataset import load_dataset
from casework.errors import InputError
from casework.interop.generic import CaseDefaults, read_rows
from casework.interop.generic._cases import cases_from_rows, parse_case_map
from casework.project import load_project
from casework.schema import ArgMatcher, ToolRequirement

Run = Callable[..., Result]
DATA = Path(__file__).parent / "data"

ROWS = [
    {
        "uid": "w-1",
        "q": "Refund ORD-1, it arrived broken.",
        "gold": {"decision": "resolve", "calls": [{"name": "issue_refund", "arguments": {"order_id": "ORD-1"}}]},
        "area": "refunds",
    },
    {
        "uid": "w-2",
        "q": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "Refund please"}],
        "gold": {"decision": "clarify", "calls": []},
        "facts": ["which order"],
    },
]  # fmt: skip
MAP = (
    "id=uid",
    "input=q",
    "outcome=gold.decision",
    "required_tools=gold.calls",
    "slice=area",
    "answer_facts=facts",
)


def _jsonl(rows: Sequence[object]) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode("utf-8")


def test_generic_rows_map_to_labelled_cases() -> None:
    rows = read_rows(_jsonl(list(ROWS)), "rows.jsonl")
    cases = cases_from_rows(rows, "rows.jsonl", parse_case_map(MAP), CaseDefaults("jsonl", "misc"))
    a, b = cases
    assert (a.id, a.slice, a.split, a.source) == ("w-1", "refunds", "dev", "hand")
    assert a.situation.goal == "Refund ORD-1, it arrived broken."
    assert a.label is not None and a.label.outcome == "resolve"
    assert a.label.required_tools == [
        ToolRequirement(
            name="issue_refund", arguments={"order_id": ArgMatcher(match="exact", value="ORD-1")}
        )
    ]
    assert a.label.guideline_version == "jsonl-import"
    assert b.slice == "misc" and [t.role for t in b.situation.turns] == ["system", "user"]
    assert b.situation.goal == "Refund please"
    assert (
        b.label is not None
        and b.label.outcome == "clarify"
        and b.label.answer_facts == ["which order"]
    )


def test_every_mapping_error_has_its_line() -> None:
    rows = [
        ROWS[0],
        {"q": "no id", "gold": {"decision": "resolve"}},
        {"uid": "w-3", "gold": {"decision": "resolve"}},
        {"uid": "w-4", "q": "x", "gold": {"decision": "resolved"}},
        {"uid": "w-5", "q": "x", "gold": {}},
        {"uid": "w-1", "q": "again", "gold": {"decision": "resolve"}},
        {"uid": "w-6", "q": "x", "gold": {"decision": "resolve", "calls": 7}},
    ]
    data = _jsonl(rows) + b"{broken\n"
    with pytest.raises(InputError) as caught:
        cases_from_rows(
            read_rows(data, "r.jsonl"), "r.jsonl", parse_case_map(MAP), CaseDefaults("jsonl", "m")
        )
    assert "r.jsonl:8: invalid JSON" in str(caught.value)  # a bad JSON line stops the read first
    with pytest.raises(InputError) as caught:
        cases_from_rows(
            read_rows(_jsonl(rows), "r.jsonl"),
            "r.jsonl",
            parse_case_map(MAP),
            CaseDefaults("jsonl", "m"),
        )
    assert str(caught.value).splitlines() == [
        "r.jsonl:2: uid: every row needs an id (a string or an integer; map one with id=PATH).",
        "r.jsonl:3: q: every row needs an input (map one with input=PATH).",
        "r.jsonl:4: label.outcome: Input should be 'resolve', 'clarify', 'refuse' or 'escalate'. Got 'resolved'.",
        "r.jsonl:5: gold.decision: every labelled row needs an outcome (map one with outcome=PATH).",
        "r.jsonl:6: id: id repeats an earlier row (line 1). Got 'w-1'.",
        "r.jsonl:7: gold.calls: must be a list of tool names or {name, arguments} objects. Got 7.",
    ]


def test_cli_import_jsonl_releases_and_refuses_existing_ids(
    project_dir: Path, run_cli: Run
) -> None:
    (project_dir / "rows.jsonl").write_bytes(_jsonl(list(ROWS)))
    args = ["import", "jsonl", "rows.jsonl", "--dataset", "refunds", *(f"--map={m}" for m in MAP)]
    out = run_cli(*args)
    assert out.exit_code == 0, out.stderr
    assert "refunds@1 released" in out.stdout
    ids = {c.id for c in load_dataset(load_project(project_dir), "refunds").cases}
    assert ids == {"r-1", "r-2", "r-3", "w-1", "w-2"}
    before = (project_dir / "datasets/refunds/cases.jsonl").read_bytes()
    again = run_cli(*args)
    assert again.exit_code == 1
    assert again.stderr.splitlines() == [
        "rows.jsonl: id: case id 'w-1' is already in dataset 'refunds'. Got 'w-1'.",
        "rows.jsonl: id: case id 'w-2' is already in dataset 'refunds'. Got 'w-2'.",
    ]
    assert (project_dir / "datasets/refunds/cases.jsonl").read_bytes() == before
    bad = run_cli("import", "jsonl", "rows.jsonl", "--dataset", "refunds", "--map", "nope=x")
    assert bad.exit_code == 2 and "unknown destination 'nope'" in bad.stderr
