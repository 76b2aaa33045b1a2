"""The scripted offline client: rules from a file or a function, first match wins, deterministic."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from casework.errors import InputError, InputErrors
from casework.llm import Message, ScriptedProvider
from casework.llm.base import Params
from casework.llm.client import Client
from casework.llm.scripted import ScriptRule, load_script, render_prompt


class Answer(BaseModel):
    answer: str


def write_rules(path: Path, rules: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rules), encoding="utf-8")
    return path


def test_first_matching_rule_answers(tmp_path: Path) -> None:
    rules = load_script(
        write_rules(
            tmp_path / "r.jsonl",
            [
                {"when": ["refund", "ORD-1"], "reply": "specific"},
                {"regex": r"ORD-\d+", "reply": {"answer": "json"}},
                {"reply": "default"},
            ],
        )
    )
    provider = ScriptedProvider(rules, source="r.jsonl")

    def ask(text: str) -> str:
        return provider.send([Message("user", text)], Params()).text

    assert ask("a refund for ORD-1 please") == "specific"
    assert ask("status of ORD-22") == '{"answer": "json"}'
    assert ask("hello") == "default"


def test_rules_see_every_message_as_role_and_content() -> None:
    messages = [Message("system", "S"), Message("user", "U")]
    assert render_prompt(messages) == "system: S\nuser: U"
    rule = ScriptRule(when="system: S\nuser: U", reply="x")
    assert rule.matches(render_prompt(messages))


def test_no_match_is_a_located_error() -> None:
    provider = ScriptedProvider([ScriptRule(when="refund", reply="x")], source="llm/r.jsonl")

    with pytest.raises(InputError) as info:
        provider.send([Message("user", "where is my parcel?")], Params())

    assert str(info.value) == (
        "llm/r.jsonl: no scripted rule matches the prompt; add a line whose 'when' text the "
        "prompt contains. Got 'where is my parcel?'."
    )


def test_bad_lines_of_a_script_are_all_reported(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text(
        '{"when": "a", "reply": "x"}\n{"when": "b"}\n{"regex": "(", "reply": 1}\n{"wen": 1, "reply": 2}\n',
        encoding="utf-8",
    )

    with pytest.raises(InputErrors) as info:
        load_script(path, shown="r.jsonl")

    assert str(info.value).splitlines() == [
        "r.jsonl:2: reply: field required.",
        "r.jsonl:3: regex: invalid regular expression: missing ), unterminated subpattern at "
        "position 0. Got '('.",
        "r.jsonl:4: wen: unknown field. Got 1.",
    ]


def test_a_function_can_script_replies() -> None:
    def fn(messages: list[Message]) -> Any:
        return {"answer": messages[-1].content[::-1]}

    client = Client(ScriptedProvider(fn=fn), provider_name="scripted")

    assert client.structured([Message("user", "abc")], Answer) == Answer(answer="cba")


def test_scripted_client_is_deterministic_and_reports_no_tokens(tmp_path: Path) -> None:
    rules = [ScriptRule(when="hi", reply="hello")]
    replies = []
    for _ in range(2):
        client = Client(ScriptedProvider(rules), provider_name="scripted", role="judge")
        replies.append(client.complete([Message("user", "hi")]).text)
        assert client.ledger.summary_lines() == [
            "judge (scripted): 1 request, 0 from cache, tokens not reported by the provider"
        ]
    assert replies == ["hello", "hello"]


def test_repair_round_can_be_scripted(tmp_path: Path) -> None:
    rules = [
        ScriptRule(when="Your reply is not JSON", reply={"answer": "fixed"}),
        ScriptRule(reply="not json at all"),
    ]
    client = Client(ScriptedProvider(rules), provider_name="scripted")

    assert client.structured([Message("user", "q")], Answer) == Answer(answer="fixed")
    assert client.ledger.tallies()[0].requests == 2
