"""A seeded planted-PII corpus: short messages with one identifier each, in many formats.

Every :class:`Planted` item knows its kind, the exact text planted and the normalised value the
scrubber must produce, so recall is measured per kind. Used by the tests and by
`benchmarks/scrub_bench.py` (run ``python -m tests.privacy.planted_pii`` to print a sample).
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass

import phonenumbers

from casework.privacy.checksums import IBAN_LENGTHS

STRUCTURED_KINDS = ("email", "phone", "card", "iban", "ip", "url", "order")

#: The id pattern the corpus plants (configure it as `privacy.id_patterns`).
ORDER_PATTERN = {"order": r"\bORD-\d{6}\b"}

TEMPLATES = (
    "my {what} is {x}",
    "Hi, please use {x} from now on.",
    "{x}",
    "It's {x}, thanks!",
    "you can reach me at {x} after 5pm",
    "({x})",
    "details: {x}; ref 12 of 2023-04-05",
    "I already sent it to support twice — {x} — why no reply?",
    '"{x}"',
    "ok so {x}.",
    "Name on file differs but {x} is right",
    "{x}, {x2}",
    "new one: {x}\nold one: {x2}",
    "paid 49.99 on 12/03/2024, {what}: {x}",
)

CLEAN = (
    "Hello, I'd like a refund for my kettle please.",
    "The parcel arrived damaged, the box was crushed.",
    "Can you tell me when my order ships? It has been 3 days.",
    "I was charged twice, 24.99 each, on 2024-05-01.",
    "Thanks, that solved it!",
    "Why was my refund of 120 dollars declined?",
    "I want to cancel the subscription from next month.",
    "version 2.3.1 of the app crashes at 10:45 every day",
    "Order 12 of 40 pieces, 3 boxes, 1.5 kg each",
    "The item number on the label is 4471, size 42.",
)


@dataclass(frozen=True)
class Planted:
    """One identifier planted in a message.

    Attributes:
        kind: Kind of identifier.
        text: The exact text planted.
        value: The normalised value the scrubber must compute its pseudonym from.
        start: Offset in the message.
    """

    kind: str
    text: str
    value: str
    start: int
    core: str = ""
    """The identifier itself inside ``text`` (without `mailto:`, `tel:`, `<…>` or a port)."""

    @property
    def end(self) -> int:
        """Offset after the planted text."""
        return self.start + len(self.text)

    @property
    def core_start(self) -> int:
        """Offset of the identifier itself."""
        return self.start + self.text.find(self.core or self.text)

    @property
    def core_end(self) -> int:
        """Offset after the identifier itself."""
        return self.core_start + len(self.core or self.text)


@dataclass(frozen=True)
class Message:
    """A generated message and what was planted in it."""

    text: str
    planted: tuple[Planted, ...]


# ---------------------------------------------------------------------------------------------
# Generators, one per kind: (planted text, normalised value)


def _email(rng: random.Random) -> tuple[str, str, str]:
    first = rng.choice(["ada", "bo", "chen", "dana", "eli", "fatima", "gus", "hana", "ivo", "jo"])
    last = rng.choice(["fake", "testperson", "example", "sample", "nobody", "placeholder"])
    sep = rng.choice([".", "_", "-", ""])
    local = f"{first}{sep}{last}{rng.choice(['', str(rng.randint(1, 999))])}"
    if rng.random() < 0.2:
        local += "+" + rng.choice(["shop", "news", "x1"])
    domain = rng.choice(
        ["example.com", "example.org", "mail.example.net", "test-mail.example.co.uk", "ex.io"]
    )
    address = f"{local}@{domain}"
    style = rng.randrange(6)
    shown = address
    if style == 1:
        shown = address.upper()
    elif style == 2:
        shown = local.capitalize() + "@" + domain.capitalize()
    text = shown
    if style == 3:
        text = f"mailto:{shown}"
    elif style == 4:
        text = f"<{shown}>"
    return text, address.casefold(), shown


def _valid_phone(rng: random.Random, region: str) -> phonenumbers.PhoneNumber:
    types = [phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE]
    base = phonenumbers.example_number_for_type(region, rng.choice(types))
    assert base is not None
    national = str(base.national_number)
    for _ in range(200):
        keep = max(3, len(national) - 4)
        digits = national[:keep] + "".join(rng.choice(string.digits) for _ in national[keep:])
        candidate = phonenumbers.PhoneNumber(
            country_code=base.country_code, national_number=int(digits)
        )
        if phonenumbers.is_valid_number(candidate):
            return candidate
    return base


def _phone(rng: random.Random) -> tuple[str, str, str]:
    fmt = phonenumbers.PhoneNumberFormat
    national_ok = rng.random() < 0.5
    region = (
        rng.choice(["US", "GB"])
        if national_ok
        else rng.choice(["US", "GB", "DE", "FR", "AU", "IN", "NL", "ES", "BR", "JP"])
    )
    number = _valid_phone(rng, region)
    e164 = phonenumbers.format_number(number, fmt.E164)
    if national_ok:
        text = phonenumbers.format_number(number, fmt.NATIONAL)
        if region == "US" and rng.random() < 0.5:
            n = str(number.national_number)
            text = rng.choice([f"{n[:3]}.{n[3:6]}.{n[6:]}", f"{n[:3]}-{n[3:6]}-{n[6:]}", n])
        return text, e164, text
    style = rng.randrange(4)
    if style == 0:
        text = e164
    elif style == 1:
        text = phonenumbers.format_number(number, fmt.INTERNATIONAL)
    elif style == 2:
        text = "00" + phonenumbers.format_number(number, fmt.INTERNATIONAL)[1:]
    else:
        text = phonenumbers.format_number(number, fmt.RFC3966)
    return text, e164, text.removeprefix("tel:")


def _luhn_complete(prefix: str, length: int, rng: random.Random) -> str:
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    total = 0
    for i, ch in enumerate(reversed(body + "0")):
        d = int(ch)
        if i % 2 == 1:
            d = d * 2 - 9 if d * 2 > 9 else d * 2
        total += d
    return body + str((10 - total % 10) % 10)


def _card(rng: random.Random) -> tuple[str, str, str]:
    prefix, length = rng.choice(
        [("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("34", 15), ("37", 15), ("6011", 16),
         ("4", 13), ("4", 19), ("35", 16)]
    )  # fmt: skip
    digits = _luhn_complete(prefix, length, rng)
    style = rng.randrange(4)
    if style == 0 or length not in (15, 16):
        return digits, digits, digits
    sep = " " if style in (1, 3) else "-"
    if length == 15:
        groups = [digits[:4], digits[4:10], digits[10:]]
    else:
        groups = [digits[i : i + 4] for i in range(0, 16, 4)]
    return sep.join(groups), digits, sep.join(groups)


def _iban(rng: random.Random) -> tuple[str, str, str]:
    country = rng.choice(["GB", "DE", "FR", "NL", "ES", "IT", "BE", "CH", "IE", "PL", "NO", "AT"])
    length = IBAN_LENGTHS[country]
    if country in ("GB", "IE", "NL"):
        bank = "".join(rng.choice(string.ascii_uppercase) for _ in range(4))
        bban = bank + "".join(rng.choice(string.digits) for _ in range(length - 8))
    else:
        bban = "".join(rng.choice(string.digits) for _ in range(length - 4))
    rearranged = bban + country + "00"
    check = 98 - int("".join(str(int(ch, 36)) for ch in rearranged)) % 97
    iban = f"{country}{check:02d}{bban}"
    style = rng.randrange(3)
    if style == 0:
        text = iban
    elif style == 1:
        text = " ".join(iban[i : i + 4] for i in range(0, len(iban), 4))
    else:
        text = " ".join(iban[i : i + 4] for i in range(0, len(iban), 4)).lower()
    return text, iban, text


def _ip(rng: random.Random) -> tuple[str, str, str]:
    import ipaddress

    if rng.random() < 0.5:
        address = ".".join(str(rng.randint(1, 254)) for _ in range(4))
        text = address + (f":{rng.randint(1000, 9999)}" if rng.random() < 0.2 else "")
        return text, address, address
    v6 = ipaddress.IPv6Address(rng.getrandbits(128) & ((1 << 128) - 1))
    if rng.random() < 0.4:
        v6 = ipaddress.IPv6Address("2001:db8::" + format(rng.randint(1, 0xFFFF), "x"))
    style = rng.randrange(3)
    text = v6.exploded if style == 0 else v6.compressed if style == 1 else v6.compressed.upper()
    return text, v6.compressed, text


def _url(rng: random.Random) -> tuple[str, str, str]:
    host = rng.choice(["shop.example.com", "example.org", "www.example.net", "portal.example.io"])
    who = rng.choice(["jdoe", "ada.fake", "u12345", "chen-example", "42817"])
    path = rng.choice(
        [
            f"/users/{who}/orders",
            f"/account/{who}",
            f"/profile/{who}",
            f"/~{who}/cv.pdf",
            f"/@{who}",
            f"/in/{who}",
            f"/track?email={who}%40example.com",
            f"/reset?token=ab{rng.randint(10**6, 10**7)}",
        ]
    )
    scheme = (
        rng.choice(["https://", "http://", ""])
        if host.startswith("www.")
        else rng.choice(["https://", "http://"])
    )
    text = f"{scheme}{host}{path}"
    from casework.privacy import normalise

    return text, normalise("url", text), text


def _order(rng: random.Random) -> tuple[str, str, str]:
    text = f"ORD-{rng.randint(0, 999999):06d}"
    return text, text.casefold(), text


GENERATORS: dict[str, Callable[[random.Random], tuple[str, str, str]]] = {
    "email": _email,
    "phone": _phone,
    "card": _card,
    "iban": _iban,
    "ip": _ip,
    "url": _url,
    "order": _order,
}

_WHAT = {
    "email": "email",
    "phone": "number",
    "card": "card",
    "iban": "IBAN",
    "ip": "IP",
    "url": "link",
    "order": "order",
}


def planted_message(rng: random.Random, kind: str) -> Message:
    """One message with one (or two) identifiers of ``kind`` planted in a random template."""
    template = rng.choice(TEMPLATES)
    x, xv, xc = GENERATORS[kind](rng)
    x2, x2v, x2c = GENERATORS[kind](rng)
    before, _, rest = template.partition("{x}")
    before = before.replace("{what}", _WHAT[kind])
    planted = [Planted(kind, x, xv, len(before), xc)]
    text = before + x
    if "{x2}" in rest:
        mid, _, after = rest.partition("{x2}")
        planted.append(Planted(kind, x2, x2v, len(text) + len(mid), x2c))
        text = text + mid + x2 + after
    else:
        text += rest
    return Message(text, tuple(planted))


def corpus(n: int, seed: int = 7, clean_share: float = 0.3) -> list[Message]:
    """``n`` short messages: each plants one structured kind, or none (``clean_share`` of them)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        if rng.random() < clean_share:
            out.append(Message(rng.choice(CLEAN), ()))
        else:
            out.append(planted_message(rng, STRUCTURED_KINDS[i % len(STRUCTURED_KINDS)]))
    return out


if __name__ == "__main__":  # pragma: no cover - a look at the corpus for people
    for message in corpus(20):
        print(repr(message.text), [(p.kind, p.text) for p in message.planted])
