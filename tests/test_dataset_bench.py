"""The dataset benchmark: its generator is seeded, and a tiny run of the benchmark completes."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"


def _run(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )


def _digest(root: Path) -> str:
    folder = root / "datasets" / "refunds"
    return hashlib.sha256(
        (folder / "cases.jsonl").read_bytes() + (folder / "labels.jsonl").read_bytes()
    ).hexdigest()


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    for name, seed in (("a", "3"), ("b", "3"), ("c", "4")):
        _run(str(BENCH / "dataset_data.py"), "120", str(tmp_path / name), "--seed", seed)
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    assert _digest(tmp_path / "a") != _digest(tmp_path / "c")
    lines = (tmp_path / "a" / "datasets" / "refunds" / "cases.jsonl").read_text().splitlines()
    cases = [json.loads(line) for line in lines]
    assert len(cases) == 120
    assert len({c["id"] for c in cases}) == 120
    assert len({json.dumps(c["situation"]["turns"]) for c in cases}) == 120  # text varies
    labels = (tmp_path / "a" / "datasets" / "refunds" / "labels.jsonl").read_text().splitlines()
    assert len(labels) == 2 * len(cases)


def test_generated_project_passes_check(tmp_path: Path) -> None:
    _run(str(BENCH / "dataset_data.py"), "60", str(tmp_path / "p"))
    subprocess.run(["git", "init", "-q", "."], cwd=tmp_path / "p", check=True)
    done = _run(
        "-c",
        "from casework.cli import main; main()",
        "dataset",
        "check",
        "refunds",
        cwd=tmp_path / "p",
    )
    assert "60 cases checked" in done.stdout


def test_a_tiny_benchmark_run_measures_every_step_and_writes_its_section(tmp_path: Path) -> None:
    docs = tmp_path / "benchmarks.md"
    docs.write_text("# Benchmarks\n\nkept\n", encoding="utf-8")
    args = ["--sizes", "50", "--cache-releases", "2", "--agreement-sizes", "40", "--out", str(docs)]
    args += ["--startup-runs", "2"]  # the start-up table's code, without its ten timing runs each
    done = _run(str(BENCH / "dataset_bench.py"), *args)
    steps = ["orjson parse (floor)", "check", "release (1% changed)", "diff 1 2", "cases", "show"]
    steps += ["show @1", "expire --dry-run", "forget --dry-run", "expire (mined rows)"]
    for step in steps:
        assert f"| 50 | `{step}` |" in done.stdout, done.stdout
    assert "git diff --stat (floor)" in done.stdout
    assert "| 40 | `agreement` |" in done.stdout
    assert "cache after 1% releases" in done.stdout
    assert "exit " not in done.stdout, done.stdout  # every command succeeded
    text = docs.read_text(encoding="utf-8")
    assert text.startswith("# Benchmarks\n\nkept\n")
    assert "<!-- bench:dataset -->" in text and "## Dataset operations" in text
    assert "each command run 2 times in a fresh process" in text
    assert "| `casework --help` |" in text and "| `casework versions refunds` |" in text
