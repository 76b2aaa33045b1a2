"""The RE2 prefilter: one pass over an ASCII text decides which detectors run, never hiding a find.

A built-in detector declares a :class:`~casework.privacy.prefilter.Gate` (RE2 patterns an ASCII
text must match for it to find anything); the scrubber calls it only on texts passing it. These
tests check that every detection made on the seeded corpora (planted PII, planted formats,
Faker's values in 13 locales and its clean sentences) and on random text lies in a text passing
its detector's gate, that each gate pattern matches wherever the Python pattern it was made from
does, that a detector is not called on a text failing its gate, and that the scrubber falls back
to the cues when RE2 gives no answer. The detections themselves are pinned, unchanged, by
`tests/privacy/test_privacy_detections_sample.py`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

import pytest
import re2  # type: ignore[import-untyped]
from hypothesis import given, settings
from hypothesis import strategies as st

from casework.privacy import (
    PseudonymKey,
    Scrubber,
    builtin_detectors,
    id_pattern_detectors,
    ids,
    names,
)
from casework.privacy.detection import Detection, Detector
from casework.privacy.detectors import (
    CardDetector,
    IbanDetector,
    IpDetector,
    PhoneDetector,
    StreetAddressDetector,
)
from casework.privacy.ids import ExpiryDetector, NationalIdDetector, PostcodeDetector
from casework.privacy.names import NameDetector
from casework.privacy.prefilter import (
    Gate,
    Prefilter,
    _set_groups,
    ascii_superset,
    edge_superset,
    gate_of,
    left_edge,
    pattern_gate,
    stand_in_text,
)
from tests.privacy.faker_corpus import LOCALES, clean_messages
from tests.privacy.faker_corpus import corpus as faker_corpus
from tests.privacy.planted_formats import GENERATORS, KINDS, RandomPick
from tests.privacy.planted_formats import message as format_message
from tests.privacy.planted_pii import ORDER_PATTERN
from tests.privacy.planted_pii import corpus as planted_corpus

KEY = PseudonymKey(b"prefilter-test-key-not-secret-0123456789", "test")


#: Configured id patterns beside the corpus's order ids: ignoring case, with a lookbehind and
#: a class holding `\w`, and one a gate cannot be made for (a backreference).
_ID_PATTERNS = {
    **ORDER_PATTERN,
    "cust": r"(?i)cust-[a-z]{3}\d+",
    "ticket": r"(?<![\w-])[A-Z]{2}[\w.]{2}\d{4}\b",
    "twice": r"(\d)\1{3}",
}


def _detectors() -> list[Detector]:
    return [
        *id_pattern_detectors(_ID_PATTERNS),
        *builtin_detectors(tuple(dict.fromkeys(LOCALES.values()))),
    ]


def _texts() -> Iterator[str]:
    for message in planted_corpus(800, seed=13):
        yield message.text
    rng = random.Random(13)
    for kind in KINDS:
        for _ in range(60):
            pick = RandomPick(rng)
            yield format_message(pick, GENERATORS[kind](pick))
    for sample in faker_corpus(3, seed=13):
        yield sample.text
    yield from clean_messages(10, seed=13)


def _assert_gates_hold(prefilter: Prefilter, detectors: list[Detector], text: str) -> int:
    """Every detector finding something in ``text`` is in its plan; returns the finds.

    ``text`` is ASCII but for dashes: its plan is its stand-in text's, as the scrubber's.
    """
    stood = stand_in_text(text)
    assert stood is not None and prefilter.stands_in
    plan = prefilter.plan(stood)
    assert plan is not None
    found = 0
    for detector in detectors:
        hits = list(detector.find(text))
        found += len(hits)
        if hits:
            assert detector in plan, (type(detector).__name__, text)
    return found


def test_every_detection_lies_in_a_text_passing_its_detectors_gate() -> None:
    detectors = _detectors()
    prefilter = Prefilter(detectors)
    found = texts = dashed = 0
    for text in _texts():
        if stand_in_text(text) is not None:
            texts += 1
            dashed += not text.isascii()
            found += _assert_gates_hold(prefilter, detectors, text)
    assert texts > 1000 and found > 1000  # the corpora did reach every detector
    assert dashed > 20  # and texts whose gates read a stand-in for their dashes


_PIECES = [
    "0", "1", "2", "4", "7", "9", "12", "2A", " ", "-", ".", "/", ":", "::", "(", ")", "+", "_",
    "@", "%40", "\t", "\x1c", "\n", "a", "A", "x", "X", "GB", "de", "IT", "NL", "ssn", "SSN ",
    "BSN ", "zip ", "PLZ ", "exp ", "Valid thru ", "My name is ", "I'm ", "Thanks,\n", "-- ",
    "Street", " St", "Rd.", "12 Baker", "RSSMRA", "LM", "ship to ", "www.", "://", "id card ",
    "K1A", "SW1A 1AA", "QQ", "12/27", "03/2027", "4111", "111", "1111 ", "0958", "ORD-", "CUST-",
    "cust-", "AB", "abc", "123456", "TK_9", "\u2014", " \u2013 ", "\u2014 ",
]  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=14))
def test_on_random_text_a_detector_failing_its_gate_finds_nothing(pieces: list[str]) -> None:
    detectors = _detectors()
    _assert_gates_hold(Prefilter(detectors), detectors, "".join(pieces))


#: The Python patterns gates are made from, with their flags.
_SOURCES = [
    ids._ANY_FORM,
    ids._ID_CUES,
    ids._POST_SHAPES,
    ids._POST_CUES,
    ids._EXPIRY,
    ids._AFTER_CARD,
    ids._SIX_DIGITS,
    names._CUE,
    StreetAddressDetector._number_then_word,
    StreetAddressDetector._type,
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([*_PIECES, "Ave", "codice fiscale ", "postal code ", "i am ", "Best,\n"]),
        max_size=12,
    )
)
def test_an_ascii_superset_matches_wherever_its_python_pattern_does(pieces: list[str]) -> None:
    text = "".join(pieces)
    stood = stand_in_text(text)
    assert stood is not None
    for source in _SOURCES:
        if source.search(text) is not None:
            # Python's engine reads the translation too (its syntax is shared): on ASCII text,
            # and on a text's stand-in for its dashes, it must find a match wherever the
            # original finds one in the text.
            translated = re.compile(ascii_superset(source, word_start=source is not names._CUE))
            assert translated.search(stood) is not None, (source.pattern[:40], text)


def test_the_prefilter_keeps_digit_shapes_and_cue_words_in_separate_sets() -> None:
    prefilter = Scrubber(KEY)._prefilter
    gates = [gate_of(d) for d in builtin_detectors()]
    short, shapes, words = _set_groups([p for g in gates if g for c in g.clauses for p in c])
    assert len(prefilter._sets) == 3
    post_shapes = edge_superset(ids._POST_SHAPES)
    assert post_shapes in shapes and post_shapes not in words
    assert ascii_superset(ids._EXPIRY, word_start=True) in words  # digits, after its words
    assert all(len(p) < 80 for p in short) and shapes and words
    plan = prefilter.plan("card 4111 1111 1111 1111, SSN 123-45-6789, Thanks,\nAda")
    assert plan is not None
    assert {CardDetector, NationalIdDetector, NameDetector} <= {type(d) for d in plan}


#: The Python patterns gates are made from with their left edge (:func:`edge_superset`).
_EDGED = [
    *(rule.pattern for rule in ids._FORMS),
    ids._POST_SHAPES,
    IbanDetector._start,
    re.compile(r"(?<![^\W\d_])\d{3}"),  # the edge a class of its own: not after a letter
]


@settings(max_examples=600, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [*_PIECES, "742-38-1981", "024.730.543-04", "1 85 05 2A 123 456 78", "12345678Z",
             "X1234567L", "QQ 12 34 56 C", "RSSMRA85T10A562S", "gb82 west", "K1A 0B1", "é"]
        ),
        max_size=10,
    )
)  # fmt: skip
def test_an_edge_superset_matches_wherever_its_python_pattern_does(pieces: list[str]) -> None:
    text = "".join(pieces)
    stood = stand_in_text(text)
    if stood is None:
        return
    for source in _EDGED:
        found = source.search(text)
        if found is not None:
            # Read by Python's engine and by RE2 alike: the edge and the class before it match
            # where the original's match starts, or the text does there (a dash before it
            # read as the stand-in).
            for engine in (re, re2):
                edged = engine.compile(edge_superset(source))
                assert edged.search(stood) is not None, (source.pattern[:40], text)
            assert left_edge(source), source.pattern[:40]


def test_an_edge_is_the_ascii_characters_outside_the_lookbehinds_class() -> None:
    assert edge_superset(r"\d(?<![\w.]\d)x") == r"(?:^|[^\x2e0-9A-Z\x5fa-z])(?:[0-9]x)"
    assert edge_superset(r"(?=[A-Z])(?<![\w-])[A-Z]") == r"(?:^|[^\x2d0-9A-Z\x5fa-z])(?:[A-Z])"
    # Ignoring case, the class holds both cases; a lookbehind of another shape sets no edge.
    assert left_edge(re.compile(r"(?<![k])x", re.IGNORECASE)) == "(?:^|[^Kk])"
    assert left_edge(r"a(?<![\w.]\d)") == ""
    assert left_edge(r"(?<!ab)c") == ""
    assert left_edge(r"(?<![é])c") == ""  # no ASCII character to keep out
    assert edge_superset(r"\d{2}") == ascii_superset(r"\d{2}")


def test_ascii_superset_reads_classes_as_pythons_engine_does() -> None:
    assert ascii_superset(r"\s") == r"[\x09-\x0d\x1c-\x20]"  # 0x1C-0x1F are spaces to Python
    assert ascii_superset(re.compile(r"[^\s]", re.ASCII)) == r"[\x00-\x08\x0e-\x1f\x21-\x7f]"
    assert ascii_superset(re.compile("ß|é")) == r"[^\x00-\x7f]|[^\x00-\x7f]"  # no ASCII text
    assert ascii_superset(re.compile("k", re.IGNORECASE)) == "(?i:k)"
    assert ascii_superset(r"(?<![\w.])\d{2}(?!\d)\b") == "[0-9]{2}"
    assert ascii_superset(r"(?<!\w)nie", word_start=True) == r"\bnie"
    assert ascii_superset(r"(?P<b>[A-Z]){2}+x") == "(?:[A-Z]){2}x"
    with pytest.raises(ValueError, match="backreference"):
        ascii_superset(r"(?P<a>x)(?P=a)")


@pytest.mark.parametrize(
    ("text", "called"),
    [
        ("Can you tell me when my order ships", []),
        # The IP detector's gate is its cue's `.` or `:`.
        ("Hello, I'd like a refund for my kettle please.", ["IpDetector"]),
        ("Order 12 of 40 pieces, 3 boxes, 1.5 kg each", ["IpDetector"]),
        # Six digits in a run and more: the cues call every number detector; the gates only
        # the phone detector.
        ("reach me on 020 7946 0958", ["PhoneDetector"]),
        ("reach me: 020 7946 0958", ["IpDetector", "PhoneDetector"]),
        ("ref 4471 of 3 boxes", []),
    ],
)
def test_a_detector_is_not_called_on_an_ascii_text_failing_its_gate(
    monkeypatch: pytest.MonkeyPatch, text: str, called: list[str]
) -> None:
    seen: list[str] = []
    spied = (
        PhoneDetector, CardDetector, IbanDetector, IpDetector, NationalIdDetector,
        PostcodeDetector, StreetAddressDetector, ExpiryDetector, NameDetector,
    )  # fmt: skip
    for cls in spied:
        real = cls.find

        def spy(self: Any, t: str, real: Any = real, name: str = cls.__name__) -> Any:
            seen.append(name)
            return real(self, t)

        monkeypatch.setattr(cls, "find", spy)
    Scrubber(KEY).text(text)
    assert seen == called


def test_every_builtin_detector_has_a_gate() -> None:
    assert all(gate_of(d) is not None for d in builtin_detectors())


def test_a_configured_pattern_of_plain_syntax_has_a_gate_and_others_run_on_every_text() -> None:
    gated = {d.kind: gate_of(d) for d in id_pattern_detectors(_ID_PATTERNS)}
    assert gated["order"] is not None and gated["order"].clauses == (("ORD-[0-9]{6}",),)
    assert gated["cust"] is not None and gated["ticket"] is not None
    assert gated["twice"] is None  # a backreference: no RE2 form
    for pattern in (r"x{,3}", r"(?x) a b", r"\AABC", r"(?#note)a", r"\012"):
        assert pattern_gate(re.compile(pattern)) is None, pattern
    assert pattern_gate(re.compile("a.b", re.DOTALL)) is None  # a flag the RE2 form would lose
    scrubber = Scrubber(KEY, id_pattern_detectors(_ID_PATTERNS))
    assert [d.kind for d in scrubber.detectors_for("no ids here")] == ["twice"]
    assert [d.kind for d in scrubber.detectors_for("see ORD-123456")] == ["order", "twice"]


class _GivesUp:
    """An RE2 set that answers nothing, as RE2 does when its automaton runs out of memory."""

    def Match(self, data: bytes) -> None:
        return None


def test_the_scrubber_falls_back_to_the_cues_when_re2_gives_no_answer() -> None:
    text = "Card 4111 1111 1111 1111, call 020 7946 0958, SSN 123-45-6789, ada@example.com"
    scrubber = Scrubber(KEY)
    expected = [(d.start, d.end, d.kind) for d in scrubber.conversation().detections(text)]
    assert {k for _, _, k in expected} >= {"card", "phone", "ssn", "email"}
    prefilter = scrubber._prefilter
    prefilter._sets = [(_GivesUp(), offset) for _, offset in prefilter._sets]
    prefilter._plans.clear()
    assert prefilter.plan(text) is None
    assert len(scrubber.detectors_for(text)) > 5  # the cue plan
    got = [(d.start, d.end, d.kind) for d in scrubber.conversation().detections(text)]
    assert got == expected


def test_a_text_outside_ascii_is_planned_by_the_cues_and_found_the_same() -> None:
    scrubber = Scrubber(KEY)
    ascii_text = "Card 4111 1111 1111 1111 and 020 7946 0958"
    wide = ascii_text + " \u2014 Zo\u00eb"  # beside the dash, a letter outside ASCII
    plan = scrubber.detectors_for(wide)
    assert NationalIdDetector in {type(d) for d in plan}  # the cues: a run of two digits
    found = [(d.start, d.end, d.kind) for d in scrubber.conversation().detections(wide)]
    assert found[:2] == [
        (d.start, d.end, d.kind) for d in scrubber.conversation().detections(ascii_text)
    ]


class _Foreign:
    """A detector of another package, with a gate of its own written for ASCII text."""

    kind = "foreign"
    gate = Gate.any_of("zz")

    def find(self, text: str) -> Iterator[Detection]:
        return iter(())


def test_a_text_whose_only_other_characters_are_dashes_is_planned_by_the_gates() -> None:
    scrubber = Scrubber(KEY)
    text = "sent it twice \u2014 0121 234 4390 \u2013 why no reply?"
    plan = {type(d) for d in scrubber.detectors_for(text)}
    assert PhoneDetector in plan and NameDetector in plan  # `\u2013 why`: a dash cue
    assert NationalIdDetector not in plan and CardDetector not in plan  # the cues had them
    assert [d.kind for d in scrubber.conversation().detections(text)] == ["phone"]
    # A gate written elsewhere may not know the stand-in: such a scrubber reads the cues.
    other = Scrubber(KEY, [*builtin_detectors(), _Foreign()])
    assert not other._prefilter.stands_in
    assert NationalIdDetector in {type(d) for d in other.detectors_for(text)}
