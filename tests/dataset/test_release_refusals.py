"""What a release refuses, how the lock answers a second writer, file modes, dry runs (issue 11).

Items 1 (stale reads, the lock's timeout), 4 (contradictions), 8 (file modes) and 9 (a dry run
writes nothing).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from hypothesis import assume, given
from hypothesis import strategies as st
from pydantic import ValidationError

from casework.atomic import atomic_write_bytes
from casework.dataset import load_dataset, release
from casework.dataset.check import contradictory_tools
from casework.dataset.lock import dataset_lock
from casework.errors import ReleaseConflict
from casework.labelling import release_labels
from casework.project import load_project
from casework.schema import Label
from tests.dataset.integrity import labelled_project
from tests.factories import TOOLS, case_dict, write_lines

Run = Callable[..., Result]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022() -> Iterator[None]:
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def _versions(root: Path, name: str = "refunds") -> bytes:
    path = root / "datasets" / name / "versions.jsonl"
    return path.read_bytes() if path.exists() else b""


# -- item 1: a release refuses what changed underneath; the lock names its holder ------------


def test_release_refuses_when_the_files_changed_after_they_were_read(project_dir: Path) -> None:
    project = load_project(project_dir)
    cases = project_dir / "datasets" / "refunds" / "cases.jsonl"
    with dataset_lock(project, "refunds"):
        read = load_dataset(project, "refunds")
        # A writer that does not take the lock (a hand edit, a checkout) adds a row meanwhile.
        with cases.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(case_dict("r-9")) + "\n")
        with pytest.raises(ReleaseConflict, match="changed while this command was preparing"):
            release(project, "refunds", read.cases, "stale")
    assert _versions(project_dir) == b""
    assert "r-9" in cases.read_text(encoding="utf-8")


def test_a_long_computation_releases_only_onto_what_it_read(project_dir: Path) -> None:
    project = load_project(project_dir)
    read = load_dataset(project, "refunds")
    assert release(project, "refunds", read.cases, "first") is not None
    with pytest.raises(ReleaseConflict, match="changed since this command read it"):
        release(project, "refunds", [*read.cases], "from a stale read", base=read.hash)


def _hold(root: Path, ready: Any, done: Any) -> None:
    project = load_project(root)
    with dataset_lock(project, "refunds"):
        ready.set()
        done.wait(30)
    os._exit(0)


def test_a_second_writer_gets_a_clear_message_after_the_timeout(
    project_dir: Path, run_cli: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    context = multiprocessing.get_context("fork")
    ready, done = context.Event(), context.Event()
    holder = context.Process(target=_hold, args=(project_dir, ready, done))
    holder.start()
    try:
        assert ready.wait(30)
        monkeypatch.setenv("CASEWORK_LOCK_TIMEOUT", "0.2")
        started = time.monotonic()
        result = run_cli("dataset", "release", "refunds", "-m", "while another holds the lock")
        assert time.monotonic() - started < 10
    finally:
        done.set()
        holder.join(30)
    assert result.exit_code == 1
    assert result.stderr == (
        "datasets/refunds: another casework command is releasing dataset 'refunds' and has held "
        "its lock (.casework/locks/refunds.lock) for more than 0.2 s; nothing was written. Run "
        "this command again when it has finished (or set CASEWORK_LOCK_TIMEOUT to wait longer).\n"
    )
    assert _versions(project_dir) == b""
    assert run_cli("dataset", "release", "refunds", "-m", "after").exit_code == 0


# -- item 4: contradictions ------------------------------------------------------------------


tool_names = st.sampled_from(["get_order", "issue_refund", "escalate_to_human", "refund.v2"])
requirements = st.one_of(
    tool_names,
    st.builds(
        lambda n, v: {"name": n, "arguments": {"order_id": {"value": v}}},
        tool_names,
        st.sampled_from(["1", "2"]),
    ),
)


@given(st.lists(requirements, max_size=4), st.lists(requirements, max_size=4))
def test_contradictory_tools_are_those_no_call_can_satisfy(
    required: list[Any], forbidden: list[Any]
) -> None:
    try:
        label = Label.model_validate(
            {"outcome": "resolve", "required_tools": required, "forbidden_tools": forbidden}
        )
    except ValidationError:  # the schema already refuses a plain name both required and forbidden
        label = None
    assume(label is not None)
    assert label is not None

    def key(r: Any) -> tuple[str, str]:
        return (r, "{}") if isinstance(r, str) else (r["name"], json.dumps(r["arguments"]))

    req = {key(r) for r in required}
    expected = {
        name
        for name, args in map(key, forbidden)
        if any(n == name and (args == "{}" or a == args) for n, a in req)
    }
    assert set(contradictory_tools(label)) == expected


def test_check_reports_a_case_that_requires_and_forbids_one_tool(
    project_dir: Path, run_cli: Run
) -> None:
    label = {
        "outcome": "resolve",
        "required_tools": [
            "get_order",
            {"name": "issue_refund", "arguments": {"amount": {"value": 5}}},
        ],
        "forbidden_tools": ["issue_refund"],
        "guideline_version": "refunds-g7",
    }
    write_lines(
        project_dir / "datasets" / "refunds" / "cases.jsonl",
        [case_dict("r-1"), case_dict("r-2", label=label)],
    )
    checked = run_cli("dataset", "check", "refunds")
    assert checked.exit_code == 1
    assert (
        "error: contradictory_tools: r-2:issue_refund: the label requires and forbids this tool, "
        "so no trajectory can pass (two tools renamed to one? fix the label)"
    ) in checked.stderr.splitlines()
    released = run_cli("dataset", "release", "refunds", "-m", "x")
    assert released.exit_code == 1
    assert released.stderr == (
        "datasets/refunds/cases.jsonl:2: label.forbidden_tools: the case requires and forbids "
        "the same tool. Got 'issue_refund'.\n"
    )
    assert _versions(project_dir) == b""


@pytest.mark.parametrize(
    "required",
    ["refund_card", {"name": "refund_card", "arguments": {"order_id": {"value": "ORD-1"}}}],
    ids=["plain", "with-arguments"],
)
def test_a_many_to_one_rename_is_refused(required: Any, project_dir: Path, run_cli: Run) -> None:
    label = {
        "outcome": "refuse",
        "required_tools": [required],
        "forbidden_tools": ["refund_cash"],
        "guideline_version": "refunds-g7",
    }
    write_lines(
        project_dir / "datasets" / "refunds" / "cases.jsonl",
        [case_dict("r-1"), case_dict("r-2", label=label)],
    )
    assert run_cli("dataset", "release", "refunds", "-m", "first").exit_code == 0
    (project_dir / "renames.toml").write_text(
        '[tools]\nrefund_card = "issue_refund"\nrefund_cash = "issue_refund"\n', encoding="utf-8"
    )
    before = _versions(project_dir)
    result = run_cli("dataset", "migrate", "refunds", "-m", "one refund tool")
    assert result.exit_code == 1
    assert result.stderr == (
        "renames.toml:2: tools.refund_card: case 'r-2' requires one of refund_card, refund_cash, "
        "issue_refund and forbids another; renamed to one tool, the case would require and forbid "
        "'issue_refund' (fix the case's label first). Got 'issue_refund'.\n"
    )
    assert _versions(project_dir) == before


def test_label_release_after_migrate_keeps_the_new_tool_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    root = tmp_path / "proj"
    project = labelled_project(root, monkeypatch)  # labels given under `get_order`, not released
    tools = [dict(t, name="fetch_order") if t["name"] == "get_order" else t for t in TOOLS]
    (root / "agent" / "tools.json").write_text(json.dumps(tools), encoding="utf-8")
    (root / "renames.toml").write_text('[tools]\nget_order = "fetch_order"\n', encoding="utf-8")
    migrated = run_cli("dataset", "migrate", "refunds", "-m", "get_order is fetch_order now")
    assert migrated.exit_code == 0, migrated.output
    assert "renamed in 12 raw label(s) in the workbench" in migrated.stdout
    result = release_labels(load_project(root), "refunds", "labels")
    assert result.record is not None and result.labelled == 5
    folder = root / "datasets" / "refunds"
    for name in ("cases.jsonl", "labels.jsonl"):
        assert "get_order" not in (folder / name).read_text(encoding="utf-8"), name
    assert run_cli("dataset", "check", "refunds").exit_code == 0
    assert project.root == root


def test_a_duplicated_raw_label_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    root = tmp_path / "proj"
    release_labels(labelled_project(root, monkeypatch), "refunds", "labels")
    labels = root / "datasets" / "refunds" / "labels.jsonl"
    lines = labels.read_text(encoding="utf-8").splitlines()
    labels.write_text("\n".join([*lines, lines[0]]) + "\n", encoding="utf-8")
    before = _versions(root)
    result = run_cli("dataset", "release", "refunds", "-m", "x")
    assert result.exit_code == 1
    first = json.loads(lines[0])
    assert result.stderr == (
        f"datasets/refunds/labels.jsonl:{len(lines) + 1}: labeller: labelled case "
        f"'{first['case_id']}' twice under guideline '{first['guideline_version']}'; agreement "
        f"needs one label per person. Got '{first['labeller']}'.\n"
    )
    assert _versions(root) == before


def test_an_emptied_labels_file_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    root = tmp_path / "proj"
    release_labels(labelled_project(root, monkeypatch), "refunds", "labels")
    (root / "datasets" / "refunds" / "labels.jsonl").write_text("", encoding="utf-8")
    before = _versions(root)
    result = run_cli("dataset", "release", "refunds", "-m", "x")
    assert result.exit_code == 1
    assert result.stderr == (
        "datasets/refunds/labels.jsonl: 10 raw label(s) of the previous release are missing "
        "although their cases remain (raw labels are kept for agreement); restore the file (e.g. "
        "`git checkout`) or remove those cases. Got 'd-1, d-2, d-3, d-4, s-1'.\n"
    )
    assert _versions(root) == before


@pytest.mark.parametrize("damage", ["reorder", "parent"])
def test_a_broken_release_log_is_refused(damage: str, project_dir: Path, run_cli: Run) -> None:
    cases = project_dir / "datasets" / "refunds" / "cases.jsonl"
    for n in range(3):
        with cases.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(case_dict(f"r-{10 + n}")) + "\n")
        assert run_cli("dataset", "release", "refunds", "-m", f"v{n + 1}").exit_code == 0
    log = project_dir / "datasets" / "refunds" / "versions.jsonl"
    lines = log.read_text(encoding="utf-8").splitlines()
    if damage == "reorder":
        lines = [lines[0], lines[2], lines[1]]
        expected = [
            "datasets/refunds/versions.jsonl:2: number: release 2 expected here (releases are "
            "numbered in file order; was the file reordered or edited? restore it with `git "
            "checkout`). Got 3.",
            f"datasets/refunds/versions.jsonl:2: parent: does not name the release on the line "
            f"before ({json.loads(lines[0])['hash'][:12]}). Got '{json.loads(lines[1])['parent']}'.",
        ]
    else:
        record = json.loads(lines[2])
        record["parent"] = "0" * 64
        lines[2] = json.dumps(record)
        expected = [
            f"datasets/refunds/versions.jsonl:3: parent: does not name the release on the line "
            f"before ({json.loads(lines[1])['hash'][:12]}). Got '{'0' * 64}'."
        ]
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    before = log.read_bytes()
    with cases.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(case_dict("r-99")) + "\n")
    result = run_cli("dataset", "release", "refunds", "-m", "after the damage")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[: len(expected)] == expected
    assert log.read_bytes() == before
    assert run_cli("dataset", "versions", "refunds").exit_code == 1


# -- item 8: file modes ----------------------------------------------------------------------


def test_atomic_writes_keep_the_mode_or_take_the_umask(tmp_path: Path, umask_022: None) -> None:
    fresh = tmp_path / "fresh.txt"
    atomic_write_bytes(fresh, b"new")
    assert _mode(fresh) == 0o644
    shared = tmp_path / "shared.txt"
    shared.write_bytes(b"old")
    shared.chmod(0o664)
    atomic_write_bytes(shared, b"new")
    assert _mode(shared) == 0o664 and shared.read_bytes() == b"new"
    secret = tmp_path / "key"
    secret.write_bytes(b"old")
    secret.chmod(0o644)
    atomic_write_bytes(secret, b"secret", mode=0o600)
    assert _mode(secret) == 0o600


def test_files_casework_writes_are_readable_by_the_team(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run, umask_022: None
) -> None:
    from tests.labelling.builders import make_project

    root = make_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    assert run_cli("dataset", "release", "refunds", "-m", "drafts").exit_code == 0
    assert run_cli("label", "assign", "refunds", "--labellers", "lab-1,lab-2").exit_code == 0
    sheets = tmp_path / "sheets-out"
    assert run_cli("label", "export", "refunds", "--out", str(sheets)).exit_code == 0
    guideline = root / "guidelines" / "refunds.md"
    guideline.chmod(0o664)
    assert run_cli("label", "guideline", "bump", "refunds", "-m", "clearer").exit_code == 0
    folder = root / "datasets" / "refunds"
    modes = {p.name: _mode(p) for p in [*folder.iterdir(), *sheets.iterdir()]}
    assert modes and set(modes.values()) == {0o644}, modes
    assert _mode(guideline) == 0o664


# -- item 9: a dry run writes nothing --------------------------------------------------------


def test_label_assign_dry_run_creates_no_workbench(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    from tests.labelling.builders import make_project

    root = make_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    assert run_cli("dataset", "release", "refunds", "-m", "drafts").exit_code == 0
    before = sorted(p.relative_to(root) for p in root.rglob("*") if ".git" not in p.parts)
    result = run_cli("label", "assign", "refunds", "--labellers", "lab-1,lab-2", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "would assign" in result.stdout
    assert not (root / ".casework" / "workbench.db").exists()
    after = sorted(p.relative_to(root) for p in root.rglob("*") if ".git" not in p.parts)
    assert after == before
