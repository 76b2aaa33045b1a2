"""How many times the scrubber's own compiled patterns are called per message.

Each call of a compiled pattern (a search, a scan, a substitution) is a pass of the regex engine
and a call out of Python, the unit most of scrubbing's time is made of on short messages (see the
scrub section of docs/benchmarks.md). A spy wraps every pattern the privacy modules hold and
counts the calls on the seeded planted-PII corpus, each message read cold (the per-text caches
emptied), so a change that adds passes shows here, where a timing would drown in the machine's
load. What the detectors find is pinned elsewhere (test_privacy_detections_sample.py).
"""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

import pytest

from casework.privacy import detection, detectors, ids, names, pseudonyms, scrub
from casework.privacy.detectors import id_pattern_detectors
from casework.privacy.keys import PseudonymKey
from casework.privacy.pseudonyms import read_phone
from casework.privacy.registry import builtin_detectors
from casework.privacy.scrub import Scrubber
from tests.privacy.planted_pii import ORDER_PATTERN, corpus

KEY = PseudonymKey(b"pattern-pass-test-key-not-secret-0123456", "test")
_METHODS = frozenset(
    {"search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split"}
)


class _Spy:
    """A compiled pattern that counts calls of its matching methods under ``name``."""

    def __init__(self, name: str, pattern: re.Pattern[str], calls: Counter[str]) -> None:
        self._name, self._pattern, self._calls = name, pattern, calls

    def __getattr__(self, attr: str) -> Any:
        method = getattr(self._pattern, attr)
        if attr not in _METHODS:
            return method

        def counted(*args: Any, **kwargs: Any) -> Any:
            self._calls[self._name] += 1
            return method(*args, **kwargs)

        return counted


def _owners() -> Iterator[tuple[str, Any]]:
    modules: tuple[ModuleType, ...] = (detection, detectors, ids, names, pseudonyms, scrub)
    for module in modules:
        yield module.__name__, module
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == module.__name__:
                yield value.__qualname__, value


