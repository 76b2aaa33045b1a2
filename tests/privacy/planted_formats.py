"""Planted PII in the many ways people write it, built without looking at the detectors.

Each generator makes one identifier of a kind (`card`, `iban`, `phone`, `email`) from first
principles (its own Luhn and mod-97 arithmetic, the ISO 13616 lengths it needs, numbering plans)
and writes it with arbitrary grouping, separators, case and surrounding punctuation. Choices go
through a :class:`Pick`, so the same generators serve hypothesis (:class:`DrawPick`, in the
property test) and a seeded random corpus (:class:`RandomPick`, for the recall report:
``python -m tests.privacy.planted_formats [N]``).

Whether a planted value was scrubbed is judged on the path `casework mine` takes: the message
becomes a customer turn of a conversation, :func:`casework.mining.draft_case` scrubs it with the
scrubber a project's config describes (:func:`casework.privacy.scrubber_for`).
"""

from __future__ import annotations

import random
import re
import string
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol, TypeVar

import phonenumbers
from hypothesis import strategies as st

from casework.mining import RawConversation, draft_case
from casework.mining.conversation import RawMessage
from casework.mining.drafts import DraftOptions
from casework.privacy import PseudonymKey, Scrubber, scrubber_for
from casework.project import Config, Project

T = TypeVar("T")

KINDS = ("card", "iban", "phone", "email")

#: What people put between digit groups (single characters, runs of them, mixtures).
SEPARATORS = (
    " ", "-", ".", "/", "_", "\u00a0", "\u2009", "\u202f", "\u2007", "\u2010", "\u2011",
    "\u2013", "\u2014", "\u2212", " - ", " / ", "  ", " . ", "-\u00a0", "",
)  # fmt: skip

#: Text written right before an identifier (never a letter or digit touching it).
BEFORE = (
    "", " ", "(", "[", "{", '"', "'", "«", "“", ":", ": ", "#", "*", "→ ", "<", "=", "—", "\t",
    "\n", "no. ", "card: ", "tel:", "IBAN ", "Nr. ", "~",
)  # fmt: skip
#: Text written right after one.
AFTER = (
    "", " ", ")", "]", "}", '"', "'", "»", "”", ".", ",", "!", "?", ";", ":", "\n", "...", " ok",
    "*", ">", "—", " (new)", ").",
)  # fmt: skip
SENTENCES = (
    "{x}",
    "my card is {x} please refund it",
    "Hi, it's {x} — can you check?",
    "details{x}thanks",
    "You can reach me on {x} after 5pm, or email me.",
    "paid 49.99 on 12/03/2024 with {x} (order ORD-123456)",
    "New one:{x}\nOld one: none",
    "I WROTE IT TWICE: {x}, {x}",
)


class Pick(Protocol):
    """Where the generators' choices come from."""

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``."""
        ...

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high]``."""
        ...


