"""Detectors on published examples and on the shapes that fool naive patterns."""

from __future__ import annotations

import pytest

from casework.errors import ConfigError
from casework.privacy import PseudonymKey, Scrubber, id_pattern_detectors
from casework.privacy.checksums import iban_valid, luhn_valid
from casework.privacy.detectors import (
    CardDetector,
    EmailDetector,
    IbanDetector,
    IpDetector,
    PhoneDetector,
    StreetAddressDetector,
    UrlDetector,
)


def _found(detector: object, text: str) -> list[str]:
    return [text[d.start : d.end] for d in detector.find(text)]  # type: ignore[attr-defined]


def test_luhn_on_published_test_numbers() -> None:
    # the payment networks' published test numbers
    for number in ("4111111111111111", "5555555555554444", "378282246310005", "6011111111111117"):
        assert luhn_valid(number)
    assert not luhn_valid("4111111111111112")


def test_iban_on_the_iso_13616_examples() -> None:
    assert iban_valid("GB82WEST12345698765432")
    assert iban_valid("DE89370400440532013000")
    assert iban_valid("NL91ABNA0417164300")
    assert not iban_valid("GB82WEST12345698765433")
    assert not iban_valid("GB82WEST1234569876543")  # one character short for GB


def test_cards_grouped_or_not_and_next_to_other_figures() -> None:
    d = CardDetector()
    # the detector proposes a window per group start; the scrubber keeps the longest
    text = "card 4111 1111 1111 1111 2 times"
    ctx = Scrubber(PseudonymKey(b"card-tests-key-0123456789abcdefghij", "t")).conversation()
    assert [text[x.start : x.end] for x in ctx.detections(text)] == ["4111 1111 1111 1111"]
    assert _found(d, "amex 3782-822463-10005.") == ["3782-822463-10005"]
    assert _found(d, "id 1234567890123") == []  # Luhn-invalid
    assert _found(d, "+4111111111111111") == []  # an international phone, not a card
    assert _found(d, "0012015556447") == []  # no issuer starts with 0


def test_iban_stops_at_the_country_length() -> None:
    d = IbanDetector()
    text = "IBAN: GB82 WEST 1234 5698 7654 32 and more"
    assert _found(d, text) == ["GB82 WEST 1234 5698 7654 32"]
    assert _found(d, "gb82west12345698765432") == ["gb82west12345698765432"]
    assert _found(d, "GB82 WEST 1234 5698 7654 33") == []


def test_phone_needs_a_valid_number_and_skips_dates_and_ips() -> None:
    d = PhoneDetector(("US", "GB"))
    assert _found(d, "call (202) 555-0143 now") == ["(202) 555-0143"]
    assert _found(d, "or 020 7946 0958 2 times") == ["020 7946 0958"]
    assert _found(d, "ref 2024 020 7946 0958") == ["020 7946 0958"]
    assert _found(d, "on 2024-01-15 10:30") == []
    assert _found(d, "from 178.151.146.93") == []
    assert _found(d, "total 1,234,567.00") == []
    with pytest.raises(ConfigError, match=r"privacy\.phone_regions: unknown region\. Got 'XX'"):
        PhoneDetector(("XX",))


def test_ip_addresses() -> None:
    d = IpDetector()
    assert _found(d, "from 10.0.0.1. Bye") == ["10.0.0.1"]
    assert _found(d, "at 10.0.0.1:8080") == ["10.0.0.1"]
    assert _found(d, "[2001:db8::1]:443 and fe80::1ff:fe23:4567:890a") == [
        "2001:db8::1",
        "fe80::1ff:fe23:4567:890a",
    ]
    assert _found(d, "at 10:30:00 and 999.1.1.1") == []


def test_only_personal_urls() -> None:
    d = UrlDetector()
    assert _found(d, "see https://shop.example.com/users/jdoe/orders.") == [
        "https://shop.example.com/users/jdoe/orders"
    ]
    assert _found(d, "www.example.org/~ada/cv.pdf") == ["www.example.org/~ada/cv.pdf"]
    assert _found(d, "https://x.example/track?email=a%40b.c") == [
        "https://x.example/track?email=a%40b.c"
    ]
    assert _found(d, "docs at https://example.com/help/refunds and www.example.org") == []


def test_emails_and_addresses() -> None:
    assert _found(EmailDetector(), "mailto:Ada.Fake+shop@Mail.Example.co.uk>") == [
        "Ada.Fake+shop@Mail.Example.co.uk"
    ]
    assert _found(StreetAddressDetector(), "moved to 5 Hypothetical Ave, Testville") == [
        "5 Hypothetical Ave"
    ]
    assert _found(StreetAddressDetector(), "I have 5 Blue Mugs") == []


def test_id_patterns_from_config() -> None:
    [order] = id_pattern_detectors({"order": r"\bORD-\d{6}\b"})
    assert _found(order, "orders ORD-123456 and ORD-12") == ["ORD-123456"]
    with pytest.raises(ConfigError) as exc:
        id_pattern_detectors({"Order_Id": r"x"}, "casework.toml")
    assert str(exc.value) == (
        "casework.toml: privacy.id_patterns.Order_Id: kind must be lower-case letters and digits "
        "starting with a letter (it prefixes pseudonyms like `orderid_3fa91c0b27d4`). Got 'Order_Id'."
    )
    with pytest.raises(ConfigError) as exc:
        id_pattern_detectors({"order": r"ORD-(\d"}, "casework.toml")
    assert str(exc.value).startswith(
        "casework.toml: privacy.id_patterns.order: invalid regular expression: "
    )
    assert str(exc.value).endswith(r"Got 'ORD-(\d'.")


def test_url_encoded_emails() -> None:
    d = EmailDetector()
    [found] = d.find("track?ref=Dana.Petrova%40Example.com&x=1")
    assert found.value == "dana.petrova@example.com"
    assert _found(d, "a%40b and 100%40 off") == []
    scrubber = Scrubber(PseudonymKey(b"url-tests-key-0123456789abcdefghij", "t"))
    assert scrubber.text("mail dana%40example.com") == scrubber.text("mail dana@example.com")


def test_a_known_email_inside_a_personal_url_takes_the_whole_url_with_it() -> None:
    scrubber = Scrubber(PseudonymKey(b"url-tests-key-0123456789abcdefghij", "t"))
    ctx = scrubber.conversation()
    ctx.add_known("email", "dana.petrova@example.com")
    out = ctx.text(
        "see https://portal.example.com/users/dana.petrova?email=dana.petrova@example.com"
    )
    assert out == "see " + scrubber.pseudonym(
        "url", "https://portal.example.com/users/dana.petrova?email=dana.petrova@example.com"
    )
    assert "dana" not in out
    # a known value still beats a detector span of the same length, and stands alone elsewhere
    assert ctx.text("mail dana.petrova@example.com") == "mail " + scrubber.pseudonym(
        "email", "dana.petrova@example.com"
    )


def test_overlaps_prefer_the_longer_span_and_never_touch_pseudonyms() -> None:
    scrubber = Scrubber(PseudonymKey(b"k" * 32, "t"))
    ctx = scrubber.conversation()
    text = "https://shop.example.com/users/ada@example.org phone_0123456789ab 4111111111111111"
    kinds = [d.kind for d in ctx.detections(text)]
    assert kinds == ["url", "card"]
