"""casework's τ² scoring agrees with τ²-bench's own evaluator, run beside it on published tasks.

A sample of `benchmarks/conformance_tau2.py` (the full sets run there): reference trajectories
(the golden actions, the facts said) and perturbed ones, graded by both in this process.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("tau2")

BENCH = Path(__file__).parents[3] / "benchmarks" / "conformance_tau2.py"


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("conformance_tau2", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("conformance_tau2", module)
    spec.loader.exec_module(module)
    return module


def test_verdicts_agree_with_tau2s_evaluator_on_a_sample_of_airline_and_retail() -> None:
    rows = _bench().measure(sample=2)
    assert {r["category"] for r in rows} == {"airline", "retail"}
    trials = sum(r["trials"] for r in rows)
    agree = sum(r["agree"] for r in rows)
    assert trials >= 12
    assert agree / trials >= 0.99, [r["disagreements"] for r in rows]
    for row in rows:
        if row["perturbation"] == "reference":
            assert row["trials"] == 2 and row["agree"] == 2, row["disagreements"]
    # The perturbations are not all passes: the comparison can tell a wrong trajectory apart.
    assert any(r["trials"] and r["perturbation"] == "do_nothing" for r in rows)
