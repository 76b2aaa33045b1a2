"""The golden-replay state oracle: comparisons, subsets, evidence, and that it stays hidden."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from casework.dataset.state import apply_diff, apply_shared, state_diff
from casework.dataset.tools import ToolDecl
from casework.grading import grade
from casework.grading.calibration import labeller_view
from casework.grading.golden import state_differences
from casework.grading.grade import needed_oracle_class
from casework.labelling.sheets import sheet_line
from casework.schema import Case, Trajectory


def case(**oracle: Any) -> Case:
    return Case.model_validate(
        {
            "id": "g-1",
            "slice": "shop",
            "split": "dev",
            "source": "hand",
            "situation": {
                "goal": "buy",
                "turns": [{"role": "user", "content": "buy 2 mugs"}],
                "state": {"orders": {}, "audit": 0},
            },
            "oracle": {
                "class": "state_assertion",
                "golden_actions": [
                    {"name": "create_order", "arguments": {"sku": "SECRET-GOLDEN", "qty": 2}}
                ],
                **oracle,
            },
        }
    )


GOLDEN = {"orders": {"O-1": {"sku": "A1", "qty": 2}}, "audit": 1}


def golden_check(c: Case, final: dict[str, Any], golden: dict[str, Any] | None = GOLDEN) -> Any:
    verdict = grade(c, Trajectory(final_state=final), golden_state=golden)
    return next(x for x in verdict.checks if x.name == "golden_state")


def test_equal_states_pass_and_a_different_one_fails_naming_the_keys() -> None:
    assert golden_check(case(), json.loads(json.dumps(GOLDEN))).status == "pass"
    wrong = {"orders": {"O-1": {"sku": "A1", "qty": 3}, "O-2": {}}, "audit": 1}
    check = golden_check(case(), wrong)
    assert check.status == "fail"
    assert check.evidence.endswith("over the whole state at /orders/O-1/qty, /orders/O-2")


def test_state_compare_limits_the_comparison_to_its_pointers() -> None:
    final = {"orders": {"O-1": {"sku": "A1", "qty": 2}}, "audit": 7}  # audit differs
    assert golden_check(case(), final).status == "fail"
    subset = golden_check(case(state_compare=["/orders"]), final)
    assert subset.status == "pass" and "over /orders" in subset.evidence
    assert state_differences(GOLDEN, final, ["/audit", "/missing"]) == ["/audit"]
    assert state_differences(GOLDEN, {"audit": 1}, ["/orders"]) == ["/orders"]


def test_without_a_replay_the_check_is_undetermined_and_without_golden_it_is_absent() -> None:
    assert golden_check(case(), GOLDEN, golden=None).status == "undetermined"
    plain = Case.model_validate({**case().model_dump(by_alias=True), "oracle": {}})
    assert all(c.name != "golden_state" for c in grade(plain, Trajectory()).checks)
    assert needed_oracle_class(case()) == "state_assertion"


def test_the_evidence_lists_ten_keys_and_counts_the_rest() -> None:
    golden = {"orders": {f"O-{i:02d}": i for i in range(14)}}
    check = golden_check(case(), {"orders": {}}, golden=golden)
    assert check.evidence.count("/orders/O-") == 10 and check.evidence.endswith("and 4 more")


def test_golden_actions_never_reach_the_blind_sheet_or_the_judge_view() -> None:
    c = case()
    tools = {"create_order": ToolDecl("create_order")}
    line = sheet_line("label", "shop", "lab-1", c, "g1", tools)
    view = labeller_view(c, tools, "g1")
    for shown in (line, view):
        text = json.dumps(shown)
        assert "SECRET-GOLDEN" not in text and "golden" not in text


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(
    st.dictionaries(st.text(max_size=3), _json, max_size=4),
    st.dictionaries(st.text(max_size=3), _json, max_size=4),
)
def test_a_state_diff_applied_to_the_initial_state_gives_the_final_state(
    before: dict[str, Any], after: dict[str, Any]
) -> None:
    diff = state_diff(before, after)
    kept = json.dumps(before, sort_keys=True)
    assert apply_diff(before, diff) == after
    assert apply_shared(before, diff) == after  # copies only the paths the diff touches
    assert json.dumps(before, sort_keys=True) == kept  # neither changes its input
    assert (diff == []) == (json.dumps(before, sort_keys=True) == json.dumps(after, sort_keys=True))
