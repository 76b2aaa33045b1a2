"""casework → Inspect AI → casework on the refunds example, with Inspect itself in the middle.

The example's dataset holds synthetic variants (`status-056~paraphrase`) and conversations whose
earlier assistant turns called tools. Inspect loads the exported samples with its own dataset
reader and runs some of them on its scripted mock model; importing its log keeps each sample's
timing and token usage, and importing the samples gives every case back unchanged.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from casework.dataset import load_dataset, release
from casework.interop.generic import CaseDefaults, import_cases
from casework.interop.inspect._samples import export_inspect_samples
from casework.interop.run_import import RunImportOptions, import_run
from casework.project import load_project
from casework.runner.records import read_log
from tests.unmeasured import unmeasured_env

inspect_ai = pytest.importorskip("inspect_ai", reason="the test extra installs inspect-ai")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "refunds"


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scratch copy of the refunds example, released, with its cases exported for Inspect."""
    root = tmp_path_factory.mktemp("inspect") / "refunds"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("build", ".casework"))
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    project = load_project(root)
    release(project, "refunds", None, "for Inspect")
    export_inspect_samples(project, "refunds", root / "samples.jsonl")
    return root


def test_inspect_reads_every_sample_with_its_tool_calls(exported: Path) -> None:
    from inspect_ai.dataset import json_dataset

    project = load_project(exported)
    cases = [c for c in load_dataset(project, "refunds").cases if not c.frozen]
    samples = json_dataset(str(exported / "samples.jsonl"))
    assert len(samples) == len(cases)
    ours = sum(len(t.tool_calls) for c in cases for t in c.situation.turns)
    theirs = sum(
        len(getattr(m, "tool_calls", None) or [])
        for s in samples
        if not isinstance(s.input, str)
        for m in s.input
    )
    assert ours > 0 and theirs == ours
    assert any("~" in str(s.id) for s in samples)


def test_importing_the_samples_gives_every_case_back_unchanged(exported: Path) -> None:
    project = load_project(exported)
    report = import_cases(
        project, exported / "samples.jsonl", "back", CaseDefaults("inspect", "unsorted")
    )
    original = {c.id: c for c in load_dataset(project, "refunds").cases if not c.frozen}
    back = {c.id: c for c in load_dataset(project, "back").cases}
    assert sorted(report.imported) == sorted(original)
    changed = [i for i, c in original.items() if c.model_dump() != back[i].model_dump()]
    assert changed == []


def test_an_inspect_run_imports_with_its_timings_and_token_usage(exported: Path) -> None:
    project = load_project(exported)
    cases = [c for c in load_dataset(project, "refunds").cases if not c.frozen]
    with_calls = [c.id for c in cases if any(t.tool_calls for t in c.situation.turns)]
    chosen = [*with_calls[:2], next(c.id for c in cases if c.id not in with_calls)]
    done = subprocess.run(
        [sys.executable, "-m", "tests.interop.inspect_run", str(exported / "samples.jsonl"),
         str(exported / "inspect-logs"), *chosen],
        cwd=ROOT, env={**unmeasured_env(), "PYTHONPATH": str(ROOT)}, check=True, timeout=300,
        capture_output=True, text=True,
    )  # fmt: skip
    log = Path(done.stdout.strip().splitlines()[-1].removeprefix("file://"))
    report = import_run(project, log, RunImportOptions(format="inspect", dataset="refunds"))
    trials = read_log(project.root / report.path).trials
    assert len(trials) == 6
    assert {t.case_id for t in trials} == set(chosen)
    assert all(t.duration_s > 0 for t in trials)
    assert all(
        (t.trajectory.usage.input_tokens, t.trajectory.usage.output_tokens) == (11, 7)
        for t in trials
    )
    assert len({t.started_at for t in trials}) > 1  # each sample's own start, not the import's


def test_a_hand_written_inspect_tool_message_becomes_the_calls_result(tmp_path: Path) -> None:
    from casework.interop.generic._cases import CASE_FIELDS, Row, cases_from_rows

    row = {
        "id": "t-1",
        "input": [
            {"role": "user", "content": "Where is ORD-1?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c1", "function": "get_order", "arguments": {"id": "ORD-1"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "function": "get_order", "content": '{"s": 1}'},
            {"role": "user", "content": "And?"},
        ],
        "target": "shipped",
    }
    [case] = cases_from_rows([Row(1, 0, row)], "s.jsonl", CASE_FIELDS, CaseDefaults("inspect", "s"))
    [call] = case.situation.turns[1].tool_calls
    assert (call.name, call.arguments, call.id, call.result) == (
        "get_order",
        {"id": "ORD-1"},
        "c1",
        {"s": 1},
    )
    assert [t.role for t in case.situation.turns] == ["user", "assistant", "user"]
    assert json.loads(json.dumps(case.model_dump(mode="json")))["id"] == "t-1"
