from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import pytest

from casework.runner import ToolError, Tools
from casework.runner.fixtures import ToolSession, substitute_args
from casework.schema import ToolFixture


def _session() -> ToolSession:
    fixtures = [
        ToolFixture.model_validate({"tool": "get_order", "response": {"generic": True}}),
        ToolFixture.model_validate(
            {"tool": "get_order", "match": {"order_id": "o1"}, "response": {"id": "o1"}}
        ),
        ToolFixture.model_validate(
            {
                "tool": "issue_refund",
                "match": {"order_id": "o1"},
                "response": {"refunded": "${args.amount}"},
                "effects": [
                    {"op": "test", "path": "/orders/o1/status", "value": "delivered"},
                    {"op": "replace", "path": "/orders/o1/refunded", "value": "${args.amount}"},
                ],
            }
        ),
        ToolFixture.model_validate(
            {
                "tool": "issue_refund",
                "match": {"order_id": "o2"},
                "effects": [{"op": "test", "path": "/orders/o2/status", "value": "delivered"}],
            }
        ),
        ToolFixture.model_validate({"tool": "cancel", "error": "cancellation service down"}),
    ]
    state = {
        "orders": {"o1": {"status": "delivered", "refunded": 0}, "o2": {"status": "processing"}}
    }
    return ToolSession(fixtures, state)


def test_most_specific_fixture_answers() -> None:
    s = _session()
    assert s.call("get_order", {"order_id": "o1"}).result == {"id": "o1"}
    assert s.call("get_order", {"order_id": "zz"}).result == {"generic": True}


def test_effects_write_a_copy_of_the_state_with_argument_substitution() -> None:
    original = {"orders": {"o1": {"status": "delivered", "refunded": 0}}}
    fx = [
        ToolFixture.model_validate(
            {
                "tool": "issue_refund",
                "effects": [
                    {"op": "replace", "path": "/orders/o1/refunded", "value": "${args.amount}"}
                ],
            }
        )
    ]
    s = ToolSession(fx, original)
    reply = s.call("issue_refund", {"order_id": "o1", "amount": 12.5})
    assert reply.error is None
    assert s.state["orders"]["o1"]["refunded"] == 12.5
    assert original["orders"]["o1"]["refunded"] == 0
    assert s.initial_state["orders"]["o1"]["refunded"] == 0
    assert s.calls[0].effects_applied == 1


def test_response_substitution_and_failed_precondition() -> None:
    s = _session()
    assert s.call("issue_refund", {"order_id": "o1", "amount": 5}).result == {"refunded": 5}
    bad = s.call("issue_refund", {"order_id": "o2", "amount": 5})
    assert bad.error is not None and bad.error.startswith(
        "tool 'issue_refund' could not apply its effect"
    )
    assert "refunded" not in s.state["orders"]["o2"]


def test_calls_without_a_fixture_get_a_clear_error_and_are_recorded() -> None:
    s = _session()
    assert (
        s.call("delete_everything", {"x": 1}).error
        == "no fixture for tool 'delete_everything' in this case"
    )
    assert (
        s.call("issue_refund", {"order_id": "o7"}).error
        == 'no fixture of tool \'issue_refund\' matches arguments {"order_id": "o7"}'
    )
    assert s.call("cancel").error == "cancellation service down"
    assert (
        s.call("issue_refund", {"order_id": "o1"}).error
        == "tool 'issue_refund' needs argument 'amount'"
    )
    assert [c.name for c in s.calls] == [
        "delete_everything",
        "issue_refund",
        "cancel",
        "issue_refund",
    ]
    assert all(c.error for c in s.calls)


def test_tools_facade_raises_tool_errors() -> None:
    tools = Tools(_session())
    assert tools.call("get_order", order_id="o1") == {"id": "o1"}
    with pytest.raises(ToolError, match="no fixture for tool 'nope'"):
        tools.call("nope")
    assert tools.try_call("nope").error is not None


def test_substitution_only_replaces_whole_placeholders() -> None:
    assert substitute_args({"a": ["${args.x}", "x=${args.x}"]}, {"x": 3}) == {
        "a": [3, "x=${args.x}"]
    }
    with pytest.raises(KeyError):
        substitute_args("${args.y}", {})


def _effect_reply(
    state: dict[str, Any], effects: list[dict[str, Any]], args: dict[str, Any]
) -> tuple[str | None, dict[str, Any]]:
    fixture = ToolFixture.model_validate({"tool": "t", "effects": effects})
    session = ToolSession([fixture], state)
    reply = session.call("t", args)
    return reply.error, session.state


class _Box:
    """Not JSON: jsonpatch deep-copies it into the state."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Box) and other.n == self.n

    __hash__ = None  # type: ignore[assignment]


@pytest.mark.parametrize(
    ("effects", "args"),
    [
        ([{"op": "add", "path": "/ledger/-", "value": {"a": "${args.x}"}}], {"x": [1, {"b": 2}]}),
        ([{"op": "add", "path": "/orders/o1/note", "value": "${args.x}"}], {"x": "late"}),
        ([{"op": "add", "path": "/orders/o1", "value": {"status": "new"}}], {}),
        ([{"op": "add", "path": "/ledger/0", "value": 5}], {}),  # a list index: jsonpatch's
        ([{"op": "add", "path": "/ledger/7", "value": 5}], {}),  # out of range: its error
        ([{"op": "add", "path": "/missing/x", "value": 5}], {}),  # no member: its error
        ([{"op": "add", "path": "/orders/o1/status/x", "value": 5}], {}),  # into a string
        ([{"op": "add", "path": "/count/-", "value": 5}], {}),  # '-' of a number
        ([{"op": "add", "path": "/ledger/-", "value": "${args.x}"}], {"x": _Box(3)}),
        ([{"op": "add", "path": "/ledger/-", "value": "${args.x}"}], {"x": {1: "int key"}}),
        ([{"op": "add", "path": "/a~1b", "value": True}], {}),  # an escaped member name
        (
            [
                {"op": "add", "path": "/ledger/-", "value": 1},
                {"op": "test", "path": "/count", "value": 99},  # fails: nothing is written
            ],
            {},
        ),
        (
            [
                {"op": "add", "path": "/ledger/-", "value": 1},
                {"op": "add", "path": "/x~2", "value": 2},  # not a JSON Pointer: nothing written
            ],
            {},
        ),
    ],
)
def test_effects_write_what_jsonpatch_writes(
    effects: list[dict[str, Any]], args: dict[str, Any]
) -> None:
    state = {"ledger": [0], "orders": {"o1": {"status": "open"}}, "count": 3}
    error, after = _effect_reply(copy.deepcopy(state), effects, args)
    ops = [{**e, "value": substitute_args(e["value"], args)} for e in effects]
    ops = [{**o, "path": substitute_args(o["path"], args)} for o in ops]
    try:
        expected = jsonpatch.apply_patch(copy.deepcopy(state), ops)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException) as exc:
        assert error == f"tool 't' could not apply its effect: {exc}"
        assert after == state
    else:
        assert error is None
        assert after == expected


def test_an_effect_writes_a_copy_of_its_value_and_the_arguments() -> None:
    args = {"x": {"deep": [1]}}
    fixture = ToolFixture.model_validate(
        {"tool": "t", "effects": [{"op": "add", "path": "/a", "value": {"v": "${args.x}"}}]}
    )
    session = ToolSession([fixture], {})
    session.call("t", args)
    session.call("t", args)
    args["x"]["deep"].append(2)
    assert session.state == {"a": {"v": {"deep": [1]}}}
    assert fixture.effects[0].value == {"v": "${args.x}"}