class RandomPick:
    """Choices from a seeded :class:`random.Random`."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``."""
        return self.rng.choice(options)

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high]``."""
        return self.rng.randint(low, high)


class DrawPick:
    """Choices drawn by hypothesis (so failures shrink to a small example)."""

    def __init__(self, data: st.DataObject) -> None:
        self.data = data

    def choice(self, options: Sequence[T]) -> T:
        """One of ``options``."""
        return self.data.draw(st.sampled_from(options))

    def integer(self, low: int, high: int) -> int:
        """An integer in ``[low, high]``."""
        return self.data.draw(st.integers(low, high))


@dataclass(frozen=True)
class Planted:
    """An identifier as written, and the value its pseudonym must be computed from.

    Attributes:
        kind: `card`, `iban`, `phone` or `email`.
        text: As written (separators, case and all).
        value: Normalised: card digits, IBAN upper-case without separators, phone E.164, email
            decoded and case-folded.
    """

    kind: str
    text: str
    value: str


def _digits(pick: Pick, n: int) -> str:
    return "".join(pick.choice(string.digits) for _ in range(n))


def _group(pick: Pick, chars: str, sizes: Sequence[int] | None = None) -> str:
    """Cut ``chars`` into groups (given sizes, or random ones) joined by separators."""
    if sizes is None:
        sizes = []
        left = len(chars)
        while left > 0:
            size = min(left, pick.integer(1, 7))
            sizes.append(size)
            left -= size
    parts, pos = [], 0
    for size in sizes:
        parts.append(chars[pos : pos + size])
        pos += size
    if pos < len(chars):
        parts.append(chars[pos:])
    mixed = pick.integer(0, 2) == 0
    sep = pick.choice(SEPARATORS)
    out = parts[0]
    for part in parts[1:]:
        out += (pick.choice(SEPARATORS) if mixed else sep) + part
    return out


# -- cards ------------------------------------------------------------------------------------

#: Issuer prefixes and lengths (ISO/IEC 7812 ranges of networks in use).
CARD_RANGES = (
    ("4", (13, 16, 19)), ("51", (16,)), ("55", (16,)), ("2221", (16,)), ("2720", (16,)),
    ("34", (15,)), ("37", (15,)), ("6011", (16, 19)), ("65", (16,)), ("62", (16, 17, 18, 19)),
    ("35", (16, 19)), ("2200", (16,)), ("81", (16,)), ("9792", (16,)), ("50", (13, 16, 19)),
    ("6759", (16, 18, 19)), ("36", (14,)),
)  # fmt: skip


def luhn_complete(body: str) -> str:
    """``body`` plus the check digit that makes it pass Luhn (mod 10)."""
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch) * (2 if i % 2 == 0 else 1)
        total += d - 9 if d > 9 else d
    return body + str((10 - total % 10) % 10)


def card(pick: Pick) -> Planted:
    """A Luhn-valid card number in any grouping (4-4-4-4, Amex 4-6-5, random, none)."""
    prefix, lengths = pick.choice(CARD_RANGES)
    length = pick.choice(lengths)
    number = luhn_complete(prefix + _digits(pick, length - len(prefix) - 1))
    layout = pick.integer(0, 3)
    if layout == 0:
        text = _group(pick, number, [4] * (length // 4))
    elif layout == 1 and length == 15:
        text = _group(pick, number, [4, 6, 5])
    elif layout == 2:
        text = number
    else:
        text = _group(pick, number)
    return Planted("card", text, number)


# -- IBANs ------------------------------------------------------------------------------------

#: Country -> BBAN layout: `n` digits, `a` letters, `c` alphanumerics (ISO 13616 registry).
IBAN_LAYOUTS = {
    "GB": "aaaannnnnnnnnnnnnn", "DE": "nnnnnnnnnnnnnnnnnn", "FR": "nnnnnnnnnncccccccccccnn",
    "NL": "aaaannnnnnnnnn", "ES": "nnnnnnnnnnnnnnnnnnnn", "IT": "annnnnnnnnncccccccccccc",
    "BE": "nnnnnnnnnnnn", "CH": "nnnnncccccccccccc", "PL": "nnnnnnnnnnnnnnnnnnnnnnnn",
    "NO": "nnnnnnnnnnn", "AT": "nnnnnnnnnnnnnnnn", "IE": "aaaannnnnnnnnnnnnn",
    "SE": "nnnnnnnnnnnnnnnnnnnn", "DK": "nnnnnnnnnnnnnn", "PT": "nnnnnnnnnnnnnnnnnnnnn",
    "MT": "aaaannnnncccccccccccccccccc", "LU": "nnnccccccccccccc", "FI": "nnnnnnnnnnnnnn",
}  # fmt: skip


def _bban(pick: Pick, layout: str) -> str:
    out = []
    letters_left = 3  # real alphanumeric account parts are mostly digits
    for slot in layout:
        if slot == "n":
            out.append(pick.choice(string.digits))
        elif slot == "a":
            out.append(pick.choice(string.ascii_uppercase))
        else:
            letter = letters_left > 0 and pick.integer(0, 3) == 0
            letters_left -= letter
            out.append(pick.choice(string.ascii_uppercase if letter else string.digits))
    return "".join(out)


def _mod97(text: str) -> int:
    return int("".join(str(int(ch, 36)) for ch in text)) % 97


def iban(pick: Pick) -> Planted:
    """A valid IBAN in any case, grouped by four, not at all, or at random."""
    country = pick.choice(sorted(IBAN_LAYOUTS))
    bban = _bban(pick, IBAN_LAYOUTS[country])
    check = 98 - _mod97(bban + country + "00")
    value = f"{country}{check:02d}{bban}"
    layout = pick.integer(0, 3)
    if layout == 0:
        text = _group(pick, value, [4] * (len(value) // 4))
    elif layout == 1:
        text = value
    elif layout == 2:
        text = _group(pick, value, [2, 2, *([4] * (len(value) // 4))])
    else:
        text = _group(pick, value)
    case = pick.integer(0, 2)
    if case == 1:
        text = text.lower()
    elif case == 2:
        text = "".join(ch.lower() if pick.integer(0, 1) else ch for ch in text)
    return Planted("iban", text, value)


# -- phones -----------------------------------------------------------------------------------

#: Country code -> (national significant number lengths, leading digits) of mobile/fixed lines.
INTERNATIONAL = {
    "33": ((9,), "1234567"), "49": ((10, 11), "13"), "34": ((9,), "6789"), "31": ((9,), "16"),
    "61": ((9,), "2378"), "91": ((10,), "6789"), "39": ((10,), "3"), "81": ((10,), "9"),
    "55": ((11,), "1"), "44": ((10,), "127"),
}  # fmt: skip


def _nanp(pick: Pick) -> tuple[str, str]:
    """A North American number, assigned area code or not (`245-957-3870`): (digits, E.164)."""
    area = str(pick.integer(2, 9)) + _digits(pick, 2)
    exchange = str(pick.integer(2, 9)) + _digits(pick, 2)
    line = _digits(pick, 4)
    return area + exchange + line, f"+1{area}{exchange}{line}"


def phone(pick: Pick) -> Planted:
    """A phone-shaped number: North American, British or international, in common layouts."""
    style = pick.integer(0, 9)
    sep = pick.choice(SEPARATORS[:-1])
    if style <= 3:
        n, e164 = _nanp(pick)
        a, e, line = n[:3], n[3:6], n[6:]
        text = pick.choice(
            [
                f"({a}) {e}-{line}", f"({a}){e}{sep}{line}", f"{a}{sep}{e}{sep}{line}",
                f"+1 ({a}) {e}-{line}", f"+1{sep}{a}{sep}{e}{sep}{line}", f"1-{a}-{e}-{line}",
                f"001 {a} {e} {line}", f"{a}{e}{line}", f"+1{a}{e}{line}",
            ]
        )  # fmt: skip
        return Planted("phone", text, e164)
    if style <= 5:  # UK: London, other geographic, mobile
        kind = pick.integer(0, 2)
        if kind == 0:
            nsn = "20" + str(pick.integer(3, 8)) + _digits(pick, 7)
            national = f"0{nsn[:2]}{sep}{nsn[2:6]}{sep}{nsn[6:]}"
        elif kind == 1:
            nsn = "1" + str(pick.integer(2, 9)) + _digits(pick, 8)
            national = f"0{nsn[:4]}{sep}{nsn[4:]}"
        else:
            nsn = "7" + str(pick.integer(4, 9)) + _digits(pick, 8)
            national = f"0{nsn[:4]}{sep}{nsn[4:]}"
        text = pick.choice([national, f"(0{nsn[:4]}) {nsn[4:]}", f"+44{sep}{nsn}"])
        if text.startswith("+44") and pick.integer(0, 1):
            text = "+44 " + _group(pick, nsn)
        return Planted("phone", text, f"+44{nsn}")
    for _ in range(50):  # libphonenumber's "possible": the length fits the number's range
        code = pick.choice(sorted(INTERNATIONAL))
        lengths, leads = INTERNATIONAL[code]
        length = pick.choice(lengths)
        nsn = pick.choice(leads) + _digits(pick, length - 1)
        if phonenumbers.is_possible_number(phonenumbers.parse(f"+{code}{nsn}")):
            break
    lead = pick.choice(["+", "+", "00"])
    return Planted(
        "phone", f"{lead}{code}{pick.choice(SEPARATORS[:-1])}{_group(pick, nsn)}", f"+{code}{nsn}"
    )


# -- emails -----------------------------------------------------------------------------------


def email(pick: Pick) -> Planted:
    """An address in any case, maybe URL-encoded (`dana%40example.com`) or in `<…>`."""
    local = pick.choice(["dana", "j", "ada.fakename", "bo_chen", "eli-77", "x.y.z"])
    if pick.integer(0, 3) == 0:
        local += "+" + pick.choice(["shop", "1"])
    domain = pick.choice(["example.com", "mail.example.org", "sub.domain.example.co.uk", "ex.io"])
    value = f"{local}@{domain}"
    text = value
    case = pick.integer(0, 2)
    if case == 1:
        text = text.upper()
    elif case == 2:
        text = "".join(ch.upper() if pick.integer(0, 1) else ch for ch in text)
    if pick.integer(0, 3) == 0:
        text = text.replace("@", pick.choice(["%40", "%40"]))
    return Planted("email", text, value.casefold())


GENERATORS: dict[str, Callable[[Pick], Planted]] = {
    "card": card,
    "iban": iban,
    "phone": phone,
    "email": email,
}


def message(pick: Pick, planted: Planted) -> str:
    """A customer message holding ``planted``, with punctuation (never a letter) touching it."""
    sentence = pick.choice(SENTENCES)
    if sentence == "details{x}thanks":  # punctuation is all that stands between words and value
        before = pick.choice([":", ": ", "=", "(", "#", "\n", " ", "\t", "→"])
        after = pick.choice([". ", ")", ";", " ", "\n", "!", ","])
    else:
        before, after = pick.choice(BEFORE), pick.choice(AFTER)
    return sentence.replace("{x}", before + planted.text + after)


# -- the path `casework mine` takes -----------------------------------------------------------

KEY = PseudonymKey(b"planted-formats-key-7f3a91c0b27d4e58", "test")
_OPTIONS = DraftOptions("refunds", "dev", datetime(2026, 11, 1, tzinfo=UTC), 30)


def mining_scrubber() -> Scrubber:
    """The scrubber `casework mine` builds for a project with the default privacy config."""
    return scrubber_for(Project(root=Path("."), config=Config()), KEY)


def scrub_as_mined(scrubber: Scrubber, text: str) -> str:
    """The draft case `casework mine` makes of one customer message, as JSON."""
    conv = RawConversation(
        "planted-session",
        (RawMessage("user", text), RawMessage("assistant", "Let me check that for you.")),
        "planted:1",
    )
    case = draft_case(conv, scrubber, _OPTIONS, [])
    assert case is not None
    return case.model_dump_json()


def scrubbed(scrubber: Scrubber, planted: Planted, draft: str) -> bool:
    """Whether the draft holds the value's pseudonym and neither the text nor its bare value."""
    bare = planted.value.lstrip("+").casefold()
    folded = draft.casefold()
    return (
        scrubber.pseudonym(planted.kind, planted.value, normalised=True) in draft
        and planted.text.casefold() not in folded
        and bare not in folded
    )


