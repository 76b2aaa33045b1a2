"""`casework shapes build|list|show|drift` end to end; bad input is one clear line, nothing written."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from tests.authoring.conftest import KEY, new_project


@pytest.fixture
def shapes_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, Callable[..., Result]]:
    root = tmp_path / "proj"
    new_project(root)
    monkeypatch.chdir(root)
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", KEY)
    runner = CliRunner()

    def run(*args: str) -> Result:
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return root, run


def test_build_list_show_drift(
    shapes_cli: tuple[Path, Callable[..., Result]],
    weeks: dict[str, tuple[Path, dict[str, str]]],
) -> None:
    root, run = shapes_cli
    built = run("shapes", "build", str(weeks["w1"][0]), "--name", "refunds")
    assert built.exit_code == 0, built.output
    assert "15 shape(s)" in built.stdout and "saturation:" in built.stdout
    assert (root / "shapes" / "refunds.jsonl").exists()
    listed = json.loads(run("shapes", "list", "--format", "json").stdout)
    assert [r["name"] for r in listed] == ["refunds"] and listed[0]["shapes"] == 15
    shown = json.loads(run("shapes", "show", "refunds", "--format", "json").stdout)
    assert len(shown["shapes"]) == 15
    one = run("shapes", "show", "refunds", "shape-01")
    assert one.exit_code == 0 and "shape-01:" in one.stdout and "-- mined-" in one.stdout
    missing = run("shapes", "show", "refunds", "shape-99")
    assert missing.exit_code == 2 and "no shape 'shape-99'" in missing.stderr
    moved = run("shapes", "drift", str(weeks["w2"][0]), "--against", "refunds", "--format", "json")
    assert moved.exit_code == 1
    report = json.loads(moved.stdout)
    assert report["drifted"] and len(report["appeared"]) == 1 and len(report["vanished"]) == 1
    same = run("shapes", "drift", str(weeks["w1b"][0]), "--against", "refunds")
    assert same.exit_code == 0, same.stdout
    assert "no drift" in same.stdout


def test_unknown_shape_set(
    shapes_cli: tuple[Path, Callable[..., Result]],
    weeks: dict[str, tuple[Path, dict[str, str]]],
) -> None:
    root, run = shapes_cli
    result = run("shapes", "drift", str(weeks["w2"][0]), "--against", "nope")
    assert result.exit_code == 2
    assert result.stderr.startswith("--against: no shape set 'nope'")
    assert not (root / "shapes").exists()
    shown = run("shapes", "show", "nope")
    assert shown.exit_code == 2 and "no shape set 'nope'" in shown.stderr


def test_no_failing_traces(shapes_cli: tuple[Path, Callable[..., Result]], tmp_path: Path) -> None:
    root, run = shapes_cli
    from tests.authoring.conftest import generator

    lines, truth = generator().generate(3, 1, 200)
    good = [line for line, t in zip(lines, truth, strict=True) if t["shape"] == "success"]
    traces = tmp_path / "good.jsonl"
    traces.write_text("\n".join(good) + "\n", encoding="utf-8")
    result = run("shapes", "build", str(traces), "--name", "refunds")
    assert result.exit_code == 2
    assert "TRACES: none of the" in result.stderr and "shows a failure signal" in result.stderr
    assert not (root / "shapes").exists()


def test_malformed_trace(
    shapes_cli: tuple[Path, Callable[..., Result]],
    weeks: dict[str, tuple[Path, dict[str, str]]],
    tmp_path: Path,
) -> None:
    root, run = shapes_cli
    bad = tmp_path / "bad"
    bad.mkdir()
    shutil.copy(weeks["w1"][0] / "traces.jsonl", bad / "a.jsonl")
    (bad / "b.jsonl").write_text('{"resourceSpans": [{"scopeSpans": 7}]}\n{"resourceSpans": [\n')
    result = run("shapes", "build", str(bad), "--name", "refunds", "--trace-format", "otel")
    assert result.exit_code == 1
    assert "b.jsonl:1:" in result.stderr and "b.jsonl:2:" in result.stderr
    assert "Traceback" not in result.output
    assert not (root / "shapes").exists()


def test_bad_parameters(
    shapes_cli: tuple[Path, Callable[..., Result]],
    weeks: dict[str, tuple[Path, dict[str, str]]],
) -> None:
    root, run = shapes_cli
    result = run("shapes", "build", str(weeks["w1"][0]), "--name", "refunds", "--min-size", "1")
    assert result.exit_code == 2 and result.stderr.startswith("--min-size: must be at least 2")
    named = run("shapes", "build", str(weeks["w1"][0]), "--name", "../x")
    assert named.exit_code == 2
    assert not (root / "shapes").exists()
