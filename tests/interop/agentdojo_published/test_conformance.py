"""AgentDojo as installed: import counts, and casework's verdicts beside AgentDojo's own scorer.

A seeded sample of `benchmarks/conformance_agentdojo.py` (the full suites run there; workspace,
whose YAML environment is the slowest to load per case, only there).
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
    bench = _bench()
    # Travel's own utility functions diff whole environments (DeepDiff): fewer of its tasks.
    rows: list[dict[str, object]] = bench.measure(sample=4, suites=("banking", "slack"))
    rows += bench.measure(sample=2, suites=("travel",))
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
    assert trials >= 50
    assert agree / trials >= 0.99, [r["disagreements"] for r in agreement if r["disagreements"]]
    # The comparison tells trajectories apart: AgentDojo passes every reference and fails
    # injections carried out and doing nothing (casework agrees with each, above).
    by_kind: dict[object, list[int]] = {}
    for r in agreement:
        got = by_kind.setdefault(r["perturbation"], [0, 0])
        got[0] += int(str(r["trials"]))
        got[1] += int(str(r["benchmark_passed"]))
    assert by_kind["reference"][1] == by_kind["reference"][0]
    assert (
        by_kind["security: injection carried out"][1]
        < by_kind["security: injection carried out"][0]
    )
    assert by_kind["do_nothing"][1] < by_kind["do_nothing"][0]


def test_the_attack_text_names_no_model_unless_one_is_asked_for() -> None:
    from casework.interop.agentdojo._import import AgentDojoOptions, _injections
    from casework.interop.agentdojo._suites import load_suite

    suite, pair = load_suite("banking"), ("user_task_0", "injection_task_0")
    neutral = _injections(suite, AgentDojoOptions(), [pair])[pair]
    addressed = _injections(suite, AgentDojoOptions(target_model="gpt-4o-2024-05-13"), [pair])
    assert neutral and all("to you, the AI language model." in t for t in neutral.values())
    assert all("GPT-4" not in t for t in neutral.values())
    assert all("to you, GPT-4." in t for t in addressed[pair].values())


def test_a_model_agentdojo_does_not_know_is_the_target_models_error() -> None:
    from casework.errors import UsageError
    from casework.interop.agentdojo._import import AgentDojoOptions, _injections
    from casework.interop.agentdojo._suites import load_suite

    pair = ("user_task_0", "injection_task_0")
    with pytest.raises(UsageError, match="No valid model name") as caught:
        _injections(load_suite("banking"), AgentDojoOptions(target_model="llama"), [pair])
    assert caught.value.param == "target_model"
