from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from casework.grading.matchers import (
    MatcherError,
    argument_matches,
    deep_subset,
    evaluate_assertion,
    match_forbidden,
    match_in_order,
    match_required,
)
from casework.schema import ArgMatcher, StateAssertion, ToolRequirement, TrajectoryToolCall


def call(name: str, **args: Any) -> TrajectoryToolCall:
    return TrajectoryToolCall(name=name, arguments=args)


def req(value: Any) -> ToolRequirement:
    return ToolRequirement.model_validate(value)


@pytest.mark.parametrize(
    ("matcher", "present", "value", "expected"),
    [
        ({"match": "any"}, True, None, True),
        ({"match": "any"}, False, None, False),
        ({"match": "exact", "value": 12}, True, 12.0, True),
        ({"match": "exact", "value": 1}, True, True, False),
        ({"match": "exact", "value": {"a": [1, 2]}}, True, {"a": [1, 2]}, True),
        ({"match": "exact", "value": {"a": [1, 2]}}, True, {"a": [2, 1]}, False),
        ({"match": "subset", "value": {"sku": "A"}}, True, {"sku": "A", "qty": 2}, True),
        ({"match": "subset", "value": ["A"]}, True, ["B", "A"], True),
        ({"match": "subset", "value": ["C"]}, True, ["B", "A"], False),
        ({"match": "regex", "value": "ORD-\\d{6}"}, True, "ORD-104233", True),
        ({"match": "regex", "value": "ORD-\\d{6}"}, True, "ORD-104233x", False),
        ({"match": "regex", "value": "ORD"}, True, 5, False),
        ({"match": "predicate", "value": "@ > `10` && @ <= `50`"}, True, 12, True),
        ({"match": "predicate", "value": "@ > `10`"}, True, 3, False),
        ({"match": "predicate", "value": "length(@) == `2`"}, True, ["a", "b"], True),
    ],
)
def test_argument_matchers(
    matcher: dict[str, Any], present: bool, value: Any, expected: bool
) -> None:
    assert argument_matches(ArgMatcher.model_validate(matcher), present, value) is expected


def test_malformed_matchers_raise() -> None:
    with pytest.raises(MatcherError, match="regex"):
        argument_matches(ArgMatcher(match="regex", value="("), True, "x")
    with pytest.raises(MatcherError, match="JMESPath predicate"):
        argument_matches(ArgMatcher(match="predicate", value="@ >"), True, 1)


def test_required_tools_match_as_a_multiset_in_any_order() -> None:
    two_refunds = [
        req({"name": "issue_refund", "arguments": {"amount": {"match": "exact", "value": 5}}}),
        req("issue_refund"),
    ]
    calls = [call("issue_refund", amount=5), call("get_order")]
    assert len(match_required(two_refunds, calls).unmatched) == 1  # one call cannot satisfy both
    calls.append(call("issue_refund", amount=9))
    result = match_required(two_refunds, calls)
    assert result.unmatched == [] and result.matched == {0: 0, 1: 2}
    # The greedy order would fail: the generic requirement first grabs the only amount=5 call.
    assert (
        match_required(
            list(reversed(two_refunds)),
            [call("issue_refund", amount=5), call("issue_refund", amount=9)],
        ).unmatched
        == []
    )


def test_order_only_when_asked() -> None:
    reqs = [req("get_order"), req("issue_refund")]
    backwards = [call("issue_refund"), call("get_order")]
    assert match_required(reqs, backwards).unmatched == []
    assert match_in_order(reqs, backwards) == 1
    assert match_in_order(reqs, [call("get_order"), call("x"), call("issue_refund")]) == 2


def test_forbidden_tools() -> None:
    forbidden = [
        req(
            {
                "name": "issue_refund",
                "arguments": {"amount": {"match": "predicate", "value": "@ > `100`"}},
            }
        )
    ]
    assert match_forbidden(forbidden, [call("issue_refund", amount=50)]).unmatched == []
    assert match_forbidden(forbidden, [call("issue_refund", amount=500)]).matched == {0: 0}


