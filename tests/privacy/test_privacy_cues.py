"""Cue-gated detectors: one scan per text decides which detectors run, and never hides a find.

A built-in detector declares a :class:`~casework.privacy.detection.Cue` (the digits or characters
a text must hold for it to find anything); the scrubber calls it only on texts holding that cue.
These tests check that a detector is not called without its cue, and that every detection made
on the seeded corpora (the planted-PII and planted-format generators, Faker's values in 13
locales, Faker's clean sentences) and on random text lies in a text holding its detector's cue —
that is, skipping never loses a detection.
"""

from __future__ import annotations

import random
import re
import string
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from stdnum.iso7064 import mod_97_10

from casework.privacy import PseudonymKey, Scrubber, builtin_detectors, ids, names
from casework.privacy.checksums import IBAN_LENGTHS, iban_valid
from casework.privacy.detection import CASE_FOLDS_TO_ASCII, Cue, Detector, text_scan
from casework.privacy.detectors import CardDetector, IbanDetector, PhoneDetector
from casework.privacy.ids import NationalIdDetector
from tests.privacy.faker_corpus import LOCALES, clean_messages
from tests.privacy.faker_corpus import corpus as faker_corpus
from tests.privacy.planted_formats import GENERATORS, KINDS, RandomPick
from tests.privacy.planted_formats import message as format_message
from tests.privacy.planted_pii import corpus as planted_corpus

KEY = PseudonymKey(b"cue-test-key-not-secret-0123456789abcdef", "test")


def _texts() -> Iterator[str]:
    for message in planted_corpus(600, seed=11):
        yield message.text
    rng = random.Random(11)
    for kind in KINDS:
        for _ in range(60):
            pick = RandomPick(rng)
            yield format_message(pick, GENERATORS[kind](pick))
    for sample in faker_corpus(3, seed=11):
        yield sample.text
    yield from clean_messages(10, seed=11)


def _detectors() -> list[Detector]:
    return builtin_detectors(tuple(dict.fromkeys(LOCALES.values())))


def test_every_detection_lies_in_a_text_holding_its_detectors_cue() -> None:
    detectors = _detectors()
    found = 0
    for text in _texts():
        scan = text_scan(text)
        for detector in detectors:
            cue = getattr(detector, "cue", None)
            hits = list(detector.find(text))
            found += len(hits)
            if hits and isinstance(cue, Cue):
                assert cue.held_by(scan, text), (type(detector).__name__, text)
    assert found > 1000  # the corpora did reach every detector


@settings(max_examples=400, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("0123456789 -./:@()+_AaBbGgXxSsNn\u2013\u00a0%4w")),
        max_size=40,
    )
)
def test_on_random_text_a_detector_without_its_cue_finds_nothing(text: str) -> None:
    scan = text_scan(text)
    for detector in _detectors():
        cue = getattr(detector, "cue", None)
        if isinstance(cue, Cue) and not cue.held_by(scan, text):
            assert list(detector.find(text)) == [], (type(detector).__name__, text)


