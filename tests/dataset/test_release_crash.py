"""A release killed at any write leaves the old state or (after the next command) the new one.

Issue 11, item 2: every multi-file command (`migrate`, `label release`, `leakage resolve`) is
killed just before each of its file renames in turn (the file before it written in full, the one
at hand complete in its temp file); the next command must find a consistent tree — the release
log's last entry is the working tree — with no temp file left in the repository, and running
the command again must end exactly where an uninterrupted run ends, changelog included.
Issue 10, item 9: the atomic-write promise itself (a write killed half-way leaves the old file).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from casework.atomic import atomic_write_bytes
from casework.cli import cli
from casework.labelling import release_labels
from casework.project import load_project
from tests.dataset.integrity import KEY, chain_intact, labelled_project, versions, working_hash
from tests.factories import TOOLS
from tests.leakage.corpora import PROMPT, project_rows, write_project

KILLED = 137


def invoke(root: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--project", str(root), *args], catch_exceptions=False)


def _child(root: Path, args: list[str], kill_at: int, count: Path | None) -> None:
    real = os.replace
    calls = 0

    def replace(src: str, dst: str) -> None:
        nonlocal calls
        calls += 1
        if calls == kill_at:
            os._exit(KILLED)
        real(src, dst)

    os.replace = replace  # type: ignore[assignment]
    os.chdir(root)
    result = CliRunner().invoke(cli, ["--project", str(root), *args])
    if count is not None:
        count.write_text(str(calls), encoding="utf-8")
    os._exit(result.exit_code)


def run_killed(root: Path, args: list[str], kill_at: int, count: Path | None = None) -> int | None:
    """Run the command in a forked process killed before its ``kill_at``-th rename (0: never)."""
    process = multiprocessing.get_context("fork").Process(
        target=_child, args=(root, args, kill_at, count)
    )
    process.start()
    process.join(120)
    return process.exitcode


def _migrate_project(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[str]]:
    project = labelled_project(root, monkeypatch)
    release_labels(project, "refunds", "labels")
    tools = [dict(t, name="fetch_order") if t["name"] == "get_order" else t for t in TOOLS]
    (root / "agent" / "tools.json").write_text(json.dumps(tools), encoding="utf-8")
    (root / "renames.toml").write_text('[tools]\nget_order = "fetch_order"\n', encoding="utf-8")
    return "refunds", [
        "dataset",
        "migrate",
        "refunds",
        "--renames",
        "renames.toml",
        "-m",
        "fetch_order",
    ]


def _label_release_project(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[str]]:
    labelled_project(root, monkeypatch)
    return "refunds", ["label", "release", "refunds", "-m", "labels"]


def _label_release_overlapped_project(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, list[str]]:
    """`label release` with the store and the staged files written side by side (as at scale)."""
    monkeypatch.setattr("casework.dataset._write.OVERLAP_MIN_BYTES", 0)
    return _label_release_project(root, monkeypatch)


def _leakage_project(root: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, list[str]]:
    copied = (
        "hi the steel pan from order 3141592 stopped working after two days please help me asap"
    )
    write_project(root, project_rows(), PROMPT.format(copied=copied))
    monkeypatch.chdir(root)
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    assert invoke(root, "dataset", "release", "support", "-m", "first").exit_code == 0
    scan = invoke(root, "leakage", "scan", "support", "--format", "json")
    flags = {(f["left_id"], f["right_id"]): f["id"] for f in json.loads(scan.stdout)["flags"]}
    for (left, right), flag in flags.items():
        decision = ["--move", right] if (left, right) == ("d-near", "h-near") else ["--keep"]
        assert invoke(root, "leakage", "decide", "support", str(flag), *decision).exit_code == 0
    return "support", ["leakage", "resolve", "support"]


def _files(folder: Path, names: tuple[str, ...]) -> dict[str, bytes | None]:
    return {n: (folder / n).read_bytes() if (folder / n).exists() else None for n in names}


def _repo_temp_files(root: Path) -> list[str]:
    """Temp files anywhere in the project, `.casework/` included (recovery removes them all)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.tmp"))


