"""The programmatic oracle: a named Python check decides, and fails closed when it cannot."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from casework.gate._dataset_checks import _programmatic_findings
from casework.grading.grade import grade
from casework.grading.programmatic import (
    BroughtEnvironment,
    CheckOutcome,
    check_environment,
    register_check,
    register_environment,
)
from casework.schema import Case, Oracle, Trajectory


@register_check("test-balance-moved")
def _balance_moved(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    trajectory: Trajectory,
    params: Mapping[str, Any],
) -> CheckOutcome:
    moved = before["balance"] - after["balance"]
    return CheckOutcome(moved == params["amount"], f"moved {moved}")


@register_check("test-broken")
def _broken(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    trajectory: Trajectory,
    params: Mapping[str, Any],
) -> CheckOutcome:
    raise RuntimeError("bug in the check")


def _case(check: str) -> Case:
    return Case.model_validate(
        {
            "id": "c1",
            "slice": "bank",
            "split": "dev",
            "source": "hand",
            "situation": {"goal": "pay", "turns": [{"role": "user", "content": "pay 5"}]},
            "oracle": {"class": "programmatic", "check": check, "check_params": {"amount": 5}},
        }
    )


def test_the_named_check_decides_and_the_verdict_says_programmatic() -> None:
    case = _case("test-balance-moved")
    good = grade(
        case,
        Trajectory(final_reply="ok", final_state={"balance": 5}),
        initial_state={"balance": 10},
    )
    bad = grade(
        case,
        Trajectory(final_reply="ok", final_state={"balance": 9}),
        initial_state={"balance": 10},
    )
    assert good.passed is True and good.oracle_class == "programmatic"
    assert [c.name for c in good.checks] == ["programmatic"]  # called once, reported once
    assert bad.passed is False and "moved 1" in bad.summary()


def test_an_exception_inside_the_check_leaves_the_trial_undetermined() -> None:
    verdict = grade(_case("test-broken"), Trajectory(final_reply="ok"), initial_state={})
    assert verdict.passed is None
    assert "raised RuntimeError: bug in the check" in verdict.summary()


def test_a_missing_check_is_undetermined_at_grade_time() -> None:
    verdict = grade(
        _case("no_such_module_xyz:check"), Trajectory(final_reply="ok"), initial_state={}
    )
    assert verdict.passed is None
    assert "cannot import 'no_such_module_xyz'" in verdict.summary()


def test_dataset_check_locates_a_check_that_does_not_load(tmp_path: Path) -> None:
    (tmp_path / "raises_on_import.py").write_text("raise ValueError('boom')\n")
    findings = _programmatic_findings(
        {
            "test-balance-moved": ("c0", 3),
            "no_such_module_xyz:check": ("c1", 2),
            "raises_on_import:check": ("c2", 1),
            "not a/path": ("c3", 1),
        },
        tmp_path,
    )
    got = {(f.case_id, f.subject, f.severity) for f in findings}
    assert got == {
        ("c1", "oracle.check", "error"),
        ("c2", "oracle.check", "error"),
        ("c3", "oracle.check", "error"),
    }
    text = {f.case_id: f.message for f in findings}
    assert "(2 case(s) name it)" in text["c1"]
    assert "ValueError: boom" in text["c2"]
    assert "no check named 'not a/path'" in text["c3"]


def test_class_programmatic_and_check_go_together() -> None:
    with pytest.raises(ValidationError, match="class 'programmatic' and check go together"):
        Oracle.model_validate({"class": "programmatic"})
    with pytest.raises(ValidationError, match="class 'programmatic' and check go together"):
        Oracle.model_validate({"class": "human", "check": "x:y"})


def test_a_check_brings_its_environment_for_its_params_only() -> None:
    @register_environment("test-balance-moved")
    def _bank(params: Mapping[str, Any]) -> BroughtEnvironment | None:
        return (
            BroughtEnvironment(f"bank {params['amount']}", dict) if params.get("amount") else None
        )

    assert (brought := check_environment(_case("test-balance-moved").oracle)) is not None
    assert brought.name == "bank 5" and brought.make() == {}
    no_amount = Oracle.model_validate({"class": "programmatic", "check": "test-balance-moved"})
    assert check_environment(no_amount) is None
    assert check_environment(_case("test-broken").oracle) is None  # registered, brings none
    assert check_environment(_case("no_such_module_xyz:check").oracle) is None
    assert check_environment(Oracle.model_validate({"class": "human"})) is None
