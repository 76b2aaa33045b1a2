"""The planted-PII corpus: recall per structured kind, no known value leaking, no false hits."""

from __future__ import annotations

import random
import re
from collections import Counter
from datetime import UTC, datetime

from casework.mining import RawConversation, draft_case
from casework.mining.conversation import RawMessage, RawToolCall
from casework.mining.drafts import DraftOptions
from casework.privacy import (
    PseudonymKey,
    Scrubber,
    builtin_detectors,
    id_pattern_detectors,
    pseudonym,
)
from tests.privacy.planted_pii import (
    CLEAN,
    ORDER_PATTERN,
    STRUCTURED_KINDS,
    corpus,
    planted_message,
)

KEY = PseudonymKey(b"planted-corpus-test-key-0123456789", "test")


def _scrubber() -> Scrubber:
    return Scrubber(KEY, [*id_pattern_detectors(ORDER_PATTERN), *builtin_detectors()])


def test_recall_per_structured_kind_is_at_least_99_percent() -> None:
    scrubber = _scrubber()
    total: Counter[str] = Counter()
    found: Counter[str] = Counter()
    for message in corpus(3500, seed=11, clean_share=0.0):
        out = scrubber.text(message.text)
        for item in message.planted:
            total[item.kind] += 1
            expected = pseudonym(KEY.secret, item.kind, item.value)
            if expected in out and item.core not in out:
                found[item.kind] += 1
    assert set(total) == set(STRUCTURED_KINDS)
    for kind in STRUCTURED_KINDS:
        assert total[kind] >= 400
        assert found[kind] / total[kind] >= 0.99, (kind, found[kind], total[kind])


def test_clean_messages_and_pseudonyms_are_left_alone() -> None:
    scrubber = _scrubber()
    for text in CLEAN:
        assert scrubber.text(text) == text
    rng = random.Random(3)
    for _ in range(300):
        kind = rng.choice([*STRUCTURED_KINDS, "name", "address", "customer", "account"])
        fake = pseudonym(b"another-key-another-key-another-k", kind, str(rng.random()))
        text = rng.choice(["{p}", "id {p}.", "({p}) and {p}", "{p}, {p}, {p}"]).format(p=fake)
        assert scrubber.text(text) == text


_FIRST = ["Ada", "Bartholomew", "Chioma", "Dagny", "Ezekiel", "Fumiko", "Gunnhild", "Horatio"]
_LAST = ["Fakename", "Placeholder", "Testperson", "Nobodyson", "Samplewoman", "Madeupsky"]
_STREETS = ["Nowhere Lane", "Imaginary Road", "Pretend Court", "Fictional Way"]


def _conversation(rng: random.Random, i: int) -> tuple[RawConversation, list[str]]:
    """A conversation whose customer data lives in fixtures and metadata; the text repeats it."""
    first, last = rng.choice(_FIRST), rng.choice(_LAST)
    name = f"{first} {last}"
    account = f"ACC{rng.randint(10000, 99999)}X"
    address = (
        f"{rng.randint(2, 240)} {rng.choice(_STREETS)}, Testville, ZZ{rng.randint(10, 99)} 9QQ"
    )
    planted = planted_message(rng, rng.choice(STRUCTURED_KINDS))
    user_texts = [
        f"hi it's {rng.choice([name, name.upper(), first.lower(), last])}, account {account.lower()}",
        f"please ship to {address.split(',')[0]} — {planted.text}",
        rng.choice([f"{first}, again: {account}", f"Thanks! {last.upper()} here"]),
    ]
    profile = {"customer": {"name": name, "account_id": account}, "channel": "web"}
    lookup = {"full_name": name, "account_number": account, "address": address}
    messages = (
        RawMessage("user", user_texts[0]),
        RawMessage(
            "assistant",
            "",
            (RawToolCall("lookup_customer", {"account_id": account}, "c1", lookup),),
        ),
        RawMessage("assistant", f"Hello {first}, I found account {account}."),
        RawMessage("user", user_texts[1]),
        RawMessage("assistant", "Noted."),
        RawMessage("user", user_texts[2]),
        RawMessage("assistant", f"Goodbye {name}!"),
    )
    conv = RawConversation(f"sess-{i}", messages, f"planted:{i}", metadata=profile)
    return conv, [
        name,
        first,
        last,
        account,
        address.split(",")[0],
        *(p.text for p in planted.planted),
    ]


def test_no_known_value_leaks_into_a_draft() -> None:
    scrubber = _scrubber()
    rng = random.Random(5)
    options = DraftOptions("refunds", "dev", datetime(2026, 1, 1, tzinfo=UTC), 30)
    leaks = []
    for i in range(300):
        conv, raw_values = _conversation(rng, i)
        case = draft_case(conv, scrubber, options, [])
        assert case is not None
        dumped = case.model_dump_json()
        # whole-word search: a 3-letter name may well occur inside a hex pseudonym
        leaks += [
            v
            for v in raw_values
            if re.search(rf"(?<![0-9A-Za-z]){re.escape(v)}(?![0-9A-Za-z])", dumped, re.I)
        ]
        # the fixture's account pseudonym is the one the conversation mentions
        acc = scrubber.pseudonym("account", raw_values[3])
        assert acc in case.situation.turns[0].content
        assert case.situation.fixtures[0].match == {"account_id": acc}
        assert acc in case.provenance.subjects
    assert leaks == []
