"""An independent planted-PII corpus written by Faker in thirteen locales.

Faker's locale providers carry the real-world variety (phone formats, names with particles and
titles, national ids, postcodes, addresses); nothing here is derived from casework's detectors.
Each :class:`Sample` is one customer message holding one value of one kind, and knows where that
value sits, so recall is measured per kind. :func:`clean_messages` gives messages without PII
(Faker's own sentences, plus support chatter with product words) for the false-hit rate.

Run ``python -m tests.privacy.faker_corpus`` to print a sample.
"""

from __future__ import annotations

import random
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from faker import Faker

#: Locale -> the phone region a project serving it would configure (`privacy.phone_regions`).
LOCALES = {
    "en_US": "US",
    "en_GB": "GB",
    "de_DE": "DE",
    "fr_FR": "FR",
    "es_ES": "ES",
    "it_IT": "IT",
    "nl_NL": "NL",
    "pt_BR": "BR",
    "en_IN": "IN",
    "ja_JP": "JP",
    "pl_PL": "PL",
    "en_CA": "CA",
    "en_AU": "AU",
}

#: Kinds planted, named as the scrubber's pseudonyms name them.
KINDS = ("phone", "email", "name", "ssn", "nationalid", "postcode", "expiry", "address")

#: Locales whose ``ssn()`` is a national id other than a US social-security number, with the
#: words people put before it.
_NATIONAL_IDS: dict[str, tuple[str, ...]] = {
    "en_GB": ("National Insurance number", "NI number", "NINO"),
    "fr_FR": ("numéro de sécurité sociale", "NIR", "social security number"),
    "it_IT": ("codice fiscale", "tax code"),
    "nl_NL": ("BSN", "burgerservicenummer", "citizen service number"),
    "pt_BR": ("CPF",),
    "pl_PL": ("PESEL", "numer PESEL"),
    "en_CA": ("SIN", "social insurance number"),
}

_NAME_TEMPLATES = (
    "I'm {x}",
    "Hi, I'm {x} and my order never arrived.",
    "hello, I'm {x}. The parcel is late again",
    "This is {x}",
    "Hello, this is {x} from the billing team.",
    "My name is {x}",
    "my name is {x} and I need a refund",
    "Hi! My name's {x}, I have a question about my invoice.",
    "Thanks,\n{x}",
    "Thank you for your help.\n\nBest regards,\n{x}",
    "Cheers,\n{x}",
    "Kind regards,\n{x}",
    "the charger stopped working after two days\n— {x}",
    "Please cancel it. -- {x}",
    "Regards, {x}",
    "Sincerely,\n{x}\nCustomer since 2019",
)

_PHONE_TEMPLATES = (
    "my number is {x}",
    "call me on {x} please",
    "{x}",
    "You can reach me at {x} after 5pm.",
    "new phone: {x}",
    "(tel. {x})",
    "Phone {x}, email is the same as before",
    "Ring {x}!",
)

_EMAIL_TEMPLATES = (
    "my email is {x}",
    "send it to {x} please",
    "{x}",
    "Contact: {x}.",
    "I wrote from {x} yesterday",
)

_ID_TEMPLATES = (
    "my {label} is {x}",
    "{label}: {x}",
    "Here you go, {label} {x}.",
    "They asked for my {label}, it's {x}",
)

_POSTCODE_TEMPLATES = (
    "my zip code is {x}",
    "postcode {x}",
    "Postal code: {x}",
    "ZIP {x}, is delivery free there?",
    "do you deliver to {x}?",
    "I moved, the new post code is {x}.",
)

_EXPIRY_TEMPLATES = (
    "exp {x}",
    "expiry date {x}",
    "it expires {x}",
    "Expiration: {x}",
    "valid thru {x}",
    "card ending 4242, exp. {x}",
    "the card expires on {x}, CVV on the back",
    "Exp date is {x}",
)

