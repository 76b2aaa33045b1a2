"""`casework import run` pins τ-bench's published gpt-4o airline run to the imported τ² airline.

τ-bench names its tasks "0".."49"; the τ² import keeps those as `provenance.original_id`, so the
run finds its cases with no map. The published file is read as published; pass^k must equal
τ-bench's own figures.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from casework.runner.metrics import CaseTally, mean_pass_hat_k
from tests.public_data import TAU_BENCH_AIRLINE

pytest.importorskip("tau2")

Run = Callable[..., Result]
TAU_RUN = TAU_BENCH_AIRLINE


def _project(root: Path) -> Path:
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "tools.json").write_text("[]", encoding="utf-8")
    (root / "casework.toml").write_text(
        'name = "t"\n[agent]\ntools = "agent/tools.json"\n', "utf-8"
    )
    return root


def _trials(root: Path) -> list[dict[str, object]]:
    (log,) = (root / "runs").glob("*.jsonl")
    lines = [json.loads(x) for x in log.read_text("utf-8").splitlines()]
    return lines


def test_the_published_tau_bench_run_pins_to_the_imported_tau2_airline_by_original_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    # Before: every trial was refused ("0" is not a case of airline@1; the case is airline-0).
    root = _project(tmp_path / "p")
    monkeypatch.chdir(root)
    assert run_cli("import", "tau2", "--domain", "airline", "--dataset", "airline").exit_code == 0
    out = run_cli("import", "run", str(TAU_RUN), "--results-format", "tau", "--dataset", "airline")
    assert out.exit_code == 0, out.output + out.stderr
    assert "200 trial(s) of 50 task(s) (k=4), 84 passed, on airline@1" in out.output
    lines = _trials(root)
    header, trials = lines[0], [x for x in lines if x["kind"] == "trial"]
    assert header["dataset_ref"] == "airline@1"
    published = json.loads(TAU_RUN.read_text("utf-8"))
    assert Counter(f"airline-{r['task_id']}" for r in published) == Counter(
        str(t["case_id"]) for t in trials
    )
    passed = Counter(str(t["case_id"]) for t in trials if t["verdict"]["passed"])  # type: ignore[index]
    tallies = [CaseTally(f"airline-{i}", 4, passed.get(f"airline-{i}", 0)) for i in range(50)]
    figures = [round(mean_pass_hat_k(tallies, k) or -1.0, 3) for k in (1, 2, 3, 4)]
    assert figures == [0.42, 0.273, 0.22, 0.2]


def test_an_id_two_cases_came_from_needs_an_id_map_and_the_map_decides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    root = _project(tmp_path / "p")
    monkeypatch.chdir(root)
    for name in ("first", "second"):
        out = run_cli("import", "tau2", "--domain", "airline", "--dataset", "air",
                      "--slice", name, "--id-prefix", f"{name}-")  # fmt: skip
        assert out.exit_code == 0, out.output
    out = run_cli("import", "run", str(TAU_RUN), "--results-format", "tau", "--dataset", "air")
    assert out.exit_code == 1
    assert "task_id: was imported as several cases of air@2 (first-0, second-0); give `id_map`" in (
        out.output + out.stderr
    )
    assert not (root / "runs").exists()
    id_map = root / "ids.json"
    id_map.write_text(json.dumps({str(i): f"second-{i}" for i in range(50)}), "utf-8")
    out = run_cli("import", "run", str(TAU_RUN), "--results-format", "tau", "--dataset", "air",
                  "--id-map", str(id_map))  # fmt: skip
    assert out.exit_code == 0, out.output + out.stderr
    assert {str(t["case_id"])[:7] for t in _trials(root)[1:-1]} == {"second-"}


def test_an_id_map_to_no_case_is_a_located_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    root = _project(tmp_path / "p")
    monkeypatch.chdir(root)
    assert run_cli("import", "tau2", "--domain", "airline", "--dataset", "air").exit_code == 0
    id_map = root / "ids.json"
    id_map.write_text(json.dumps({"0": "nope-0"}), "utf-8")
    out = run_cli("import", "run", str(TAU_RUN), "--results-format", "tau", "--dataset", "air",
                  "--id-map", str(id_map))  # fmt: skip
    assert out.exit_code == 1
    assert "task_id: not a case of air@1. Got 'nope-0'." in out.output + out.stderr
    id_map.write_text("[1]", "utf-8")
    out = run_cli("import", "run", str(TAU_RUN), "--results-format", "tau", "--dataset", "air",
                  "--id-map", str(id_map))  # fmt: skip
    assert out.exit_code == 1
    assert "ids.json: /: an id map is a JSON object of task id: case id" in out.output + out.stderr
    assert not (root / "runs").exists()


def test_a_map_path_that_matches_nothing_in_any_line_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    # Before: the mapped field silently fell back to nothing (here: no reward, every line bad
    # for another reason, or a default path quietly used).
    root = _project(tmp_path / "p")
    monkeypatch.chdir(root)
    rows = root / "rows.jsonl"
    rows.write_text('{"id": "t1", "passed": true, "meta": {"who": "x"}}\n', "utf-8")
    out = run_cli("import", "run", str(rows), "--results-format", "generic",
                  "--map", "task_id=id", "--map", "explanation=meta.why")  # fmt: skip
    assert out.exit_code == 2
    assert "--map: explanation=meta.why matches nothing in any line of rows.jsonl." in (
        out.output + out.stderr
    )
    assert not (root / "runs").exists()
    ok = run_cli("import", "run", str(rows), "--results-format", "generic",
                 "--map", "task_id=id", "--map", "explanation=meta.who")  # fmt: skip
    assert ok.exit_code == 0, ok.output + ok.stderr