#: Digit groups written like a date, a money amount or a version (`2.3.1`; here any dotted run of
#: two to four parts starting with one or two digits, a little wider than the scrubber's rule):
#: by design they end a card or phone number
#: (`ORD-123456 2024-05-01`, `49.99 49.99 49.99 49.99` are not cards). Randomly grouped numbers
#: sometimes look like that; they are counted apart.
_FIGURE = re.compile(
    r"(?<![\d.,])\d{1,3}\.\d{2}(?!\d)(?!\.\d)"
    r"|(?:19|20)\d\d[-/.]\d{1,2}[-/.]\d{1,2}(?!\d)"
    r"|(?<!\d)\d{1,2}[-/.]\d{1,2}[-/.](?:19|20)\d\d"
    r"|(?<!\d)(?:19|20)\d\d[-/\u2013](?:19|20)\d\d(?!\d)"
    r"|(?<![\d/])\d{1,2}/\d{1,2}/\d{2}(?![\d/])"
    r"|(?<![\d.])\d{1,2}(?:\.\d{1,5}){1,3}(?!\d)(?!\.\d)"
)


def looks_like_a_figure(planted: Planted) -> bool:
    """Whether a card or phone number holds a piece written like a date or an amount."""
    return planted.kind in ("card", "phone") and _FIGURE.search(planted.text) is not None


