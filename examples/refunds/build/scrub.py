"""What the mining step does to a production row before it is written: keyed pseudonyms.

Every known value of the row (names and each part of them, emails, phone numbers, customer and
order ids, addresses) is replaced wherever it occurs — in the conversation, the fixtures, the state,
the label and the oracle — by ``kind_<12 hex>`` = HMAC-SHA256(key, kind + ":" + normalised value),
using :mod:`casework.privacy.pseudonyms`. The example was scrubbed with :data:`DEMO_KEY`, a key
published for the demo only (``CASEWORK_PSEUDONYM_KEY`` in the Makefile), so that
``casework dataset forget --email ...`` can find the rows of an example customer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from core import Facts

from casework.privacy import PseudonymKey, normalise, pseudonym

#: The example project's pseudonym key. Public on purpose: it protects nothing but invented people.
DEMO_KEY = b"larkspur-example-demo-key-not-secret-0001"
FINGERPRINT = PseudonymKey(secret=DEMO_KEY, source="examples/refunds").fingerprint
#: Scrubber version the example rows record.
SCRUB_VERSION = "1"

_ADDRESS_LIKE = re.compile(r"^\d+ .+, .+, [A-Z]{2} \d{5}$")
_ORDER_ID = re.compile(r"^ORD-\d{6}$")
_EMAIL = re.compile(r"^[^@\s]+@example\.com$")


def pseudo(kind: str, value: str) -> str:
    """The keyed pseudonym of one raw value."""
    return pseudonym(DEMO_KEY, kind, normalise(kind, value))


def known_values(f: Facts) -> list[tuple[str, str]]:
    """(kind, raw value) of every identifier the row's facts hold."""
    out: list[tuple[str, str]] = []
    for c in f.customers:
        masked = c.email[0] + "***@" + c.email.split("@")[1]
        out += [
            ("name", c.name),
            ("email", c.email),
            ("customer", c.id),
            ("phone", c.phone),
            ("address", c.address),
        ]
        out.append(("email", masked))
        out += [("name", part) for part in c.name.split(" ")]
    for o in f.orders:
        out.append(("order", o.id))
        if o.address:
            out.append(("address", o.address))
    for value in f.extra.values():
        if isinstance(value, str):
            if _ADDRESS_LIKE.match(value):
                out.append(("address", value))
            elif _ORDER_ID.match(value):
                out.append(("order", value))
            elif _EMAIL.match(value):
                out.append(("email", value))
    return out


@dataclass(frozen=True)
class Scrub:
    """A compiled replacement of a row's known values by their pseudonyms."""

    pattern: re.Pattern[str]
    table: dict[str, str]
    """Case-folded raw value -> pseudonym."""

    @classmethod
    def of(cls, f: Facts) -> Scrub:
        """The scrub for one row's facts (longest values first, so a full name beats its parts)."""
        table: dict[str, str] = {}
        for kind, raw in known_values(f):
            table.setdefault(raw.casefold(), pseudo(kind, raw))
        alternatives = sorted(table, key=lambda v: (-len(v), v))
        body = "|".join(re.escape(v) for v in alternatives)
        return cls(re.compile(rf"(?<![\w@.-])(?:{body})(?![\w@-])", re.IGNORECASE), table)

    def text(self, value: str) -> str:
        """``value`` with every known value replaced."""
        return self.pattern.sub(lambda m: self.table[m.group().casefold()], value)

    def json(self, value: Any) -> Any:
        """A JSON value with every string (and object key) scrubbed."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k): self.json(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.json(v) for v in value]
        return value

    def subjects(self, value: Any) -> list[str]:
        """Pseudonyms of this row's identifiers that occur in the scrubbed ``value``."""
        blob = repr(value)
        return sorted({p for p in self.table.values() if p in blob})
