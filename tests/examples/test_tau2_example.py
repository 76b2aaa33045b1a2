"""The README's τ² example, run as written on a fresh project: init, import, run, report.

The commands are the ones `examples/tau2/README.md` shows, run as a user runs them (the
`casework` executable, a new folder); the run takes the airline holdout split with one trial
per case to stay quick (the README's full run: 50 of 50 tasks pass).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path

import pytest

pytest.importorskip("tau2")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tau2"
CASEWORK = str(Path(sys.executable).parent / "casework")


def _casework(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CASEWORK_DB_URL"}
    done = subprocess.run(
        [CASEWORK, *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def test_the_readme_tau2_example_runs_as_written(tmp_path: Path) -> None:
    _casework(tmp_path, "init", "tau2-demo")
    project = tmp_path / "tau2-demo"
    for name in ("golden_agent.py", "user_sim.py"):
        shutil.copy(EXAMPLE / name, project / name)
    with (project / "casework.toml").open("a", encoding="utf-8") as toml:
        toml.write((EXAMPLE / "models.toml").read_text("utf-8"))
    imported = _casework(project, "import", "tau2", "--domain", "airline", "--dataset", "airline")
    assert "50" in imported.stdout
    ran = _casework(
        project,
        "run",
        "airline",
        "--agent",
        "python:golden_agent:run",
        "--split",
        "holdout",
        "-k",
        "1",
    )
    assert "20 trials" in ran.stdout and "20 passed, 0 failed" in ran.stdout, ran.stdout
    # τ²'s own log lines (every tool response) stay out of the run's output.
    assert "tau2.domains" not in ran.stdout + ran.stderr
    run_id = re.search(r"run (\S+): 20 trials", ran.stdout)
    assert run_id is not None
    reported = _casework(project, "report", run_id.group(1))
    html = project / "runs" / f"{run_id.group(1)}.html"
    assert html.is_file(), reported.stdout
    # The report says how the cases were scored: τ²'s way, by each task's own reward basis.
    assert "each task's own reward basis" in unescape(html.read_text("utf-8"))
