"""An IBAN's account number must have its country's structure, not only its length and mod 97.

Found by the planted-format property test: `my card is 763 761 4069 please refund it` reads,
from `is`, as 26 characters (Iceland's length) that pass mod 97, so the phone number and the
words after it went as one IBAN. Iceland's account numbers are digits only.
"""

from __future__ import annotations

import re

from faker import Faker
from stdnum import iban as stdnum_iban
from stdnum import numdb

from casework.privacy.checksums import IBAN_LENGTHS, iban_valid
from tests.privacy.planted_formats import mining_scrubber, scrub_as_mined


def test_words_that_pass_mod_97_in_a_digits_only_country_are_no_iban() -> None:
    assert not iban_valid("IS763761406" + "9PLEASEREFUNDIT")
    scrubber = mining_scrubber()
    draft = scrub_as_mined(scrubber, "my card is 763 761 4069 please refund it")
    assert scrubber.pseudonym("phone", "+17637614069") in draft
    assert "please refund it" in draft


def test_every_registry_length_agrees_with_stdnums_registry() -> None:
    registry = numdb.get("iban")
    for country, length in IBAN_LENGTHS.items():
        structure = registry.info(country)[0][1]["bban"]
        counts = re.findall(r"([1-9][0-9]*)!([nac])", structure)
        assert 4 + sum(int(n) for n, _ in counts) == length, country


#: Faker locales that write IBANs of their own country.
LOCALES = (
    "de_DE", "en_GB", "fr_FR", "nl_NL", "es_ES", "it_IT", "pl_PL", "pt_PT", "fi_FI", "no_NO",
    "sv_SE", "da_DK", "cs_CZ", "sk_SK", "hu_HU", "ro_RO", "bg_BG", "el_GR", "hr_HR", "lt_LT",
    "lv_LV", "et_EE", "sl_SI", "tr_TR", "de_AT", "de_CH", "fr_BE", "az_AZ", "ka_GE", "he_IL",
    "uk_UA", "pt_BR", "en_IE", "ar_SA", "de_LI",
)  # fmt: skip


def test_real_ibans_of_every_country_faker_writes_still_pass() -> None:
    seen = set()
    for locale in LOCALES:
        fake = Faker(locale)
        fake.seed_instance(7)
        for _ in range(20):
            number = fake.iban()
            # Faker's own numbers, where the registry (stdnum) takes them as well-formed.
            if stdnum_iban.is_valid(number, check_country=False):
                seen.add(number[:2])
                assert iban_valid(number), number
    assert len(seen) >= 20, sorted(seen)  # 22 countries with these locales and seed
