"""`possible_e164` answers as `read_phone` does with one region, without asking for validity.

The phone detector reads a number in one region (its regions outside North America, when that
is one) or written internationally through `possible_e164`, which skips libphonenumber's
validity checks unless the number's length could be valid yet not possible. These tests hold
it to `read_phone`'s answer over numbers from outside casework: libphonenumber's own example
number of every type in every region it knows (written four ways), Faker's phone numbers in
thirteen locales, and random digits after every country calling code.
"""

from __future__ import annotations

import random

import phonenumbers
import pytest
from faker import Faker
from phonenumbers import PhoneNumberFormat, PhoneNumberType

from casework.privacy.pseudonyms import possible_e164, read_phone
from tests.privacy.faker_corpus import LOCALES

_TYPES = [v for k, v in vars(PhoneNumberType).items() if k.isupper()]


def _agree(raw: str, region: str | None) -> None:
    reading = read_phone(raw, (region,) if region else ("US",))
    assert possible_e164(raw, region) == (reading.e164 if reading else None), (raw, region)


def _examples() -> list[tuple[str, str]]:
    """(written number, region) for libphonenumber's example number of each type and region."""
    out = []
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        for kind in _TYPES:
            number = phonenumbers.example_number_for_type(region, kind)
            if number is None:
                continue
            for style in (PhoneNumberFormat.E164, PhoneNumberFormat.INTERNATIONAL):
                out.append((phonenumbers.format_number(number, style), region))
            national = phonenumbers.format_number(number, PhoneNumberFormat.NATIONAL)
            out.append((national, region))
            out.append((phonenumbers.national_significant_number(number), region))
    return out


def test_every_example_number_reads_alike_in_its_region_and_in_gb() -> None:
    examples = _examples()
    assert len(examples) > 5000  # every region's types, four ways each
    for raw, region in examples:
        _agree(raw, region)
        _agree(raw, "GB")


def test_faker_phone_numbers_read_alike_in_their_locale_and_in_gb() -> None:
    for locale, region in LOCALES.items():
        fake = Faker(locale)
        fake.seed_instance(11)
        for _ in range(150):
            raw = fake.phone_number()
            _agree(raw, region)
            _agree(raw, "GB")


def test_random_digits_after_every_country_code_read_alike() -> None:
    rng = random.Random(5)
    codes = sorted(phonenumbers.COUNTRY_CODE_TO_REGION_CODE)
    regions = sorted(phonenumbers.SUPPORTED_REGIONS)
    for code in codes:
        for _ in range(12):
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randint(4, 14)))
            _agree(f"+{code} {digits}", None)
            _agree(f"00{code}{digits}", None)
            _agree("0" + digits, rng.choice(regions))


@pytest.mark.parametrize(
    ("raw", "e164"),
    [
        # Valid in Canada, yet libphonenumber calls +1 310 numbers possible only locally (it
        # judges length by the US): the one length of a shared code where validity is asked.
        ("+1 310 1234", "+13101234"),
        ("+1 201 555 0123", "+12015550123"),
        ("0044 20 7946 0958", "+442079460958"),
        ("+44 1", None),
    ],
)
def test_international_numbers(raw: str, e164: str | None) -> None:
    assert possible_e164(raw) == e164
    _agree(raw, None)


def test_a_national_number_needs_its_region_and_its_trunk_prefix() -> None:
    assert possible_e164("020 7946 0958", "GB") == "+442079460958"
    assert possible_e164("20 7946 0958", "GB") is None  # the UK writes its `0`
    assert possible_e164("020 7946 0958") is None  # no region to read it in
