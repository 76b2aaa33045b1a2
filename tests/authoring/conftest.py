"""Planted traces from the example's generator, and a project to build shapes in."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from casework.privacy import load_key, scrubber_for
from casework.project import Project, load_project

KEY = "shapes-tests-key-not-secret-0123456789"
ENV = {"CASEWORK_PSEUDONYM_KEY": KEY}
GENERATOR = (
    Path(__file__).resolve().parents[2] / "examples" / "refunds" / "traces-gen" / "generate.py"
)
#: Traces per generated week: about 600 failing conversations, the smallest shape about 15.
N = 1500

CONFIG = """name = "shapes-test"

[privacy.id_patterns]
order = '\\bORD-\\d{6}\\b'
customer = '\\bCUS-\\d{5}\\b'
"""


def generator() -> ModuleType:
    """The example's trace generator, imported from its file."""
    name = "casework_example_shapes_generate"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, GENERATOR)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def write_week(folder: Path, seed: int, week: int, n: int = N) -> dict[str, str]:
    """Write one week of traces to ``folder/traces.jsonl``; the planted shape of each session."""
    lines, truth = generator().generate(seed, week, n)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "traces.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {t["session"]: t["shape"] for t in truth}


def new_project(root: Path) -> Project:
    """An empty project (git work tree) whose config knows the generator's id patterns."""
    root.mkdir(parents=True)
    (root / "casework.toml").write_text(CONFIG, encoding="utf-8")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    return load_project(root)


def truth_by_case(project: Project, truth: dict[str, str]) -> dict[str, str]:
    """Planted shape by draft case id (`mined-<session pseudonym>`), as the shape file names them."""
    ctx = scrubber_for(project, load_key(project, ENV)).conversation()
    return {f"mined-{ctx.identifier('session', s).partition('_')[2]}": v for s, v in truth.items()}


@pytest.fixture(scope="session")
def weeks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, str]]]:
    """Three generated weeks: `w1` (seed 11), `w1b` (same shapes, seed 12), `w2` (week 2)."""
    base = tmp_path_factory.mktemp("traces")
    return {
        "w1": (base / "w1", write_week(base / "w1", 11, 1)),
        "w1b": (base / "w1b", write_week(base / "w1b", 12, 1)),
        "w2": (base / "w2", write_week(base / "w2", 11, 2)),
    }
