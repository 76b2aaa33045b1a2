"""The cheap common path: one scan per text decides which detectors have anything to read."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import phonenumbers
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casework.privacy import PseudonymKey, Scrubber
from casework.privacy import detectors as detectors_module
from casework.privacy.detectors import PatternDetector, PhoneDetector
from casework.privacy.pseudonyms import read_phone

KEY = PseudonymKey(b"scan-test-key-0123456789abcdefghijklmn", "test")


def _counting(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[tuple[Any, ...]]:
    calls: list[tuple[Any, ...]] = []
    real: Callable[..., Any] = getattr(owner, name)

    def wrapper(*args: Any) -> Any:
        calls.append(args)
        return real(*args)

    monkeypatch.setattr(owner, name, wrapper)
    return calls


def test_the_scan_counts_the_digits_of_the_longest_run() -> None:
    from casework.privacy.detection import text_scan

    scan = text_scan("Call +1 (415) 555-0123 about ORDER 12")
    assert scan.longest == 11
    assert scan.lower == "call +1 (415) 555-0123 about order 12"
    assert text_scan("no figures here").longest == 0


@pytest.mark.parametrize(
    "text",
    [
        "Order 12 of 40 pieces, 3 boxes, 1.5 kg each",
        "paid 49.99 on 12/03, ref 2023, version 2.3.1",
        "The item number on the label is 4471, size 42.",
    ],
)
def test_short_figures_never_reach_the_phone_or_card_readers(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    blanked = _counting(monkeypatch, detectors_module, "_without_figures")
    read_phone.cache_clear()
    parsed = _counting(monkeypatch, phonenumbers, "parse")
    assert Scrubber(KEY).text(text) == text
    assert blanked == []
    assert parsed == []


def test_a_number_not_grouped_as_north_american_is_never_parsed_as_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read_phone.cache_clear()
    parsed = _counting(monkeypatch, phonenumbers, "parse")
    scrubbed = Scrubber(KEY).text("card 4111 1111 1111 1111, iban NL91 ABNA 0417 1643 00")
    assert "4111" not in scrubbed and "0417" not in scrubbed
    assert [args for args in parsed if "US" in args] == []
    # Grouped as one, it is read as one.
    assert Scrubber(KEY).text("call 415 555 0123").startswith("call phone_")
    assert any("US" in args for args in parsed)


def test_digits_inside_an_iban_are_not_read_as_a_phone_number(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read_phone.cache_clear()
    parsed = _counting(monkeypatch, phonenumbers, "parse")
    ctx = Scrubber(KEY).conversation()
    assert [d.kind for d in ctx.detections("my IBAN is CH30 0015 3791 0172 7172 2")] == ["iban"]
    assert parsed == []


def test_a_run_skipped_for_a_span_that_then_loses_is_read_after_all() -> None:
    # `ref` covers the phone number, but a longer known value overlaps `ref` and wins: the
    # number is no longer inside a kept span, so it must still be found.
    text = "please see the ref AB12 X 0121 234 4390"
    scrubber = Scrubber(
        KEY, [PatternDetector("ref", r"AB12 X 0121 234 4390"), PhoneDetector(("GB",))]
    )
    ctx = scrubber.conversation()
    ctx.add_known("account", "please see the ref AB12")
    found = [(text[d.start : d.end], d.kind) for d in ctx.detections(text)]
    assert found == [("please see the ref AB12", "account"), ("0121 234 4390", "phone")]
    assert "0121" not in ctx.text(text)


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("I  am Ada Lovelace", "Ada Lovelace", "name"),  # two spaces: the cue allows any run
        ("this\tis Ada Lovelace", "Ada Lovelace", "name"),
        ("İD number 12345678", "12345678", "nationalid"),  # the engine folds İ to i
        ("ZİP 94105", "94105", "postcode"),
    ],
)
def test_a_cue_the_lower_cased_hint_would_miss_is_still_read(
    text: str, value: str, kind: str
) -> None:
    found = Scrubber(KEY).conversation().detections(text)
    assert [(text[d.start : d.end], d.kind) for d in found] == [(value, kind)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # Corsica's NIR: 2A splits the digits, so its longest run holds 8, not 15.
        ("my social security number is 2 85 05 2A 123 456 80 ok", "2 85 05 2A 123 456 80"),
        ("CPF 024.730.543-04", "024.730.543-04"),
    ],
)
def test_forms_gated_on_their_digits_are_still_found(text: str, value: str) -> None:
    found = Scrubber(KEY).conversation().detections(text)
    assert [(text[d.start : d.end], d.kind) for d in found] == [(value, "nationalid")]


#: Pieces of dates, amounts, versions and the numbers around them.
_FIGURE_PIECES = [
    "0", "1", "2", "3", "9", "12", "19", "20", "31", "2024", "1999", "49", "99", "123", "4111",
    "-", "/", ".", ",", "\u2013", " ", "+", "x", "v", "a", "\u0664",
]  # fmt: skip


#: Dates of every form `_DATE` reads (years first or last, ranges of years), and digit groups
#: joined by the separators dates, amounts and versions use.
_FIGURE_SHAPES = st.one_of(
    *(
        st.from_regex(shape, fullmatch=True)
        for shape in (
            r"(?:19|20)[0-9]{2}[-/.\u2013][0-9]{1,2}(?:[-/.\u2013][0-9]{1,2})?",
            r"[0-9]{1,2}[-/.\u2013][0-9]{1,2}[-/.\u2013](?:19|20)?[0-9]{2}",
            r"(?:19|20)[0-9]{2}[-/.\u2013](?:19|20)[0-9]{2}",
            r"[0-9]{1,4}(?:[-/.,\u2013][0-9]{1,4}){1,3}",
        )
    )
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(_FIGURE_PIECES), _FIGURE_SHAPES), max_size=10))
def test_figures_are_blanked_as_by_both_substitutions_on_every_text(pieces: list[str]) -> None:
    # The searches that let a text skip a substitution must never skip one that would change it.
    text = "".join(pieces)
    both = detectors_module._AMOUNT_OR_VERSION.sub(
        lambda m: "x" * len(m.group()),
        detectors_module._DATE.sub(detectors_module._date_blank, text),
    )
    assert detectors_module._without_figures.__wrapped__(text) == both
