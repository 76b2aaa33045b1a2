from __future__ import annotations

from pathlib import Path

import pytest

from casework.dataset import ToolDecl, load_renames, migrate_cases
from casework.errors import InputError, InputErrors
from casework.schema import Case
from tests.factories import case_dict

TOOLS = {
    "get_order": ToolDecl("get_order", parameters={"properties": {"order_id": {}}}),
    "issue_refund": ToolDecl(
        "issue_refund", parameters={"properties": {"order_id": {}, "amount": {}}}
    ),
}


def _renames(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "renames.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_rename_rewrites_label_fixtures_conversation_and_arguments(tmp_path: Path) -> None:
    case = Case.model_validate(
        case_dict(
            "a",
            situation={
                "goal": "g",
                "turns": [
                    {"role": "user", "content": "hi"},
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {"name": "lookup_order", "arguments": {"order_number": "1"}}
                        ],
                    },
                ],
                "fixtures": [
                    {
                        "tool": "lookup_order",
                        "match": {"order_number": "1"},
                        "response": {"ok": True},
                    }
                ],
                "injected": [
                    {"kind": "prompt_injection", "location": "tool:lookup_order", "text": "ignore"}
                ],
            },
            label={
                "outcome": "resolve",
                "required_tools": [
                    {"name": "lookup_order", "arguments": {"order_number": {"value": "1"}}}
                ],
                "forbidden_tools": ["refund_order"],
            },
        )
    )
    renames = load_renames(
        _renames(
            tmp_path,
            '[tools]\nlookup_order = "get_order"\nrefund_order = "issue_refund"\n\n[arguments.get_order]\norder_number = "order_id"\n',
        ),
        "renames.toml",
        TOOLS,
    )
    result = migrate_cases([case], renames)
    new = result.cases[0]
    assert new.tool_names() == {"get_order", "issue_refund"}
    assert new.situation.fixtures[0].match == {"order_id": "1"}
    assert new.situation.turns[1].tool_calls[0].arguments == {"order_id": "1"}
    assert new.situation.injected[0].location == "tool:get_order"
    assert new.label is not None and "order_id" in new.label.required_tools[0].arguments
    assert result.changelog() == [
        "renamed in 1 case",
        "lookup_order->get_order: 4 places",
        "refund_order->issue_refund: 1 place",
        "get_order.order_number->order_id: 3 places",
    ]


def test_rename_to_undeclared_tool_is_refused_with_its_line(tmp_path: Path) -> None:
    path = _renames(tmp_path, '[tools]\nlookup_order = "get_order"\nrefund_order = "refund"\n')
    with pytest.raises(InputError) as info:
        load_renames(path, "renames.toml", TOOLS)
    assert (
        str(info.value)
        == "renames.toml:3: tools.refund_order: rename target is not a declared tool. Got 'refund'."
    )


def test_argument_rename_to_undeclared_argument(tmp_path: Path) -> None:
    path = _renames(
        tmp_path, '[arguments.get_order]\norder_number = "id"\n\n[arguments.nope]\nx = "y"\n'
    )
    with pytest.raises(InputErrors) as info:
        load_renames(path, "renames.toml", TOOLS)
    assert str(info.value).splitlines() == [
        "renames.toml:2: arguments.get_order.order_number: rename target is not an argument of 'get_order'. Got 'id'.",
        "renames.toml:4: arguments.nope: not a declared tool. Got 'nope'.",
    ]


def test_unknown_key_in_rename_map(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        load_renames(_renames(tmp_path, '[tool]\na = "b"\n'), "renames.toml", TOOLS)
    assert str(info.value) == 'renames.toml: tool: unknown field. Got {"a": "b"}.'
