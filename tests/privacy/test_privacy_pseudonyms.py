"""Keyed pseudonyms: determinism, key separation, normalisation, idempotent scrubbing."""

from __future__ import annotations

import hashlib
import hmac
import re

import phonenumbers
from hypothesis import given, settings
from hypothesis import strategies as st

from casework.privacy import PseudonymKey, Scrubber, normalise, pseudonym
from casework.privacy.pseudonyms import PSEUDONYM_RE, is_pseudonym

KEY = b"k" * 32
OTHER = b"o" * 32

emails = st.builds(
    lambda local, host, tld: f"{local}@{host}.{tld}",
    st.from_regex(r"[a-z][a-z0-9._+-]{0,14}[a-z0-9]", fullmatch=True),
    st.from_regex(r"[a-z][a-z0-9-]{0,10}[a-z0-9]", fullmatch=True),
    st.sampled_from(["com", "org", "net", "io", "co.uk"]),
)
kinds = st.from_regex(r"[a-z][a-z0-9]{0,10}", fullmatch=True)
values = st.text(min_size=1, max_size=40)
keys = st.binary(min_size=32, max_size=64)


def test_pseudonym_is_the_documented_hmac() -> None:
    expected = hmac.new(KEY, b"email:ada@example.com", hashlib.sha256).hexdigest()[:12]
    assert pseudonym(KEY, "email", "ada@example.com") == f"email_{expected}"
    assert pseudonym(KEY, "email", "ada@example.com") == "email_8dc713f272f6"


@settings(max_examples=200, deadline=None)
@given(
    st.binary(min_size=32, max_size=200) | st.sampled_from([b"k" * 64, b"k" * 65, b"\x00" * 32]),
    kinds,
    st.text(max_size=40),
)
def test_pseudonym_is_hmac_sha256_for_every_key_length(key: bytes, kind: str, value: str) -> None:
    # Keys of a block (64 bytes) and longer are hashed first: both sides of that edge.
    expected = hmac.new(key, f"{kind}:{value}".encode(), hashlib.sha256).hexdigest()[:12]
    assert pseudonym(key, kind, value) == f"{kind}_{expected}"


@settings(max_examples=200, deadline=None)
@given(kind=kinds, value=values, key=keys)
def test_same_key_same_pseudonym(kind: str, value: str, key: bytes) -> None:
    first = pseudonym(key, kind, value)
    assert first == pseudonym(key, kind, value)
    assert re.fullmatch(rf"{kind}_[0-9a-f]{{12}}", first)
    assert is_pseudonym(first)


@settings(max_examples=200, deadline=None)
@given(kind=kinds, value=values, key=keys, other=keys)
def test_different_key_different_pseudonym(kind: str, value: str, key: bytes, other: bytes) -> None:
    if key != other:
        assert pseudonym(key, kind, value) != pseudonym(other, kind, value)


@settings(max_examples=100, deadline=None)
@given(value=values)
def test_kind_separates_pseudonyms(value: str) -> None:
    assert pseudonym(KEY, "email", value)[6:] != pseudonym(KEY, "phone", value)[6:]


@settings(max_examples=150, deadline=None)
@given(email=emails, prefix=st.sampled_from(["", "mail me: ", "(", "Contact <"]))
def test_output_never_contains_the_email(email: str, prefix: str) -> None:
    scrubber = Scrubber(PseudonymKey(KEY, "test"))
    text = f"{prefix}{email} thanks"
    out = scrubber.text(text)
    assert email not in out
    assert email.upper() not in scrubber.text(text.upper())
    assert scrubber.pseudonym("email", email) in out


@settings(max_examples=100, deadline=None)
@given(email=emails)
def test_email_case_maps_to_one_pseudonym(email: str) -> None:
    scrubber = Scrubber(PseudonymKey(KEY, "test"))
    assert scrubber.text(email) == scrubber.text(email.upper()) == scrubber.text(email.title())


_PHONES = [
    phonenumbers.parse(n, None)
    for n in ("+12025550143", "+14155550132", "+442079460958", "+447911123456", "+33123456789")
]