STATE = {
    "orders": {
        "o1": {"refunded": 12, "status": "refunded", "tags": ["a", "b"]},
        "o2": {"refunded": 0},
    },
    "note": "hello",
}


@pytest.mark.parametrize(
    ("assertion", "passed"),
    [
        ({"expr": "orders.o1.refunded", "value": 12}, True),
        ({"expr": "orders.o1.refunded", "value": 13}, False),
        ({"expr": "orders.o1.refunded", "op": "ge", "value": 12}, True),
        ({"expr": "orders.o1.refunded", "op": "lt", "value": 12}, False),
        ({"expr": "orders.o2.refunded", "op": "le", "value": 0}, True),
        ({"expr": "orders.o1.status", "op": "ne", "value": "open"}, True),
        ({"expr": "orders.o1.tags", "op": "contains", "value": "b"}, True),
        ({"expr": "note", "op": "contains", "value": "ell"}, True),
        ({"expr": "orders.o3", "op": "absent"}, True),
        ({"expr": "orders.o1", "op": "exists"}, True),
        ({"expr": "orders.o3.refunded", "op": "gt", "value": 0}, False),
        ({"expr": "sum(orders.*.refunded)", "value": 12}, True),
        ({"expr": "$.orders.o1.refunded", "language": "jsonpath", "value": 12}, True),
        (
            {"expr": "$.orders.*.refunded", "language": "jsonpath", "op": "contains", "value": 0},
            True,
        ),
        (
            {
                "expr": "$.orders[?(@.refunded > 5)].status",
                "language": "jsonpath",
                "value": "refunded",
            },
            True,
        ),
        ({"expr": "$.orders.o9", "language": "jsonpath", "op": "absent"}, True),
        ({"expr": "orders.o1.status", "op": "gt", "value": 3}, False),
    ],
)
def test_state_assertions(assertion: dict[str, Any], passed: bool) -> None:
    assert evaluate_assertion(StateAssertion.model_validate(assertion), STATE).passed is passed


def test_bad_expressions_raise() -> None:
    with pytest.raises(MatcherError, match="JMESPath"):
        evaluate_assertion(StateAssertion(expr="orders.[", value=1), STATE)
    with pytest.raises(MatcherError, match="JSONPath"):
        evaluate_assertion(StateAssertion(expr="$..[[", language="jsonpath", value=1), STATE)


def test_deep_subset() -> None:
    assert deep_subset({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}})
    assert not deep_subset({"a": True}, {"a": 1})
    assert deep_subset({}, {"x": 1})


def _kuhn(edges: list[list[int]]) -> dict[int, int]:
    """Kuhn's augmenting paths with no shortcut: requirement index -> call index."""
    owner: dict[int, int] = {}

    def augment(i: int, seen: set[int]) -> bool:
        for j in edges[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or augment(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    for i in range(len(edges)):
        augment(i, set())
    return {i: j for j, i in owner.items()}


@given(st.lists(st.lists(st.booleans(), min_size=4, max_size=4), min_size=1, max_size=4))
def test_required_matching_is_kuhns_whether_or_not_first_choices_collide(
    table: list[list[bool]],
) -> None:
    # Requirement i accepts call j when table[i][j]: calls `t` with k=j, requirements any_of k.
    calls = [call("t", k=j) for j in range(4)]
    reqs = [
        req(
            {
                "name": "t",
                "arguments": {
                    "k": {"match": "any_of", "value": [j for j, ok in enumerate(row) if ok]}
                },
            }
        )
        for row in table
    ]
    expected = _kuhn([[j for j, ok in enumerate(row) if ok] for row in table])
    result = match_required(reqs, calls)
    assert list(result.matched.items()) == list(expected.items())
    assert result.unmatched == [r for i, r in enumerate(reqs) if i not in expected]
