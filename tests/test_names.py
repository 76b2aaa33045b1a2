"""Names that become paths cannot leave their folder (issue 11, item 3).

Every name a user or a file can hand casework that ends up in a path — dataset names, run ids,
slice names, labeller ids — is tried with traversal and other hostile shapes; nothing may be
written outside the project, and each attempt is refused with a message.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from hypothesis import given
from hypothesis import strategies as st

from casework.names import inside, name_problem
from casework.project import load_project
from casework.runner import RunRequest, run_agent
from tests.factories import case_dict, write_lines
from tests.runner.builders import make_project

Run = Callable[..., Result]

#: Hostile shapes of a name, as people and files really produce them.
HOSTILE = [
    "../x",
    "../../../x",
    "..",
    ".",
    "a/../../x",
    "/tmp/x",
    "x/y",
    "..\\x",
    ".hidden",
    "x\n",
    "x\x00y",
    "-rf",
    "",
    " x",
    "ä/../x",
]

separators = st.sampled_from(["/", "\\", "..", ".", os.sep, "\x00", "\n", " "])
names = st.lists(st.one_of(st.text(min_size=0, max_size=6), separators), max_size=6).map("".join)


@given(names)
def test_an_accepted_name_is_one_plain_path_component(value: str) -> None:
    if name_problem(value) is not None:
        return
    assert value and not value.startswith((".", "-"))
    assert Path(value).name == value and Path(value).parts == (value,)
    assert all(ch.isascii() and (ch.isalnum() or ch in "._-") for ch in value)
    root = Path("/project/datasets")
    assert inside(root, root / value, "dataset name") == root / value


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_names_are_refused(value: str) -> None:
    assert name_problem(value) is not None


def _outside(tmp_path: Path, project: Path) -> set[Path]:
    return {p for p in tmp_path.rglob("*") if project not in p.parents and p != project}


@pytest.mark.parametrize(
    "value", ["../../../escaped", "../escaped", "{absolute}", "a/../../escaped"]
)
@pytest.mark.parametrize(
    "command",
    [
        ["mine", "{traces}", "--dataset", "{name}", "--slice", "refunds"],
        ["import", "adk", "{adk}", "--dataset", "{name}", "--slice", "adk"],
        ["mine", "{traces}", "--dataset", "refunds", "--slice", "{name}"],
        ["import", "adk", "{adk}", "--dataset", "copy", "--slice", "{name}"],
        ["dataset", "release", "{name}", "-m", "x"],
        ["dataset", "check", "{name}"],
        ["dataset", "versions", "{name}"],
        ["label", "assign", "{name}", "--labellers", "lab-1,lab-2"],
        ["label", "assign", "refunds", "--labellers", "{name}"],
        ["results", "show", "{name}"],
    ],
    ids=lambda c: " ".join(c[:2]) if isinstance(c, list) else c,
)
def test_no_command_writes_outside_the_project(
    command: list[str],
    value: str,
    project_dir: Path,
    run_cli: Run,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", "names-test-key-not-secret-0123456789")
    traces = tmp_path / "traces.jsonl"
    traces.write_text(
        json.dumps({"session_id": "s-1", "messages": [{"role": "user", "content": "hi"}]}) + "\n"
    )
    assert run_cli("dataset", "release", "refunds", "-m", "first").exit_code == 0
    adk = project_dir / "export" / "refunds.evalset.json"
    assert run_cli("export", "adk", "refunds@1", "--out", str(adk)).exit_code == 0
    before = _outside(tmp_path, project_dir)
    name = value.format(absolute=tmp_path / "escaped-absolute")
    args = [a.format(name=name, traces=traces, adk=adk) for a in command]
    result = run_cli(*args)
    assert result.exit_code != 0, result.output
    assert _outside(tmp_path, project_dir) == before
    assert "Traceback" not in result.output


@pytest.mark.parametrize("field", ["slice", "labeller"])
@pytest.mark.parametrize("value", ["../../escaped", "a/b", ".."])
def test_names_inside_files_are_refused_with_their_line(
    field: str, value: str, project_dir: Path, run_cli: Run
) -> None:
    cases = project_dir / "datasets" / "refunds" / "cases.jsonl"
    if field == "slice":
        write_lines(cases, [case_dict("r-1"), case_dict("r-2", slice=value)])
        where = "datasets/refunds/cases.jsonl:2: slice: "
    else:
        write_lines(cases, [case_dict("r-1")])
        label = {
            "case_id": "r-1",
            "labeller": value,
            "role": "first",
            "outcome": "resolve",
            "guideline_version": "refunds-g7",
            "labelled_at": "2026-11-30T12:00:00Z",
        }
        write_lines(project_dir / "datasets" / "refunds" / "labels.jsonl", [label])
        where = "datasets/refunds/labels.jsonl:1: labeller: "
    result = run_cli("dataset", "release", "refunds", "-m", "x")
    assert result.exit_code == 1
    assert result.stderr.startswith(where + "a name starts with a letter or digit"), result.stderr
    assert not (project_dir / "datasets" / "refunds" / "versions.jsonl").exists()


def test_a_run_log_cannot_aim_the_report_outside_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = make_project(tmp_path / "p")
    monkeypatch.chdir(root)
    project = load_project(root)
    run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent="python:tests.runner.sample_agents:flaky",
            k=1,
            use_judge=False,
            run_id="good",
        ),
    )
    lines = (root / "runs" / "good.jsonl").read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    header["run_id"] = "../../../escaped/report"
    log = root / "runs" / "copied.jsonl"
    log.write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n", encoding="utf-8")
    before = _outside(tmp_path, root)
    result = run_cli("report", str(log))
    assert result.exit_code == 1
    assert result.stderr.startswith("runs/copied.jsonl:1: run_id: a name starts with"), (
        result.stderr
    )
    assert _outside(tmp_path, root) == before
    assert not (tmp_path / "escaped").exists()