_ADDRESS_TEMPLATES = (
    "please ship it to {x}",
    "my address is {x}",
    "{x}",
    "Deliver to:\n{x}",
)

#: Support chatter without PII: product words, figures, dates, versions.
_CLEAN_EXTRA = (
    "The Galaxy Buds Pro stopped charging after the 2.4.1 update.",
    "I ordered the Air Max 90 in size 42 on 2024-05-01 and got a 41.",
    "My Kindle Paperwhite shows 'Error 503' since Tuesday.",
    "Is the Dyson V15 Detect compatible with the Torque Drive head?",
    "I'm Not Sure what happened, the app says Payment Pending.",
    "This Is Ridiculous, I waited 3 weeks for a refund of 129.99 EUR.",
    "Thanks,\nThe Customer Care Team",
    "Hi, I'm looking for the Apple Watch Series 9 strap, 45 mm.",
    "Best regards,\nAccounts Payable",
    "Please escalate ticket 4471 to Tier 2 Support.",
    "My PlayStation 5 Slim keeps turning off at 10:45 PM.",
    "The IKEA Billy bookcase came without the 12 shelf pins.",
    "Can I pay with PayPal or Google Pay instead of a Visa card?",
    "order total 1,234.56 incl. VAT; delivery window 9-12",
    "Version 10.0.19045 of Windows, build 2024-2025 licence",
)


@dataclass(frozen=True)
class Sample:
    """One message holding one planted value.

    Attributes:
        kind: Kind of the value (one of :data:`KINDS`).
        locale: Faker locale that wrote it.
        region: Phone region of that locale.
        text: The whole message.
        value: The value as written in the message.
        start: Offset of the value in the message.
    """

    kind: str
    locale: str
    region: str
    text: str
    value: str
    start: int

    @property
    def end(self) -> int:
        """Offset after the value."""
        return self.start + len(self.value)


def _plant(template: str, value: str) -> tuple[str, int]:
    text = template.format(x=value, label="{label}")
    return text, text.index(value)


def _phone(fake: Faker, rng: random.Random) -> str:
    raw = re.split(r"\s*(?:x|ext\.?)\s*\d+$", fake.phone_number())[0].strip()
    style = rng.randrange(4)
    if style == 0:
        return raw
    # The same number with the writer's own separators: people drop the `(0)`, and write
    # `+1.415.555.0123`, `0115-496-0914`, `+44 115 496 0914`.
    bare = raw.replace("(0)", " ")
    sep = ".-  "[style]
    groups = [g for g in re.split(r"[\s().\-/]+", bare) if g]
    return sep.join(groups)


def _name(fake: Faker, rng: random.Random, locale: str) -> str:
    if locale == "ja_JP":
        return f"{fake.last_name()} {fake.first_name()}"
    name = f"{fake.first_name()} {fake.last_name()}"
    if rng.random() < 0.3:
        name = fake.first_name()
    return name


def _titled(fake: Faker, rng: random.Random, name: str) -> tuple[str, int]:
    """The name, sometimes after a title (`Dr.`, `Mrs`): returns the text and the name's offset."""
    if rng.random() < 0.15:
        try:
            title = str(fake.prefix())
        except AttributeError:
            return name, 0
        if title:
            return f"{title} {name}", len(title) + 1
    return name, 0


def _sample_name(fake: Faker, rng: random.Random, locale: str) -> tuple[str, str, int]:
    name = _name(fake, rng, locale)
    shown, offset = _titled(fake, rng, name)
    text = rng.choice(_NAME_TEMPLATES).format(x=shown)
    return text, name, text.index(shown) + offset