@dataclass(frozen=True)
class Recall:
    """Recall of one kind on the seeded corpus.

    Attributes:
        kind: The kind.
        planted: Identifiers planted.
        found: Of those, scrubbed (pseudonym present, text and bare value gone).
        figures: Planted identifiers holding a date- or amount-shaped piece (see
            :func:`looks_like_a_figure`).
        figures_found: Of those, scrubbed.
    """

    kind: str
    planted: int
    found: int
    figures: int
    figures_found: int


def recall(n: int, seed: int = 2026) -> list[Recall]:
    """Recall per kind over ``n`` seeded messages per kind, through the mining path."""
    rng = random.Random(seed)
    scrubber = mining_scrubber()
    out = []
    for kind in KINDS:
        found = figures = figures_found = 0
        for _ in range(n):
            pick = RandomPick(rng)
            planted = GENERATORS[kind](pick)
            hit = scrubbed(scrubber, planted, scrub_as_mined(scrubber, message(pick, planted)))
            found += hit
            if looks_like_a_figure(planted):
                figures += 1
                figures_found += hit
        out.append(Recall(kind, n, found, figures, figures_found))
    return out


if __name__ == "__main__":  # pragma: no cover - the recall report for docs/privacy.md
    size = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    print(
        "| kind | planted | scrubbed | recall | written with a date/amount-shaped group (found) |"
    )
    print("| --- | ---: | ---: | ---: | ---: |")
    for r in recall(size):
        print(
            f"| `{r.kind}` | {r.planted:,} | {r.found:,} | {r.found / r.planted:.4f} "
            f"| {r.figures} ({r.figures_found}) |"
        )
