"""`casework shapes build` above `[shapes] sample_size`: the output says it sampled."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from casework.cli import cli
from casework.project import Project
from tests.authoring.conftest import KEY


def test_build_says_it_sampled(
    corpus: tuple[Project, Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    project, traces, _ = corpus
    config = project.root / "casework.toml"
    kept = config.read_text(encoding="utf-8")
    config.write_text(kept + "\n[shapes]\nsample_size = 350\nbatch_size = 100\n", encoding="utf-8")
    monkeypatch.chdir(project.root)
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", KEY)
    runner = CliRunner()
    try:
        text = runner.invoke(cli, ["shapes", "build", str(traces), "--name", "cli"])
        as_json = runner.invoke(
            cli, ["shapes", "build", str(traces), "--name", "cli", "--format", "json"]
        )
        bad = runner.invoke(cli, ["shapes", "build", str(traces), "--name", "x", "--engine", "x"])
    finally:
        config.write_text(kept, encoding="utf-8")
    assert text.exit_code == 0, text.output
    payload = json.loads(as_json.stdout)
    sampling = payload["sampling"]
    assert sampling["fitted"] == 350 and sampling["batch_size"] == 100
    assert sampling["fitted"] + sampling["assigned"] + sampling["unassigned"] == payload["failing"]
    assert (
        f"sampled: fitted on 350 failing conversation(s) ([shapes] sample_size 350); "
        f"{sampling['assigned']} assigned to a shape, {sampling['unassigned']} unassigned "
        "(outside every shape's radius), in batches of 100"
    ) in " ".join(text.stdout.split())
    assert bad.exit_code == 2 and "'x' is not one of 'local', 'ray'" in bad.output
