"""Labelled cases from rows: generic JSONL with --map, Inspect samples in and out."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from click.testing import Result

from casework.dataset import load_dataset
from casework.errors import InputError
from casework.interop import (
    CaseDefaults,
    cases_from_rows,
    import_cases,
    inspect_samples,
    parse_case_map,
    read_rows,
)
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


def test_inspect_samples_from_the_real_log_and_csv(project_dir: Path) -> None:
    log = json.loads((DATA / "inspect/refunds.json").read_text())
    samples = [
        {k: s[k] for k in ("id", "input", "target", "metadata")}
        for s in log["samples"]
        if s["epoch"] == 1
    ]
    (project_dir / "samples.jsonl").write_bytes(_jsonl(samples))
    project = load_project(project_dir)
    report = import_cases(
        project, project_dir / "samples.jsonl", "insp", CaseDefaults("inspect", "support")
    )
    assert report.imported == ["r-1", "r-2", "r-3"]
    cases = {c.id: c for c in load_dataset(project, "insp").cases}
    assert cases["r-2"].situation.turns[0].content == "Where is my parcel?"
    assert cases["r-2"].label is not None and cases["r-2"].label.answer_facts == ["shipped"]
    assert cases["r-3"].slice == "x"  # the sample's metadata names its slice
    assert (
        cases["r-1"].label is not None and cases["r-1"].label.guideline_version == "inspect-import"
    )
    (project_dir / "s.csv").write_text(
        'id,input,target,metadata\nc-1,"Hello, cancel it",cancelled,"{""outcome"": ""refuse""}"\n',
        encoding="utf-8",
    )
    import_cases(project, project_dir / "s.csv", "insp", CaseDefaults("inspect", "support"))
    c1 = next(c for c in load_dataset(project, "insp").cases if c.id == "c-1")
    assert c1.label is not None and c1.label.outcome == "refuse"
    assert c1.situation.turns[0].content == "Hello, cancel it"
    (project_dir / "bad.csv").write_text(
        "id,input,target\nc-9,,x\nc-8,hi,x,extra\n", encoding="utf-8"
    )
    with pytest.raises(InputError, match=r"bad\.csv:3: row has more cells than the header"):
        import_cases(project, project_dir / "bad.csv", "insp", CaseDefaults("inspect", "support"))


def test_inspect_samples_round_trip(project_dir: Path, run_cli: Run) -> None:
    """casework -> Inspect samples -> casework keeps the cases' fields Inspect samples carry."""
    (project_dir / "rows.jsonl").write_bytes(_jsonl(list(ROWS)))
    assert (
        run_cli(
            "import", "jsonl", "rows.jsonl", "--dataset", "refunds", *(f"--map={m}" for m in MAP)
        ).exit_code
        == 0
    )
    out = run_cli("export", "inspect-samples", "refunds@1", "-o", "samples.jsonl")
    assert out.exit_code == 0, out.stderr
    assert out.stdout.strip() == "refunds@1: wrote 5 sample(s) to samples.jsonl"
    lines = [json.loads(x) for x in (project_dir / "samples.jsonl").read_text().splitlines()]
    w1 = next(s for s in lines if s["id"] == "w-1")
    assert w1["input"] == "Refund ORD-1, it arrived broken." and w1["target"] == []
    back = run_cli("import", "inspect-samples", "samples.jsonl", "--dataset", "copy")
    assert back.exit_code == 0, back.stderr
    project = load_project(project_dir)
    original = {c.id: c for c in load_dataset(project, "refunds@1").cases}
    copied = {c.id: c for c in load_dataset(project, "copy").cases}
    assert set(copied) == set(original)
    for cid, c in original.items():
        d = copied[cid]
        assert (d.slice, d.split, d.satisfiable) == (c.slice, c.split, c.satisfiable)
        assert d.situation.model_dump() == c.situation.model_dump(include={"goal", "turns", "state", "fixtures", "injected", "state_ref", "state_patch"}) | {
            "fixtures": [], "injected": []
        }  # fmt: skip
        assert d.label is not None and c.label is not None
        assert d.label.model_dump(exclude={"labellers", "adjudicated"}) == c.label.model_dump(
            exclude={"labellers", "adjudicated"}
        )
    assert inspect_samples([]) == []
