"""Free-text PII that leaked before: dotted phones, typed names, national ids, postcodes, expiry."""

from __future__ import annotations

import pytest

from casework.privacy import PseudonymKey, Scrubber

KEY = PseudonymKey(b"free-text-test-key-0123456789abcdefgh", "test")


def _kinds(text: str, regions: tuple[str, ...] = ("US", "GB")) -> list[tuple[str, str]]:
    scrubber = Scrubber(KEY, phone_regions=regions)
    return [(text[d.start : d.end], d.kind) for d in scrubber.conversation().detections(text)]


@pytest.mark.parametrize(
    "text",
    ["call +1.415.555.0123", "+44.20.7946.0958 is my number", "ring +1.415.555.0123."],
)
def test_dotted_international_phones_are_phones(text: str) -> None:
    assert [k for _, k in _kinds(text)] == ["phone"]


def test_brazilian_numbers_are_read_without_their_trunk_prefix() -> None:
    assert _kinds("liga pra mim: 11 91234-5678", ("BR", "US", "GB")) == [("11 91234-5678", "phone")]


def test_phone_grouped_3_3_4_with_an_unassigned_area_code_is_a_phone() -> None:
    assert _kinds("call 198 259 7919") == [("198 259 7919", "phone")]


@pytest.mark.parametrize(
    ("text", "value", "kind"),
    [
        ("my ssn is 742-38-1981", "742-38-1981", "ssn"),
        ("SSN 742381981 thanks", "742381981", "ssn"),
        ("my BSN is 740389129", "740389129", "nationalid"),
        ("CPF: 024.730.543-04", "024.730.543-04", "nationalid"),
        ("PESEL 71082737780", "71082737780", "nationalid"),
        ("codice fiscale GNTGNR97M71D105Y", "GNTGNR97M71D105Y", "nationalid"),
        ("NI number QQ 12 34 56 C", "QQ 12 34 56 C", "nationalid"),
        ("my SIN is 159 416 783", "159 416 783", "nationalid"),
        ("numéro de sécurité sociale 197086311356746", "197086311356746", "nationalid"),
    ],
)
def test_national_ids_are_typed_as_what_they_are(text: str, value: str, kind: str) -> None:
    assert _kinds(text) == [(value, kind)]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("my zip code is 94105", "94105"),
        ("postcode SW1A 1AA", "SW1A 1AA"),
        ("ship to K1A 0B1 please", "K1A 0B1"),
        ("PLZ 10115", "10115"),
        ("ZIP 94105-1234, is delivery free?", "94105-1234"),
    ],
)
def test_postcodes_are_scrubbed(text: str, value: str) -> None:
    assert _kinds(text) == [(value, "postcode")]


@pytest.mark.parametrize(
    ("text", "value"),
    [("exp 03/27", "03/27"), ("valid thru 11/2029", "11/2029"), ("expires on 3/27.", "3/27")],
)
def test_card_expiry_dates_are_scrubbed(text: str, value: str) -> None:
    assert _kinds(text) == [(value, "expiry")]


def test_an_expiry_right_after_a_card_is_scrubbed() -> None:
    assert [k for _, k in _kinds("4242 4242 4242 4242 03/27")] == ["card", "expiry"]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("I'm Maria Rossi", "Maria Rossi"),
        ("Hi, this is Jennifer from Ohio", "Jennifer"),
        ("my name is Oderwald", "Oderwald"),
        ("Thanks,\nColin van den Heuvel", "Colin van den Heuvel"),
        ("Cheers,\nDr. Katy Carter", "Katy Carter"),
        ("please cancel it — Ehrenfried Dobes", "Ehrenfried Dobes"),
        ("hello, I'm Anne Hughes. The parcel is late", "Anne Hughes"),
        ("Kind regards,\nZyxwvut", "Zyxwvut"),
        ("This is 福田 拓真", "福田 拓真"),
    ],
)
def test_names_typed_in_free_text_are_names(text: str, name: str) -> None:
    assert _kinds(text) == [(name, "name")]


@pytest.mark.parametrize(
    "text",
    [
        "I'm Not Sure what happened",
        "This Is Ridiculous",
        "Thanks,\nThe Customer Care Team",
        "Best regards,\nAccounts Payable",
        "Thanks, that solved it!",
        "I'm looking for the Apple Watch strap",
        "the date is 03/27 and the ratio 3/4",
        "order 12 of 94105 units",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert _kinds(text) == []


def test_a_known_name_and_the_same_name_typed_get_one_pseudonym() -> None:
    scrubber = Scrubber(KEY)
    ctx = scrubber.conversation()
    ctx.add_known("name", "Zora Quint")
    typed = Scrubber(KEY).text("my name is Zora Quint")
    assert ctx.text("Zora Quint") in typed


@pytest.mark.parametrize(
    ("field", "value", "typed"),
    [
        ("ssn", "742-38-1981", "my ssn is 742-38-1981"),
        ("postcode", "SW1A 1AA", "postcode SW1A 1AA"),
        ("national_id", "740389129", "my BSN is 740389129"),
    ],
)
def test_a_field_value_and_the_same_value_typed_get_one_pseudonym(
    field: str, value: str, typed: str
) -> None:
    ctx = Scrubber(KEY).conversation()
    ctx.add_known_from({"customer": {field: value}})
    assert ctx.text(value) in Scrubber(KEY).text(typed)
