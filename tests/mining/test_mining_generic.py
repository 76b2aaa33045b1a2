"""The generic JSONL/JSON trace format, `--map`, and located errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from casework.errors import InputError, InputErrors, UsageError
from casework.mining.generic import parse_mapping, read_generic

NATURAL: dict[str, Any] = {
    "session_id": "s-1",
    "customer": {"name": "Ada Fakename", "email": "ada@example.org"},
    "messages": [
        {"role": "user", "content": "Refund my kettle please"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "c1", "name": "get_order", "arguments": {"order_id": "A1"}}],
        },
        {
            "role": "tool",
            "tool_call_id": "c1",
            "name": "get_order",
            "content": '{"status": "delivered"}',
        },
        {"role": "assistant", "content": "Done."},
    ],
    "feedback": "thumbs_down",
    "escalated": False,
    "fixtures": [{"tool": "issue_refund", "response": {"ok": True}}],
    "state": {"orders": {"A1": {"status": "delivered"}}},
}


def _jsonl(path: Path, *records: Any) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records),
        encoding="utf-8",
    )
    return path


def test_natural_shape_imports_without_mapping(tmp_path: Path) -> None:
    [conv] = read_generic([_jsonl(tmp_path / "t.jsonl", NATURAL)], parse_mapping([]))
    assert conv.session_id == "s-1" and conv.origin.endswith("t.jsonl:1")
    assert [m.role for m in conv.messages] == ["user", "assistant", "tool", "assistant"]
    [call] = conv.tool_calls()
    assert (call.name, call.arguments, call.result) == (
        "get_order",
        {"order_id": "A1"},
        {"status": "delivered"},
    )
    assert conv.feedback == ("thumbs_down",)
    assert conv.fixtures == ({"tool": "issue_refund", "response": {"ok": True}},)
    assert conv.state == {"orders": {"A1": {"status": "delivered"}}}
    assert conv.metadata["customer"] == {"name": "Ada Fakename", "email": "ada@example.org"}
    assert "messages" not in conv.metadata


def test_openai_style_tool_calls_and_content_parts(tmp_path: Path) -> None:
    record = {
        "session_id": 7,
        "messages": [
            {
                "role": "human",
                "content": [{"type": "text", "text": "hello"}, {"type": "text", "text": "there"}],
            },
            {
                "role": "ai",
                "content": None,
                "tool_calls": [
                    {
                        "id": "x",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"q": 1}'},
                    }
                ],
            },
        ],
    }
    [conv] = read_generic([_jsonl(tmp_path / "t.jsonl", record)], parse_mapping([]))
    assert conv.session_id == "7"
    assert conv.messages[0].content == "hello\nthere"
    assert conv.messages[1].tool_calls[0].arguments == {"q": 1}


def test_map_reads_logs_shaped_differently(tmp_path: Path) -> None:
    record = {
        "meta": {"session_id": "abc", "intent": "refunds", "rating": -1},
        "conversation": [
            {"speaker": "customer", "text": "hi"},
            {"speaker": "bot", "text": "hello"},
        ],
    }
    fields = parse_mapping(
        [
            "conversation=conversation",
            "session=meta.session_id",
            "slice=meta.intent",
            "feedback=meta.rating",
            "message.role=speaker",
            "message.content=text",
        ]
    )
    [conv] = read_generic([_jsonl(tmp_path / "t.jsonl", record)], fields)
    assert (conv.session_id, conv.slice, conv.feedback) == ("abc", "refunds", (-1,))
    assert [(m.role, m.content) for m in conv.messages] == [("user", "hi"), ("assistant", "hello")]


def test_json_files_hold_one_a_list_or_conversations(tmp_path: Path) -> None:
    one = tmp_path / "one.json"
    one.write_text(json.dumps(NATURAL), encoding="utf-8")
    many = tmp_path / "many.json"
    many.write_text(
        json.dumps({"conversations": [NATURAL, {**NATURAL, "session_id": "s-2"}]}), encoding="utf-8"
    )
    convs = read_generic([one, many], parse_mapping([]))
    assert [c.session_id for c in convs] == ["s-1", "s-1", "s-2"]
    assert convs[2].origin.endswith("many.json#conversations.1")


def test_every_bad_record_is_reported_with_its_place(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "t.jsonl",
        {"messages": []},
        "{not json",
        {"session_id": "s", "messages": [{"role": "narrator", "content": "x"}]},
        {"session_id": "s", "messages": {"role": "user"}},
        {"session_id": "s", "messages": [], "escalated": "maybe"},
        {"session_id": "s", "messages": [{"role": "assistant", "tool_calls": [{"arguments": {}}]}]},
    )
    with pytest.raises(InputErrors) as exc:
        read_generic([path], parse_mapping([]), {path: "t.jsonl"})
    assert str(exc.value).splitlines() == [
        "t.jsonl:1: session_id: field required (the production session id).",
        "t.jsonl:2: invalid JSON: Expecting property name enclosed in double quotes at column 2. Got '{not json'.",
        "t.jsonl:3: messages.0.role: role must be user, assistant, system or tool (or human, customer, ai, bot, "
        "agent, model, developer, function). Got 'narrator'.",
        't.jsonl:4: messages: must be a list of messages. Got {"role": "user"}.',
        "t.jsonl:5: escalated: must be true or false. Got 'maybe'.",
        "t.jsonl:6: messages.0.tool_calls.0.name: tool call needs a name.",
    ]


def test_single_problem_is_an_input_error(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "t.jsonl", {"session_id": "s"})
    with pytest.raises(InputError) as exc:
        read_generic([path], parse_mapping([]), {path: "t.jsonl"})
    assert str(exc.value) == "t.jsonl:1: messages: field required (the list of messages)."


def test_bad_map_options_are_usage_errors() -> None:
    with pytest.raises(UsageError) as exc:
        parse_mapping(["session_id"])
    assert str(exc.value) == "map: 'session_id': expected DST=SRC.PATH (e.g. session_id=meta.sid)."
    with pytest.raises(UsageError) as exc:
        parse_mapping(["colour=x"])
    assert str(exc.value).startswith(
        "map: 'colour=x': unknown destination 'colour'; use one of: session_id, messages,"
    )
