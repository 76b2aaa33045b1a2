"""The scripted end-to-end flow on the example, as `make demo` runs it: shapes, author per axis,
review from the committed decision file, the good and degraded agents, the generator's gate."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from tests.unmeasured import unmeasured_env

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "refunds"
KEY = "larkspur-example-demo-key-not-secret-0001"


def replies_module() -> ModuleType:
    """The example's scripted author replies, imported from their file."""
    name = "casework_example_author_replies"
    spec = importlib.util.spec_from_file_location(name, EXAMPLE / "llm" / "author_replies.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def example(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("author-example") / "refunds"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".casework", "runs", "shapes"))
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    subprocess.run(
        [
            sys.executable,
            "traces-gen/generate.py",
            "--seed",
            "7",
            "--week",
            "1",
            "-n",
            "3000",
            "--out",
            "traces-gen/week1/traces.jsonl",
        ],
        cwd=root,
        env=unmeasured_env(),
        check=True,
        capture_output=True,
    )
    yield root


def invoke(root: Path, *args: str) -> Result:
    mp = pytest.MonkeyPatch()
    mp.chdir(root)
    mp.setenv("CASEWORK_PSEUDONYM_KEY", KEY)
    mp.delenv("CASEWORK_DB_URL", raising=False)
    try:
        return CliRunner().invoke(cli, list(args), catch_exceptions=False)
    finally:
        mp.undo()


def test_the_committed_replies_file_holds_the_builder_output() -> None:
    rules = [
        json.loads(line) for line in (EXAMPLE / "llm" / "responses.jsonl").read_text().splitlines()
    ]
    authored = [r for r in rules if str(r.get("note", "")).startswith("author:")]
    assert authored == [json.loads(json.dumps(r, sort_keys=True)) for r in replies_module().rules()]


def test_author_review_run_report(example: Path) -> None:
    built = invoke(
        example, "shapes", "build", "traces-gen/week1", "--name", "refunds", "-m", "week 1"
    )
    assert built.exit_code == 0, built.stderr
    generated = 0
    for axis, shape in replies_module().SHAPE_OF_AXIS.items():
        out = invoke(
            example,
            "shapes",
            "author",
            "--shape",
            shape,
            "--axis",
            axis,
            "-n",
            "2",
            "--format",
            "json",
        )
        assert out.exit_code == 0, out.stderr
        generated += json.loads(out.stdout)["generated"]
    assert generated == 20
    # The band applies once the slice is marked mature; before review refunds is below it.
    config = example / "casework.toml"
    config.write_text(
        config.read_text().replace(
            "synthetic_cap = 0.25\n", 'synthetic_cap = 0.25\nmature_slices = ["refunds"]\n'
        )
    )
    before = invoke(example, "dataset", "check", "refunds")
    assert (
        "error: unsatisfiable_quota: refunds: 20 of 115 cases are unsatisfiable (17%)"
        in before.stderr
    )
    reviewed = invoke(example, "author", "review", "--decisions", "demo/author_decisions.jsonl")
    assert reviewed.stdout == "decided 12 item(s): 9 accept, 1 edit, 2 reject\n"
    after = invoke(example, "dataset", "check", "refunds")
    assert (
        "slice 'refunds': 26 of 125 cases are unsatisfiable (21%), inside the band" in after.stdout
    )
    assert after.exit_code == 1 and "unsatisfiable_quota" not in after.stderr  # expired rows only
    # The demo's second round: one candidate on each of three shapes, all accepted.
    for shape, axis in replies_module().SECOND_ROUND:
        out = invoke(example, "shapes", "author", "--shape", shape, "--axis", axis, "-n", "1")
        assert "1 generated, 1 queued for review, 0 rejected" in out.stdout, out.stderr
    second = invoke(example, "author", "review", "--decisions", "demo/author_decisions_2.jsonl")
    assert second.stdout == "decided 3 item(s): 3 accept\n"

    report = invoke(
        example,
        "shapes",
        "report",
        "--better",
        "python:agents.refunds_agent:good",
        "--worse",
        "python:agents.refunds_agent:degraded",
        "--format",
        "json",
    )
    assert report.exit_code == 0, report.stderr
    data = json.loads(report.stdout)
    assert (data["generated"], data["queued"], data["accepted"]) == (23, 15, 13)
    assert data["acceptance_rate"] == pytest.approx(13 / 23) and data["warning"] is None
    refunds = next(q for q in data["unsatisfiable"] if q["slice"] == "refunds")
    assert (refunds["unsatisfiable"], refunds["total"], refunds["in_band"]) == (29, 128, True)
    # One planted candidate per rule, each counted once.
    assert data["rejected_by_rule"] == {
        r: 1
        for r in (
            "answer_key",
            "malformed_json",
            "near_duplicate",
            "no_oracle",
            "not_one_sentence",
            "schema_invalid",
            "state_without_assertion",
            "undeclared_tool",
        )
    }
    assert sum(data["coverage"]["shape-03"].values()) == 6
    assert "shape-02 × stale-tool-state" in data["empty_cells"]
    assert "shape-03 × missing-or-malformed-input" in data["empty_cells"]  # rejected in review
    d = data["discrimination"]
    assert d["cases"] == 13 and d["inverted"] == []
    # The degraded agent skips the policy check and obeys planted notes: those cases separate.
    axes = sorted(c.split("-", 3)[3].rsplit("-", 1)[0] for c in d["discriminating"])
    assert axes == ["adversarial-retrieved-content", "outside-policy", "outside-policy"]
    assert d["stability_better"] == 1.0 and d["stability_worse"] < 1.0
