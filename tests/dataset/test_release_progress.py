"""Progress of the long dataset commands (issue 13, item 6): what `release` reports, by stage.

The bar itself is drawn by the CLI (stderr, a terminal only); here the stages the library
reports are checked for order and sense, on one process and on forked workers, and the
progress must change nothing that is written.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from rich.console import Console

from casework.cli import cli
from casework.dataset import release
from casework.errors import InputErrors
from casework.project import Project
from tests.dataset.test_line_store import _case, _label, _project, _write
from tests.dataset.test_parallel_release import NAME, _forked, _released

Call = tuple[str, int, int]


def _calls() -> tuple[list[Call], Any]:
    seen: list[Call] = []

    def on_progress(stage: str, done: int, total: int) -> None:
        seen.append((stage, done, total))

    return seen, on_progress


def _stages_in_order(seen: list[Call]) -> list[str]:
    order: list[str] = []
    for stage, _, _ in seen:
        if not order or order[-1] != stage:
            order.append(stage)
    return order


def _check_each_stage(seen: list[Call]) -> None:
    """Within a stage, progress never goes back, never passes its total, and ends at it."""
    by: dict[str, list[tuple[int, int]]] = {}
    for stage, done, total in seen:
        by.setdefault(stage, []).append((done, total))
    for stage, calls in by.items():
        dones = [d for d, _ in calls]
        assert dones == sorted(dones), stage
        assert all(0 <= d <= t for d, t in calls), stage
        assert calls[-1][0] == calls[-1][1], stage


def _two_releases(project: Project, on_progress: Any) -> int:
    """Two releases; the bytes of the first one's two files."""
    cases = [_case(i) for i in range(40)]
    labels = [_label(c["id"], "l0") for c in cases[:10]]
    _write(project, cases, labels, hand=True)
    folder = project.dataset_dir(NAME)
    size = (folder / "cases.jsonl").stat().st_size + (folder / "labels.jsonl").stat().st_size
    assert release(project, NAME, None, "first", on_progress=on_progress) is not None
    for c in cases[::5]:
        c["situation"] = dict(c["situation"], goal="edited")
    _write(project, cases, labels, hand=False)
    assert release(project, NAME, None, "second", on_progress=on_progress) is not None
    return size


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_release_reports_reading_validating_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    if workers > 1:
        _forked(monkeypatch, workers)
    monkeypatch.setattr("casework.dataset._incremental._SHARE_BYTES", 2048)  # many shares
    seen, on_progress = _calls()
    project = _project(tmp_path / "p")
    size = _two_releases(project, on_progress)
    assert _stages_in_order(seen) == ["reading", "validating", "writing"] * 2
    first = seen[: next(i for i, c in enumerate(seen) if c[0] == "reading" and i > 0 and
                        seen[i - 1][0] == "writing")]  # fmt: skip
    _check_each_stage(first)
    _check_each_stage(seen[len(first) :])
    # The first release validates every line of both files (they are not the store's yet).
    validating = [t for s, _, t in first if s == "validating"]
    assert validating[-1] == size
    if workers > 1:
        assert len(validating) > 2  # the shares come back one by one


def test_progress_changes_nothing_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _forked(monkeypatch, 2)
    quiet = _project(tmp_path / "quiet")
    _two_releases(quiet, None)
    told = _project(tmp_path / "told")
    _two_releases(told, _calls()[1])
    assert _released(told) == _released(quiet)


def test_a_bad_line_on_a_forked_release_is_reported_and_nothing_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _forked(monkeypatch, 2)
    monkeypatch.setattr("casework.dataset._incremental._SHARE_BYTES", 1024)
    project = _project(tmp_path / "p")
    cases = [_case(i) for i in range(30)]
    _write(project, cases, [], hand=False)
    path = project.dataset_dir(NAME) / "cases.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    lines[17] = b'{"id": "c-017", "slice": 3}\n'
    path.write_bytes(b"".join(lines))
    seen, on_progress = _calls()
    with pytest.raises(InputErrors) as raised:
        release(project, NAME, None, "first", on_progress=on_progress)
    assert any(p.line == 18 for p in raised.value.problems)
    assert not (project.dataset_dir(NAME) / "versions.jsonl").exists()
    assert not any((tmp_path / "p" / ".casework").rglob("*.pack"))
    assert "writing" not in {stage for stage, _, _ in seen}


def _terminal(monkeypatch: pytest.MonkeyPatch) -> io.StringIO:
    """Draw the CLI's bars into a string, as on a terminal, however small the files."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120, color_system=None)
    monkeypatch.setattr("casework.cli._progress.err_console", console)
    monkeypatch.setattr("casework.cli._progress._PROGRESS_MIN_BYTES", 0)
    return out


def test_cli_release_draws_a_bar_per_stage(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _project(tmp_path / "p")
    _write(project, [_case(i) for i in range(20)], [], hand=True)
    drawn = _terminal(monkeypatch)
    monkeypatch.chdir(project.root)
    result = CliRunner().invoke(cli, ["dataset", "release", NAME, "-m", "first"])
    assert result.exit_code == 0, result.output
    assert f"{NAME}@1 released" in result.output
    bars = drawn.getvalue()
    for stage in ("reading", "validating", "writing"):
        assert f"releasing {NAME}: {stage}" in bars


def test_cli_bars_stay_off_json_output_and_pipes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path / "p")
    _write(project, [_case(i) for i in range(20)], [], hand=True)
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, width=120)
    monkeypatch.setattr("casework.cli._progress.err_console", console)
    monkeypatch.setattr("casework.cli._progress._PROGRESS_MIN_BYTES", 0)
    monkeypatch.chdir(project.root)
    assert CliRunner().invoke(cli, ["dataset", "release", NAME, "-m", "first"]).exit_code == 0
    drawn = _terminal(monkeypatch)
    result = CliRunner().invoke(cli, ["agreement", NAME, "--format", "json"])
    assert result.exit_code == 0, result.output
    assert out.getvalue() == ""
    assert drawn.getvalue() == ""


@pytest.mark.parametrize("argv", [["agreement", NAME], ["dataset", "expire", "--dry-run"]])
def test_cli_reading_commands_draw_a_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    project = _project(tmp_path / "p")
    cases = [_case(i) for i in range(20)]
    _write(project, cases, [_label(c["id"], "l0") for c in cases], hand=True)
    drawn = _terminal(monkeypatch)
    monkeypatch.chdir(project.root)
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == 0, result.output
    want = f"reading {NAME}" if argv[0] == "agreement" else f"expire: reading {NAME}"
    assert want in drawn.getvalue()
