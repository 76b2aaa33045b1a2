from __future__ import annotations

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
