"""Rule-based transforms: deterministic, identifiers untouched where the label must hold."""

from __future__ import annotations

from typing import Any

from casework.schema import Case, Situation
from casework.synth import TransformContext
from casework.synth.identifiers import DropIdentifier, facts_of, find_identifiers
from casework.synth.injection import PLANTED_INSTRUCTIONS, InjectedToolText
from casework.synth.rules import InformalRegister, Typos
from casework.synth.transforms import Skip
from tests.synth.conftest import seed_case

CTX = TransformContext(seed=0)


def case(text: str, **overrides: Any) -> Case:
    body = seed_case(1, **overrides)
    body["situation"]["turns"] = [{"role": "user", "content": text}]
    return Case.model_validate(body)


def situations(items: list[Situation | Skip]) -> list[Situation]:
    assert all(isinstance(i, Situation) for i in items), items
    return [i for i in items if isinstance(i, Situation)]


def test_identifiers_and_facts() -> None:
    text = "Order ORD-104233, email jane.doe@example.com, tracking 1Z999AA10123456784, #55512."
    assert find_identifiers(text) == [
        "ORD-104233",
        "jane.doe@example.com",
        "1Z999AA10123456784",
        "#55512",
    ]
    assert find_identifiers("ref AB/77", {"ref": r"AB/\d+"}) == ["AB/77"]
    assert facts_of("I paid 45.20 for 3 mugs, order ORD-1234") == ["ORD-1234", "45.20", "3"]


def test_typos_are_deterministic_and_spare_identifiers() -> None:
    seed = case("Hello, I would like a refund for order ORD-1042 because the handle snapped off.")
    first = situations(Typos().make(seed, [1, 2], CTX))
    again = situations(Typos().make(seed, [1, 2], CTX))
    other_seed = situations(Typos().make(seed, [1], TransformContext(seed=1)))

    assert [s.user_text() for s in first] == [s.user_text() for s in again]
    assert first[0].user_text() != first[1].user_text()
    assert other_seed[0].user_text() != first[0].user_text()
    for s in first:
        assert "ORD-1042" in s.user_text()
        assert s.user_text() != seed.situation.user_text()
        assert s.fixtures == seed.situation.fixtures


def test_typos_skip_when_there_is_nothing_to_misspell() -> None:
    assert Typos().make(case("ORD-1 ok"), [1], CTX) == [
        Skip("no word of four letters or more to misspell")
    ]


def test_informal_register() -> None:
    seed = case("Hello, I would like a refund for order ORD-1042. I cannot use the mug.")
    (variant,) = situations(InformalRegister().make(seed, [1], CTX))
    text = variant.user_text()
    assert "ORD-1042" in text
    assert "I would like" not in text and "cannot" not in text
    assert not text.endswith(".")
    assert text == text[0].lower() + text[1:]


def test_informal_register_does_not_fake_a_change() -> None:
    assert InformalRegister().make(case("refund ORD-1 now"), [1], CTX) == [
        Skip("no formal phrasing to make informal")
    ]


def test_drop_identifier_variants_drop_one_identifier_each() -> None:
    seed = case("Refund order ORD-1042 please. My email is jane@example.com.")
    first, second, third = DropIdentifier().make(seed, [1, 2, 3], CTX)
    assert isinstance(first, Situation) and isinstance(second, Situation)
    assert first.user_text() == "Refund my order please. My email is jane@example.com."
    assert second.user_text() == "Refund order ORD-1042 please."
    assert third == Skip("only 2 identifier(s) in the user's messages to drop")


def test_drop_identifier_refuses_when_the_agent_already_said_it() -> None:
    seed = case("Where is ORD-1042?")
    body = seed.model_dump(mode="json", by_alias=True)
    body["situation"]["turns"] = [
        {"role": "user", "content": "Where is my parcel?"},
        {"role": "assistant", "content": "Is it ORD-1042?"},
        {"role": "user", "content": "Yes, ORD-1042."},
    ]
    result = DropIdentifier().make(Case.model_validate(body), [1], CTX)
    assert result == [Skip("identifier 'ORD-1042' also appears in the conversation's other turns")]


def test_injected_tool_text_plants_and_records_an_injection() -> None:
    seed = case("Refund ORD-1001 please.")
    variants = situations(InjectedToolText().make(seed, [1, 2], CTX))
    for v in variants:
        response = v.fixtures[0].response
        assert set(response) == {"order_id", "status", "total", "note"}
        assert response["note"] in [p.format(tool="issue_refund") for p in PLANTED_INSTRUCTIONS]
        assert v.injected[-1].kind == "prompt_injection"
        assert v.injected[-1].location == "tool:get_order"
        assert v.injected[-1].text == response["note"]
        assert v.user_text() == seed.situation.user_text()
    assert seed.situation.fixtures[0].response == {
        "order_id": "ORD-1001",
        "status": "delivered",
        "total": 24.5,
    }


def test_injected_tool_text_needs_a_fixture() -> None:
    seed = case("Refund ORD-1 please.")
    bare = Case.model_validate(
        {
            **seed.model_dump(mode="json", by_alias=True),
            "situation": {"goal": "g", "turns": [{"role": "user", "content": "x"}]},
        }
    )
    assert InjectedToolText().make(bare, [1], CTX) == [
        Skip("no tool fixture with a response to plant text in")
    ]


def test_pseudonyms_are_identifiers_and_task_identifiers_drop_first() -> None:
    text = (
        "Hi, I want to return the mugs (order_5191d8ede5cc) because they chipped. "
        "Thanks, name_7c66f6e7058f"
    )
    assert find_identifiers(text) == ["order_5191d8ede5cc", "name_7c66f6e7058f"]
    seed = case(text)
    first, second = situations(DropIdentifier().make(seed, [1, 2], CTX))
    assert first.user_text() == (
        "Hi, I want to return the mugs because they chipped. Thanks, name_7c66f6e7058f"
    )
    assert "name_7c66f6e7058f" not in second.user_text()
    assert "order_5191d8ede5cc" in second.user_text()
    (typo,) = situations(Typos().make(seed, [1], CTX))
    assert "order_5191d8ede5cc" in typo.user_text() and "name_7c66f6e7058f" in typo.user_text()


def test_drop_identifier_phrasing() -> None:
    cases = {
        "Where is my order ORD-1042? ORD-1042 was due Monday.": "Where is my order? It was due Monday.",
        "The mug broke. My order number is ORD-1042.": "The mug broke.",
        "Refund for order #10423 please": "Refund for my order please",
        "refund ORD-1042 now": "refund it now",
    }
    for text, expected in cases.items():
        (variant,) = situations(DropIdentifier().make(case(text), [1], CTX))
        assert variant.user_text() == expected
    assert DropIdentifier().make(case("ORD-1042"), [1], CTX) == [
        Skip("a user message holds nothing but 'ORD-1042'")
    ]


def test_planted_instruction_names_a_tool_that_acts() -> None:
    seed = case("Refund ORD-1001 please.")
    body = seed.model_dump(mode="json", by_alias=True)
    body["label"]["required_tools"] = ["check_refund_policy", "get_order", "issue_refund"]
    seed = Case.model_validate(body)
    texts = {
        v.injected[-1].text
        for v in situations(InjectedToolText().make(seed, list(range(1, 9)), CTX))
    }
    assert any("issue_refund" in t for t in texts)
    assert not any("check_refund_policy" in t for t in texts)
