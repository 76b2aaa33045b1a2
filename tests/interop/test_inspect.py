"""Inspect AI samples: in as rows with Inspect's defaults (the real log's samples, CSV), and out."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from casework.dataset import load_dataset
from casework.errors import InputError
from casework.interop.generic import CaseDefaults, import_cases
from casework.interop.inspect._samples import inspect_samples
from casework.project import load_project
from tests.interop.test_generic import MAP, ROWS, _jsonl

Run = Callable[..., Result]
DATA = Path(__file__).parent / "data"


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
