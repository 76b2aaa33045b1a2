from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from casework.project import load_project
from casework.runner import RunRequest, compare_runs, load_run, run_agent, run_results

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "refunds"


@pytest.mark.skipif(
    not (EXAMPLE / "datasets" / "refunds" / "cases.jsonl").is_file(),
    reason="the example dataset has not been built (examples/refunds/build/make_dataset.py)",
)
def test_good_example_agent_beats_the_degraded_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    root = tmp_path / "demo"
    (root / "datasets").mkdir(parents=True)
    shutil.copytree(EXAMPLE / "datasets" / "refunds", root / "datasets" / "refunds")
    shutil.copytree(EXAMPLE / "agents", root / "agents")
    shutil.copytree(EXAMPLE / "agent", root / "agent")
    (root / "casework.toml").write_text('name = "demo"\n', encoding="utf-8")
    subprocess.run(["git", "init", "-q", "."], cwd=root, check=True)
    monkeypatch.chdir(root)
    project = load_project(root)
    good = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent="python:agents.refunds_agent:good",
            k=2,
            use_judge=False,
            store=False,
        ),
    )
    bad = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent="python:agents.refunds_agent:degraded",
            k=2,
            use_judge=False,
            store=False,
        ),
    )
    rg = run_results(load_run(project, str(good.log)))
    rb = run_results(load_run(project, str(bad.log)))
    assert rg.overall.pass1 is not None and rb.overall.pass1 is not None
    assert rg.overall.pass1 >= 0.8
    assert rg.overall.pass1 - rb.overall.pass1 >= 0.1
    cmp = compare_runs(
        project, load_run(project, str(good.log)), load_run(project, str(bad.log)), write=False
    )
    assert cmp.comparison.discrimination_rate > 0.2
    assert len(cmp.comparison.inverted) <= 3
