"""AgentDojo as installed: import counts, and casework's verdicts beside AgentDojo's own scorer.

A seeded sample of `benchmarks/conformance_agentdojo.py` (the full suites run there; workspace,
whose YAML environment takes half a second to load per case, only there).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("agentdojo")

BENCH = Path(__file__).parents[3] / "benchmarks" / "conformance_agentdojo.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("conformance_agentdojo", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("conformance_agentdojo", module)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def rows() -> list[dict[str, object]]:
    rows: list[dict[str, object]] = _bench().measure(
        sample=4, suites=("banking", "slack", "travel")
    )
    return rows


def test_every_user_task_imports_and_is_gradable(rows: list[dict[str, object]]) -> None:
    imports = {r["category"]: r for r in rows if "published" in r}
    assert {k: (r["published"], r["imported"], r["gradable"]) for k, r in imports.items()} == {
        "banking user tasks": (16, 16, 16),
        "slack user tasks": (21, 21, 21),
        "travel user tasks": (20, 20, 20),
    }


def test_verdicts_agree_with_agentdojo(rows: list[dict[str, object]]) -> None:
    agreement = [r for r in rows if "trials" in r]
    kinds = {r["perturbation"] for r in agreement}
    assert {"reference", "do_nothing", "security: injection carried out"} <= kinds
    reference = [r for r in agreement if r["perturbation"] == "reference"]
    assert all(r["agree"] == r["trials"] for r in reference), reference
    trials = sum(int(str(r["trials"])) for r in agreement)
    agree = sum(int(str(r["agree"])) for r in agreement)
    assert trials >= 60
    assert agree / trials >= 0.99, [r["disagreements"] for r in agreement if r["disagreements"]]