def _sample_id(fake: Faker, rng: random.Random, locale: str) -> tuple[str, str, int, str]:
    if locale in _NATIONAL_IDS:
        label, kind = rng.choice(_NATIONAL_IDS[locale]), "nationalid"
    elif locale == "en_IN" and rng.random() < 0.5:
        label, kind = "Aadhaar number", "nationalid"
    elif locale == "es_ES" and rng.random() < 0.5:
        label, kind = rng.choice(("DNI", "NIE", "NIF")), "nationalid"
    else:
        label, kind = rng.choice(("SSN", "social security number", "social security no.")), "ssn"
    if label == "Aadhaar number":
        value = str(fake.aadhaar_id())
    elif label in ("DNI", "NIF"):
        value = str(fake.nif())
    elif label == "NIE":
        value = str(fake.nie())
    elif label == "CPF" and rng.random() < 0.5:
        value = str(fake.cpf())
    else:
        value = str(fake.ssn())
    text = rng.choice(_ID_TEMPLATES).format(x=value, label=label)
    return text, value, text.index(value), kind


def _sample(fake: Faker, rng: random.Random, locale: str, kind: str) -> Sample:
    region = LOCALES[locale]
    if kind == "name":
        text, value, start = _sample_name(fake, rng, locale)
        return Sample(kind, locale, region, text, value, start)
    if kind in ("ssn", "nationalid"):
        text, value, start, real = _sample_id(fake, rng, locale)
        return Sample(real, locale, region, text, value, start)
    make: dict[str, tuple[tuple[str, ...], Callable[[], str]]] = {
        "phone": (_PHONE_TEMPLATES, lambda: _phone(fake, rng)),
        "email": (
            _EMAIL_TEMPLATES,
            lambda: str(rng.choice((fake.email, fake.free_email, fake.company_email))()),
        ),
        "postcode": (_POSTCODE_TEMPLATES, lambda: str(fake.postcode())),
        "expiry": (_EXPIRY_TEMPLATES, lambda: str(fake.credit_card_expire())),
        "address": (_ADDRESS_TEMPLATES, lambda: str(fake.street_address())),
    }
    templates, value_of = make[kind]
    value = value_of()
    text, start = _plant(rng.choice(templates), value)
    return Sample(kind, locale, region, text, value, start)


def corpus(per_locale: int, seed: int = 2026) -> Iterator[Sample]:
    """``per_locale`` samples of each kind in each locale (ids: one kind per locale), seeded."""
    rng = random.Random(seed)
    for i, locale in enumerate(LOCALES):
        fake = Faker(locale)
        fake.seed_instance(seed + i)
        for kind in KINDS:
            if kind == "nationalid":
                continue  # `_sample_id` picks ssn or another national id per locale
            for _ in range(per_locale):
                yield _sample(fake, rng, locale, kind)


def clean_messages(per_locale: int, seed: int = 2026) -> Iterator[str]:
    """Messages without PII: Faker sentences and paragraphs per locale, and support chatter."""
    rng = random.Random(seed)
    yield from _CLEAN_EXTRA
    for i, locale in enumerate(LOCALES):
        fake = Faker(locale)
        fake.seed_instance(seed + 100 + i)
        for _ in range(per_locale):
            yield str(fake.sentence()) if rng.random() < 0.6 else str(fake.paragraph())


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    for sample in corpus(n):
        print(f"{sample.locale} {sample.kind:10} {sample.text!r}  [{sample.value!r}]")


Span = tuple[int, int, str]

#: Kinds a person writes in pieces: found when the spans of the kind cover every letter of it.
_PIECEWISE = frozenset({"name", "address"})


def found(sample: Sample, spans: list[Span]) -> bool:
    """Whether ``spans`` (start, end, kind) scrub ``sample``'s value whole, as its own kind.

    A name or an address counts when spans of its kind together cover every letter and digit of
    it; any other value needs one span of its kind covering all of it.
    """
    if sample.kind in _PIECEWISE:
        covered = [(s, e) for s, e, k in spans if k == sample.kind]
        return all(
            any(s <= i < e for s, e in covered)
            for i in range(sample.start, sample.end)
            if sample.text[i].isalnum()
        )
    return any(s <= sample.start and e >= sample.end and k == sample.kind for s, e, k in spans)