@settings(max_examples=60, deadline=None)
@given(number=st.sampled_from(_PHONES), fmt=st.sampled_from(list(range(4))))
def test_phone_formats_map_to_one_pseudonym(number: phonenumbers.PhoneNumber, fmt: int) -> None:
    scrubber = Scrubber(PseudonymKey(KEY, "test"))
    e164 = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    if fmt == phonenumbers.PhoneNumberFormat.NATIONAL and number.country_code not in (1, 44):
        fmt = (
            phonenumbers.PhoneNumberFormat.INTERNATIONAL
        )  # national forms: configured regions only
    written = phonenumbers.format_number(number, fmt)
    out = scrubber.text(f"call {written} today")
    scheme = "tel:" if fmt == phonenumbers.PhoneNumberFormat.RFC3966 else ""
    assert out == f"call {scheme}{pseudonym(KEY, 'phone', e164)} today"
    assert written not in out


@settings(max_examples=60, deadline=None)
@given(
    sep=st.sampled_from(["", " ", "-"]),
    card=st.sampled_from(["4111111111111111", "5555555555554444"]),
)
def test_card_spacing_maps_to_one_pseudonym(sep: str, card: str) -> None:
    scrubber = Scrubber(PseudonymKey(KEY, "test"))
    written = sep.join(card[i : i + 4] for i in range(0, 16, 4))
    assert scrubber.text(f"card {written}.") == f"card {pseudonym(KEY, 'card', card)}."


@settings(max_examples=150, deadline=None)
@given(
    text=st.lists(
        st.one_of(
            emails,
            st.sampled_from(
                [
                    "4111 1111 1111 1111",
                    "+44 20 7946 0958",
                    "10.0.0.7",
                    "GB82 WEST 1234 5698 7654 32",
                ]
            ),
            st.text(alphabet="abc xyz 0123.-@", max_size=12),
        ),
        max_size=6,
    ).map(" ".join)
)
def test_scrubbing_is_idempotent(text: str) -> None:
    scrubber = Scrubber(PseudonymKey(KEY, "test"))
    once = scrubber.text(text)
    assert scrubber.text(once) == once


@settings(max_examples=150, deadline=None)
@given(
    kind=st.sampled_from(["email", "phone", "card", "iban", "ip", "url", "name", "order"]),
    value=values,
)
def test_existing_pseudonyms_are_never_rescrubbed(kind: str, value: str) -> None:
    scrubber = Scrubber(PseudonymKey(KEY, "test"))
    existing = pseudonym(OTHER, kind, value)
    text = f"see {existing}, and {existing}."
    assert scrubber.text(text) == text
    ctx = scrubber.conversation()
    assert ctx.json({"email": existing, "note": existing}) == {"email": existing, "note": existing}


def test_normalisation_rules() -> None:
    assert normalise("email", " Ada.Fake@Example.COM ") == "ada.fake@example.com"
    assert normalise("phone", "(202) 555-0143") == "+12025550143"
    assert normalise("phone", "0044 20 7946 0958") == "+442079460958"
    assert normalise("card", "4111-1111 1111-1111") == "4111111111111111"
    assert normalise("iban", "gb82 west 1234 5698 7654 32") == "GB82WEST12345698765432"
    assert normalise("ip", "2001:0DB8:0000:0000:0000:0000:0000:0001") == "2001:db8::1"
    assert normalise("url", "https://WWW.Example.com/users/Ada/") == "example.com/users/Ada"
    assert normalise("name", "  Ada   FAKENAME ") == "ada fakename"


def test_pseudonym_pattern_needs_word_edges_and_known_kinds() -> None:
    assert PSEUDONYM_RE.search("_email_0123456789ab") is None
    assert PSEUDONYM_RE.search("email_0123456789abc") is None
    assert PSEUDONYM_RE.search("(email_0123456789ab)") is not None
    assert is_pseudonym("email_0123456789ab", frozenset({"email"}))
    assert not is_pseudonym("xemail_0123456789ab", frozenset({"email"}))
    scrubber = Scrubber(PseudonymKey(KEY, "test"))
    # a lookalike of an unknown kind is not protected: its digits are still scanned
    assert scrubber.is_existing("phone_0123456789ab")
    assert not scrubber.is_existing("widget_0123456789ab")