@pytest.fixture
def pattern_calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every compiled pattern of the privacy modules replaced by a counting spy."""
    calls: Counter[str] = Counter()
    for owner_name, owner in _owners():
        for attr, value in list(vars(owner).items()):
            if isinstance(value, re.Pattern):
                monkeypatch.setattr(owner, attr, _Spy(f"{owner_name}.{attr}", value, calls))
            elif (
                isinstance(value, dict)
                and value
                and all(isinstance(v, re.Pattern) for v in value.values())
            ):
                spied = {k: _Spy(f"{owner_name}.{attr}[{k}]", v, calls) for k, v in value.items()}
                monkeypatch.setattr(owner, attr, spied)
    # The national id forms hold their patterns in frozen rules, listed twice.
    rules = tuple(
        dataclasses.replace(rule, pattern=_Spy(f"ids rule {i}", rule.pattern, calls))  # type: ignore[arg-type]
        for i, rule in enumerate(ids._ID_RULES)
    )
    monkeypatch.setattr(ids, "_ID_RULES", rules)
    monkeypatch.setattr(ids, "_FORMS", [rule for rule in rules if rule.cue is None])
    return calls


def _cold(scrub_text: Callable[[str], str], text: str) -> None:
    detection.text_scan.cache_clear()
    detectors._without_figures.cache_clear()
    read_phone.cache_clear()
    scrub_text(text)


def test_the_spy_sees_every_detectors_pattern(pattern_calls: Counter[str]) -> None:
    scrubber = Scrubber(KEY, [*id_pattern_detectors(ORDER_PATTERN), *builtin_detectors()])
    _cold(
        scrubber.text,
        "I'm Ada, call 415 555 0123 or +44 20 7946 0958, card 4111 1111 1111 1111 exp 03/27, "
        "IBAN GB82 WEST 1234 5698 7654 32, zip 94105, SSN 742-38-1981, 10.0.0.7, ORD-123456, "
        "ada@example.com, https://example.com/users/ada, 12 Nowhere Lane",
    )
    seen = {name.split(".")[0].split(" ")[0] for name in pattern_calls}
    # Patterns of every detector module and of the scan were called through the spy.
    assert {"casework", "PhoneDetector", "CardDetector", "IbanDetector", "IpDetector"} <= seen
    assert any(name.startswith("ids rule") for name in pattern_calls)


def test_messages_are_read_in_few_pattern_passes(pattern_calls: Counter[str]) -> None:
    scrubber = Scrubber(KEY, [*id_pattern_detectors(ORDER_PATTERN), *builtin_detectors()])
    messages = [m.text for m in corpus(400, seed=31)]
    for text in messages:
        _cold(scrubber.text, text)
    per_message = sum(pattern_calls.values()) / len(messages)
    # The sample is seeded, so the count is exact: 11.43 once phone candidates were checked from
    # their digit groups (one pass finds the groups; length, leading digits, lone digits and
    # North American grouping are read from them), IPv4 was looked for only in texts holding
    # three dots, and the scan counted a run's digits without a substitution when it holds
    # nothing else; 12.63 before. (The cheap searches that now stand before the street-type
    # pass, the figure blanking and, in texts outside ASCII, the cue patterns add a call where
    # they let the dear one through.)
    assert per_message <= 11.5, pattern_calls.most_common(12)


def test_a_phone_candidate_is_checked_without_searching_it_again(
    pattern_calls: Counter[str],
) -> None:
    scrubber = Scrubber(KEY)
    _cold(scrubber.text, "Please call me back on 415 555 0123 or 020 7946 0958 today")
    phone = {k: v for k, v in pattern_calls.items() if k.startswith("PhoneDetector")}
    # One scan for candidates and one pass over each candidate's digit groups: nothing more.
    assert phone == {"PhoneDetector._re": 1, "PhoneDetector._group": 2}


@pytest.mark.parametrize(
    ("text", "figures"),
    [
        ("ORD-123456 was charged twice, ref 99871234", False),
        ("my card 4111 1111 1111 1111 was declined", False),
        # A `-` between digits, but no date's two separators around one or two digits (nor a
        # `-` before `19` or `20`): the date substitution is not run for a phone number.
        ("call me on +44-7400-129986 after 5 please", False),
        ("call me on +44-7400-129986 after 2024-05-01 please", True),
    ],
)
def test_dear_passes_wait_for_a_cheap_digit_anchored_search(
    pattern_calls: Counter[str], text: str, figures: bool
) -> None:
    scrubber = Scrubber(KEY)
    _cold(scrubber.text, text)
    # No number here is followed by a capitalised word: the street-type alternation is not run.
    assert pattern_calls["StreetAddressDetector._type"] == 0
    # Dates put one or two digits between two of `-`, `/`, `.` (or a `-` before a year's `19` or
    # `20`): without that, the substitution that blanks them is not run.
    assert pattern_calls["casework.privacy.detectors._DATE"] == (1 if figures else 0)


def test_a_curly_apostrophe_does_not_send_a_text_through_every_cue_pattern(
    pattern_calls: Counter[str],
) -> None:
    scrubber = Scrubber(KEY)
    text = "We’ve paid 49.99 for order 12345678 — it hasn’t arrived"
    _cold(scrubber.text, text)
    # Outside ASCII, but lower-casing it mirrors the engine's case folding, and it holds no word
    # of an id, postcode or expiry cue: their case-insensitive patterns are not run.
    for cue in ("_ID_CUES", "_POST_CUES", "_EXPIRY"):
        assert pattern_calls[f"casework.privacy.ids.{cue}"] == 0, cue
    # The same text with a dotless ı still is (the engine reads `ı` as `i`).
    _cold(scrubber.text, text.replace("paid", "paıd"))
    assert pattern_calls["casework.privacy.ids._POST_CUES"] == 1
