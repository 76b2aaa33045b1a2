"""Parsing replies as JSON for a schema, and the repair conversation."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from casework.llm import Message
from casework.llm.structured import ReplyProblem, parse_reply, repair_messages, schema_messages


class Item(BaseModel):
    name: str
    n: int


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "a", "n": 1}',
        '  {"name": "a", "n": 1}\n',
        '```json\n{"name": "a", "n": 1}\n```',
        '```\n{"name": "a", "n": 1}\n```',
        'Here it is: {"name": "a", "n": 1}',
    ],
)
def test_accepted_reply_shapes(text: str) -> None:
    assert parse_reply(text, Item) == Item(name="a", n=1)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"name": "a", "n": ', "is not JSON (Expecting value at line 1 column 19)"),
        ("no json here", "is not JSON (Expecting value at line 1 column 1)"),
        ('{"name": "a", "n": 1} and more', "holds text after the JSON value, from column 22"),
        ('{"name": "a"}', "does not match the schema (n: Field required)"),
        (
            '{"name": 1, "n": "x"}',
            "does not match the schema (name: Input should be a valid string; n: Input should "
            "be a valid integer, unable to parse string as an integer)",
        ),
    ],
)
def test_rejected_replies_say_why(text: str, problem: str) -> None:
    with pytest.raises(ReplyProblem) as info:
        parse_reply(text, Item)
    assert str(info.value) == problem


def test_schema_joins_an_existing_system_message() -> None:
    out = schema_messages([Message("system", "Be brief."), Message("user", "q")], Item)
    assert len(out) == 2
    assert out[0].content.startswith("Be brief.\n\nReply with one JSON object and nothing else")
    assert '"required": ["name", "n"]' in out[0].content


def test_schema_adds_a_system_message_when_there_is_none() -> None:
    out = schema_messages([Message("user", "q")], Item)
    assert [m.role for m in out] == ["system", "user"]


def test_repair_sends_back_the_reply_and_the_problem() -> None:
    sent = [Message("user", "q")]
    out = repair_messages(sent, "bad", ReplyProblem("is not JSON (x)"))
    assert out[:2] == [Message("user", "q"), Message("assistant", "bad")]
    assert out[2].content.startswith("Your reply is not JSON (x). Reply again")