def _summary(log: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(v["number"], v["hash"], v["message"], tuple(v["changes"])) for v in log]  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize(
    "setup",
    [_migrate_project, _label_release_project, _label_release_overlapped_project, _leakage_project],
    ids=["migrate", "label-release", "label-release-overlapped", "leakage-resolve"],
)
def test_kill_at_every_write_leaves_old_or_new(
    setup: Callable[[Path, pytest.MonkeyPatch], tuple[str, list[str]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pristine = tmp_path / "pristine" / "proj"
    name, command = setup(pristine, monkeypatch)
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", KEY)
    old = _summary(versions(pristine, name))

    clean = tmp_path / "clean" / "proj"
    shutil.copytree(pristine, clean)
    count = tmp_path / "count"
    assert run_killed(clean, command, 0, count) == 0
    writes = int(count.read_text())
    new = _summary(versions(clean, name))
    assert len(new) == len(old) + 1 and new[: len(old)] == old
    files = ("cases.jsonl", "labels.jsonl")  # versions.jsonl: compared above (times differ)
    final = _files(clean / "datasets" / name, files)

    for kill_at in range(1, writes + 1):
        root = tmp_path / f"kill-{kill_at}" / "proj"
        shutil.copytree(pristine, root)
        assert run_killed(root, command, kill_at) == KILLED, kill_at

        after = invoke(
            root, "dataset", "versions", name
        )  # the next command, one that does not release
        assert after.exit_code == 0, (kill_at, after.output)
        log = versions(root, name)
        assert chain_intact(log), kill_at
        assert log[-1]["hash"] == working_hash(root, name), (kill_at, "half-applied tree")
        assert _summary(log) in (old, new), kill_at
        assert _repo_temp_files(root) == [], kill_at

        if _summary(log) == old:
            assert run_killed(root, command, 0) == 0, kill_at
        assert _summary(versions(root, name)) == new, (kill_at, "changelog lost")
        assert _files(root / "datasets" / name, files) == final, kill_at
        assert _repo_temp_files(root) == [], kill_at
        shutil.rmtree(root.parent)


def test_temp_files_of_dataset_writes_stay_out_of_the_dataset_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "proj"
    name, command = _label_release_project(root, monkeypatch)
    seen: list[str] = []
    real = os.replace

    def spy(src: str, dst: str) -> None:
        seen.append(os.path.dirname(os.path.abspath(src)))
        real(src, dst)

    monkeypatch.setattr(os, "replace", spy)
    assert invoke(root, *command).exit_code == 0
    dataset = str((root / "datasets" / name).resolve())
    assert seen and dataset not in {str(Path(s).resolve()) for s in seen}


def _write_then_die(path: Path) -> None:
    def fsync(fd: object) -> None:
        os._exit(KILLED)  # the new content is written to the temp file, never renamed

    os.fsync = fsync
    atomic_write_bytes(path, b"new content " * 100_000)
    os._exit(0)


def test_atomic_write_killed_half_way_leaves_the_old_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    old = b"".join(b'{"line": %d}\n' % i for i in range(1000))
    path.write_bytes(old)
    process = multiprocessing.get_context("fork").Process(target=_write_then_die, args=(path,))
    process.start()
    process.join(60)
    assert process.exitcode == KILLED
    assert path.read_bytes() == old


def _killed_after_the_journal(tmp_path: Path, root: Path, name: str, command: list[str]) -> Path:
    """A copy of ``root`` whose release was killed right after its journal was committed.

    The first kill point that leaves a journal (before the first dataset file is replaced): the
    release has happened, and the next command that reads the dataset completes it.
    """
    for kill_at in range(1, 20):
        copy = tmp_path / f"k{kill_at}" / "proj"
        shutil.copytree(root, copy)
        assert run_killed(copy, command, kill_at) == KILLED
        if (copy / ".casework" / "journal" / f"{name}.json").exists():
            return copy
        shutil.rmtree(copy.parent)
    raise AssertionError("no kill point left a committed journal")


def test_interrupted_release_is_completed_by_any_later_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "proj"
    name, command = _label_release_project(root, monkeypatch)
    before = versions(root, name)
    copy = _killed_after_the_journal(tmp_path, root, name, command)
    project = load_project(copy)
    from casework.dataset import load_dataset

    dataset = load_dataset(project, name)
    log = versions(copy, name)
    assert len(log) == len(before) + 1 and dataset.version is not None
    assert dataset.version.number == log[-1]["number"]


def test_a_journal_written_with_sha256_is_still_completed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Journals now hash with XXH3-128 and say so; one left by an older casework (sha256, no
    ``hash`` field) is completed as before, and a damaged staged file is still refused."""
    import hashlib

    from casework.dataset import load_dataset

    root = tmp_path / "proj"
    name, command = _label_release_project(root, monkeypatch)
    before = versions(root, name)
    copy = _killed_after_the_journal(tmp_path, root, name, command)
    journal_file = copy / ".casework" / "journal" / f"{name}.json"
    journal = json.loads(journal_file.read_bytes())
    assert journal["hash"] == "xxh3-128"
    assert all(len(e["after"]) == 32 for e in journal["entries"])

    def sha256_of(path: Path) -> str | None:
        return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None

    del journal["hash"]  # as an older casework wrote it
    for entry in journal["entries"]:
        entry["before"] = sha256_of(copy / entry["path"])
        entry["after"] = sha256_of(copy / entry["staged"])
    damaged = tmp_path / "damaged"
    shutil.copytree(copy.parent, damaged)
    journal_file.write_text(json.dumps(journal), encoding="utf-8")
    dataset = load_dataset(load_project(copy), name)
    log = versions(copy, name)
    assert len(log) == len(before) + 1 and dataset.version is not None
    assert dataset.version.number == log[-1]["number"]
    assert not journal_file.exists()

    # The same old journal over a staged file that no longer has its sha256: refused, as before.
    copy = damaged / "proj"
    (copy / ".casework" / "journal" / f"{name}.json").write_text(
        json.dumps(journal), encoding="utf-8"
    )
    staged = copy / journal["entries"][0]["staged"]
    staged.write_bytes(staged.read_bytes() + b"\n")
    result = invoke(copy, "dataset", "versions", name)
    assert result.exit_code != 0
    assert "missing or damaged" in result.output
