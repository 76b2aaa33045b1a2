"""Finding a case by the id its task has in its own benchmark (`provenance.original_id`).

The evidence is τ²-bench's published telecom tasks: ids with brackets, `|` and colons, which the
import turns into safe case ids; `casework dataset cases --original-id` finds them again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from casework.interop.tau2._layout import installed_domain

pytest.importorskip("tau2")

Run = Callable[..., Result]


def _project(root: Path) -> Path:
    (root / "agent").mkdir(parents=True)
    (root / "agent" / "tools.json").write_text("[]", encoding="utf-8")
    (root / "casework.toml").write_text(
        'name = "t"\n[agent]\ntools = "agent/tools.json"\n', "utf-8"
    )
    return root


def test_dataset_cases_finds_a_telecom_case_by_its_published_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run_cli: Run
) -> None:
    # Before: no such option (usage error, exit 2); the safe id had to be worked out by hand.
    root = _project(tmp_path / "p")
    monkeypatch.chdir(root)
    out = run_cli("import", "tau2", "--domain", "telecom", "--tasks", "tasks_small.json",
                  "--dataset", "tel")  # fmt: skip
    assert out.exit_code == 0, out.output + out.stderr
    published = json.loads((installed_domain("telecom") / "tasks_small.json").read_bytes())
    first, second = str(published[0]["id"]), str(published[1]["id"])
    assert "[" in first and ":" in first  # an id the name rule refuses
    found = run_cli("dataset", "cases", "tel", "--original-id", first, "--format", "json")
    assert found.exit_code == 0, found.output + found.stderr
    (case_id,) = json.loads(found.output)
    assert case_id.startswith("telecom-") and case_id != f"telecom-{first}"
    both = run_cli("dataset", "cases", "tel", "--original-id", first, "--original-id", second,
                   "--format", "json")  # fmt: skip
    assert both.exit_code == 0, both.output
    assert len(json.loads(both.output)) == 2 and case_id in json.loads(both.output)
    shown = run_cli("dataset", "cases", "tel", "--original-id", first, "--original-id", second)
    assert shown.exit_code == 0 and f"2 of {len(published)} cases in tel@1" in shown.output
    none = run_cli("dataset", "cases", "tel", "--original-id", "no-such-task")
    assert none.exit_code == 0 and f"0 of {len(published)} cases in tel@1" in none.output
