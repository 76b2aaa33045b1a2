"""A project with two files of planted traces (the example's generator), built once in full."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from casework.project import Project
from casework.shapes import BuildOptions, ShapeBuild, build_shapes
from tests.authoring.conftest import ENV, generator, new_project

NOW = datetime(2026, 4, 20, 9, 0, tzinfo=UTC)
#: Traces per file: two files hold about 640 failing conversations, 15 planted shapes.
PER_FILE = 800


def options(**changes: object) -> BuildOptions:
    """Build options of these tests (fixed clock and key), with ``changes``."""
    return BuildOptions(now=NOW, environ=ENV, **changes)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, Path, dict[str, str]]:
    """The project, its trace folder (two files) and the planted shape of each session."""
    root = tmp_path_factory.mktemp("shapes-stream") / "proj"
    project = new_project(root)
    traces = root / "traces"
    traces.mkdir()
    truth: dict[str, str] = {}
    for part, seed in enumerate((21, 22)):
        lines, planted = generator().generate(seed, 1, PER_FILE)
        (traces / f"part{part}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        truth |= {t["session"]: t["shape"] for t in planted}
    return project, traces, truth


@pytest.fixture(scope="module")
def full(corpus: tuple[Project, Path, dict[str, str]]) -> ShapeBuild:
    """Every failing conversation clustered at once (the default sample holds them all)."""
    project, traces, _ = corpus
    return build_shapes(project, [traces], "full", options())