@pytest.mark.parametrize(
    "text",
    [
        # Outside ASCII (an ellipsis), so the cues decide, not the RE2 gates (tests/privacy/
        # test_privacy_prefilter.py): ASCII texts, and texts outside it only by their dashes,
        # go through the gates.
        "Hello, I'd like a refund for my kettle please \u2026",
        "Order 12 of 40 pieces, 3 boxes, 1.5 kg each \u2026",
        "version 2.3.1 of the app crashes at 10:45 every day \u2026",
    ],
)
def test_a_detector_is_not_called_on_a_text_lacking_its_cue(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    called: list[str] = []
    for cls in (PhoneDetector, CardDetector, IbanDetector, NationalIdDetector):
        real = cls.find

        def spy(self: Any, t: str, real: Any = real, name: str = cls.__name__) -> Any:
            called.append(name)
            return real(self, t)

        monkeypatch.setattr(cls, "find", spy)
    scrubber = Scrubber(KEY)
    assert scrubber.text(text) == text
    longest = text_scan(text).longest
    # Only the id detector's cue (a run of two digits) can be held by these texts.
    assert called == (["NationalIdDetector"] if longest >= 2 else [])


def test_the_plan_keeps_the_detectors_order_and_detectors_without_a_cue() -> None:
    class Anything:
        kind = "anything"

        def find(self, text: str) -> Iterator[Any]:
            return iter(())

    extra = Anything()
    scrubber = Scrubber(KEY, [*builtin_detectors(), extra])
    # An ellipsis outside ASCII: the cues decide (an ASCII text goes through the RE2 gates).
    plan = scrubber.detectors_for("call me on 020 7946 0958 or mail ada@example.com \u2026")
    names = [type(d).__name__ for d in plan]
    assert names == [
        "EmailDetector",
        "IbanDetector",
        "NationalIdDetector",
        "IpDetector",
        "PostcodeDetector",
        "PhoneDetector",
        "StreetAddressDetector",
        "ExpiryDetector",  # the text holds dots (example.com) and a run of three digits
        "NameDetector",
        "Anything",
    ]
    assert scrubber.detectors_for("no figures \u2026") == (scrubber.detectors[-2], extra)


def test_the_iban_check_agrees_with_python_stdnums_mod_97() -> None:
    rng = random.Random(5)
    agree = 0
    for _ in range(400):
        written = GENERATORS["iban"](RandomPick(rng)).text
        compact = "".join(ch for ch in written if ch.isalnum()).upper()
        pos = rng.randrange(4, len(compact))
        digit = (
            str((int(compact[pos]) + rng.randrange(1, 10)) % 10) if compact[pos].isdigit() else "7"
        )
        mutated = compact[:pos] + digit + compact[pos + 1 :]
        for candidate in (compact, mutated, compact.lower()):
            # python-stdnum's ISO 7064 mod 97-10 over the rearranged number, beside the
            # registry length (stdnum's own IBAN check also checks national check digits,
            # which the planted generator does not compute).
            expected = len(candidate) == IBAN_LENGTHS[candidate[:2].upper()] and (
                mod_97_10.is_valid(candidate[4:].upper() + candidate[:4].upper())
            )
            assert iban_valid(candidate) == expected, candidate
            agree += expected
    assert agree == 800  # each valid IBAN in two cases, and none of the mutated ones


def test_the_characters_lower_casing_does_not_fold_as_the_regex_engine_are_all_listed() -> None:
    # Every character outside ASCII that the engine, ignoring case, reads as an ASCII letter its
    # lower-cased form is not; and none for the letters outside ASCII the cue patterns hold.
    letter = re.compile("[a-z]", re.IGNORECASE)
    odd = set()
    for cp in range(0x80, 0x110000):
        ch = chr(cp)
        if 0xD800 <= cp <= 0xDFFF or letter.fullmatch(ch) is None:
            continue
        if not any(ch.lower() == a for a in string.ascii_lowercase if re.fullmatch(a, ch, re.I)):
            odd.add(ch)
    assert odd == set(CASE_FOLDS_TO_ASCII)
    cue_letters = {
        ch
        for pattern in (names._CUE, ids._ID_CUES, ids._POST_CUES, ids._EXPIRY)
        for ch in pattern.pattern
        if ord(ch) > 127
    }
    assert {"é", "ü", "ß", "ó"} <= cue_letters
    for cue_letter in cue_letters:
        same = re.compile(re.escape(cue_letter), re.IGNORECASE)
        for cp in (*range(0x80, 0x3000), *range(0x1E00, 0x2200)):
            if same.fullmatch(chr(cp)) is not None:
                assert chr(cp).lower() == cue_letter.lower(), (cue_letter, chr(cp))


_CUE_PAIRS = [
    (names._CUE_HINT, names._CUE),
    (ids._ID_CUE_HINT, ids._ID_CUES),
    (ids._POST_HINT, ids._POST_CUES),
    (ids._EXPIRY_HINT, ids._EXPIRY),
]
_CUE_WORDS = [
    "My Name is", "I’m", "İD number", "ıd card", "SSN", "ſsn", "Thanks,\n", "— ", "ZIP", "Post code",
    "ship to", "Exp ", "valid thru", "Gültig bis", "SÉCURITÉ SOCIALE", "codice fiscale", "PESEL",
    "Kind regards,\n", "3/27", "12345678", " ", "’", "é", "K", "x",
]  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_CUE_WORDS), max_size=6))
def test_a_cue_is_never_hidden_by_the_lower_cased_hint(words: list[str]) -> None:
    text = "".join(words)
    scan = text_scan(text)
    for hint, cue in _CUE_PAIRS:
        if cue.search(text) is not None:
            assert scan.may_hold(hint), (hint.pattern[:20], text)
