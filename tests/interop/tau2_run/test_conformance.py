"""casework's τ² scoring agrees with τ²-bench's own evaluator, run beside it on published tasks.

A seeded sample of `benchmarks/conformance_tau2.py` (the full sets run there): reference
trajectories (the golden actions by their requestors, the facts said) and perturbed ones, graded
by both in this process. Telecom's 20 ``tasks_small.json`` tasks run whole (they are cheap: τ²'s
user device and a small database); airline and retail load a 7 MB and a 3 MB database per trial
on τ²'s side, so one seeded task each runs here.
"""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytest.importorskip("tau2")

BENCH = Path(__file__).parents[3] / "benchmarks" / "conformance_tau2.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("conformance_tau2", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("conformance_tau2", module)
    spec.loader.exec_module(module)
    module.quiet()
    return module


def _share(rows: list[dict[str, Any]]) -> tuple[int, int]:
    return sum(r["trials"] for r in rows), sum(r["agree"] for r in rows)


def test_telecom_small_agrees_with_tau2s_evaluator_on_every_trial(bench: ModuleType) -> None:
    # Scored by env_assertions over the user's phone (and ACTION for two tasks), started from
    # each task's initialization actions: the parts casework now runs and scores as τ² does.
    loaded = bench.load("telecom", "tasks_small.json")
    assert len(loaded.tasks) == 20
    rows = bench.measure_domain(loaded)
    trials, agree = _share(rows)
    assert trials >= 80
    assert agree == trials, [r["disagreements"] for r in rows]
    by_kind = {r["perturbation"]: r for r in rows}
    assert by_kind["reference"]["trials"] == 20
    # The perturbations are not all passes on τ²'s side: the comparison can tell them apart.
    assert by_kind["do_nothing"]["trials"] == 20


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_a_seeded_task_agrees_with_tau2s_evaluator(bench: ModuleType, domain: str) -> None:
    loaded = bench.load(domain)
    index = random.Random(f"{bench.SEED}-{domain}").randrange(len(loaded.tasks))
    rows = bench.measure_domain(loaded, [index], kinds=("reference", "drop_last_write"))
    by_kind = {r["perturbation"]: r for r in rows}
    assert by_kind["reference"]["trials"] == 1
    assert by_kind["reference"]["agree"] == 1, by_kind["reference"]["disagreements"]
    trials, agree = _share(rows)
    assert agree == trials, [r["disagreements"] for r in rows]
