"""`casework dataset versions` reads the release log without loading the release store (issue 13, start-up).

``casework.dataset`` exports lazily, and the dataset commands import the store, the diff and the
checks inside the commands that use them, so listing releases loads only the modules it reads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

PROBE = """
import atexit, json, sys
atexit.register(lambda: print("MODULES" + json.dumps(sorted(sys.modules))))
from casework.cli import main
main()
"""

#: Modules the release log needs none of: the store, the checks, diffs, migrations, workers.
NOT_NEEDED = (
    "casework.dataset.store",
    "casework.dataset.check",
    "casework.dataset.compare",
    "casework.dataset.diff",
    "casework.dataset._incremental",
    "casework.dataset._prepare",
    "casework.dataset._write",
    "casework.dataset._changelog",
    "casework.dataset._refusals",
    "casework.dataset.migrate",
    "casework.dataset.parallel",
    "casework.dataset.tools",
    "multiprocessing",
)


def _run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=cwd,
        # Without pytest-cov's variables: under `make test` they start coverage in the child,
        # which imports modules (multiprocessing) that `casework dataset versions` itself does not.
        env={
            **{k: v for k, v in os.environ.items() if not k.startswith("COV_CORE_")},
            "PYTHONPATH": str(SRC),
        },
        capture_output=True,
        text=True,
        check=True,
    )


def test_versions_loads_no_store_and_prints_what_it_printed(project_dir: Path) -> None:
    assert (
        "released" in _run("dataset", "release", "refunds", "-m", "first", cwd=project_dir).stdout
    )
    done = _run("dataset", "versions", "refunds", cwd=project_dir)
    text, _, modules = done.stdout.partition("MODULES")
    loaded = set(json.loads(modules))
    assert "casework.dataset.versions" in loaded
    assert [m for m in NOT_NEEDED if m in loaded] == []
    assert "first" in text and "3" in text  # the release's message and its case count
    listed = _run("dataset", "versions", "refunds", "--format", "json", cwd=project_dir).stdout
    records = json.loads(listed.partition("MODULES")[0])
    assert [r["number"] for r in records] == [1] and records[0]["counts"]["cases"] == 3


def test_release_and_diff_still_load_what_they_use(project_dir: Path) -> None:
    _run("dataset", "release", "refunds", "-m", "first", cwd=project_dir)
    done = _run("dataset", "diff", "refunds", "1", cwd=project_dir)
    loaded = set(json.loads(done.stdout.partition("MODULES")[2]))
    assert {"casework.dataset.compare", "casework.dataset.store"} <= loaded
