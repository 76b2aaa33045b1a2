"""PII detectors: email, phone (E.164), card, IBAN, IP, personal URLs, addresses, id patterns.

Each detector implements the :class:`Detector` protocol: ``find(text)`` yields :class:`Detection`
spans carrying the normalised value; :func:`casework.privacy.registry.builtin_detectors` lists
the built-in ones in the order the scrubber runs them.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterator, Mapping, Sequence
from functools import lru_cache
from typing import ClassVar
from urllib.parse import parse_qsl, urlsplit

import phonenumbers

from casework.errors import ConfigError
from casework.privacy.checksums import IBAN_LENGTHS, iban_valid, luhn_valid
from casework.privacy.detection import SEP, SEP_OR_BRACKET, Cue, Detection, Detector, text_scan
from casework.privacy.prefilter import (
    SEP_RE2,
    Gate,
    ascii_superset,
    digit_run,
    left_edge,
    pattern_gate,
)
from casework.privacy.pseudonyms import (
    KIND_RE,
    PhoneReading,
    normalise,
    possible_e164,
    read_phone,
    trunk_optional,
)

__all__ = [
    "BUILTIN_KINDS",
    "CardDetector",
    "Detection",
    "Detector",
    "EmailDetector",
    "IbanDetector",
    "IpDetector",
    "PatternDetector",
    "PhoneDetector",
    "StreetAddressDetector",
    "UrlDetector",
    "id_pattern_detectors",
]

_NON_DIGIT = re.compile(r"\D")

#: Kinds the built-in detectors produce.
BUILTIN_KINDS = (
    "email",
    "phone",
    "card",
    "iban",
    "ip",
    "url",
    "address",
    "ssn",
    "nationalid",
    "postcode",
    "expiry",
    "name",
)


# ---------------------------------------------------------------------------------------------
# Detectors


class EmailDetector:
    """Email addresses, also URL-encoded (`dana%40example.com`); normalised decoded, case-folded."""

    kind = "email"
    cue = Cue(chars=("@", "%40"))
    # Every match holds a `@` or a `%40`, so a `@` or a `%`. Not the `%40` itself, nor the
    # name's character before the `@` and the domain's after it: each character a pattern
    # names apart (`4`, `0`, letters, digits) is a class of its own in the RE2 set's automaton,
    # whose every state then learns a transition for it. Cold, on the benchmark's first 400
    # messages, the short set cost 30,700 instructions a message with those, 22,900 without;
    # of the benchmark's 40,000 messages, 5,022 pass instead of 4,498 (`/@handle` in URLs).
    gate = Gate.any_of("@|%")
    _re = re.compile(
        r"[\w.%+'-]+(?:@|%40)(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+[^\W\d_]{2,24}(?![\w-])",
        re.IGNORECASE,
    )

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every email address in ``text``."""
        if "@" not in text and "%40" not in text:
            return
        for m in self._re.finditer(text):
            start, raw = m.start(), m.group()
            stripped = raw.lstrip("'.")
            start += len(raw) - len(stripped)
            if stripped.startswith(("@", "%40")):
                continue
            yield Detection(start, m.end(), self.kind, normalise(self.kind, stripped))


# Patterns that open with a lookbehind start with `(?=\d)` (or the class of their first
# character): the regex engine then skips ahead to candidate characters instead of trying the
# lookbehind at every position, which made these scans several times slower.
_DATE = re.compile(
    r"(?=\d)(?:(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)|(?<!\d)(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})"
    r"|(?<!\d)(?:19|20)\d\d[-/\u2013](?:19|20)\d\d(?!\d)"
    r"|(?<![\d/])\d{1,2}/\d{1,2}/\d{2}(?![\d/]))"
)


def _date_blank(m: re.Match[str]) -> str:
    if m.group(1) is None and m.group(6) is None:  # a range of years, or d/m/yy
        return "x" * len(m.group())
    year, a, b = (
        (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(6), m.group(4), m.group(5))
    )
    real = year.startswith(("19", "20")) and 1 <= int(a) <= 31 and 1 <= int(b) <= 31
    return "x" * len(m.group()) if real else m.group()


#: A money amount (`49.99`, `1,234.56`: two decimals, no further `.digit`), or a version or
#: decimal (`2.3.1`, `v10.0.19045`, `0.75`: two to four parts, the first of one or two digits,
#: one part a single digit).
_AMOUNT_OR_VERSION = re.compile(
    r"(?=\d)(?:(?<![\d.,])\d{1,3}(?:,\d{3})*\.\d{2}(?!\d)(?!\.\d)"
    r"|(?<![\d.+])(?=[\d.]*(?<![\d])\d(?![\d]))\d{1,2}(?:\.\d{1,5}){1,3}(?!\d)(?!\.\d))"
)


#: What every match of `_DATE` holds: one of `-`, `/`, `.`, `–`, then one or two digits and
#: one of `-`, `/`, `.` (its first, second and fourth forms: `2024-05-01`, `12/03/2024`,
#: `5/1/24`), or `19` or `20` and two digits (a range of years, `2024-2025`). A text without
#: it has no date, and `_DATE.sub` would return it unchanged. The older hint (a digit, a
#: separator, a digit) let through every phone and card number written with dashes or dots,
#: and `_DATE` is tried at every character of the text; this one, opening with a class, lets
#: the engine skip to the separators.
_DATE_HINT = re.compile(r"[-/.\u2013](?:\d\d?[-/.]|[12][09]\d\d)")
#: What every match of `_AMOUNT_OR_VERSION` holds: a digit, a `.`, a digit (`49.99`, `2.3.1`).
_AMOUNT_HINT = re.compile(r"\d\.\d")


def _covering(covered: Sequence[tuple[int, int]], start: int, end: int) -> int | None:
    """Index of the first of ``covered`` that holds ``start``..``end`` whole, if any."""
    for i, (s, e) in enumerate(covered):
        if s <= start and end <= e:
            return i
    return None


@lru_cache(maxsize=16)
def _without_figures(text: str) -> str:
    """``text`` with dates, money amounts and versions blanked out (offsets kept).

    Dates are `2024-05-01`, `12/03/2024`, `5/1/24`, `2024-2025`; amounts `49.99`; versions
    `2.3.1`. None is part of a card or phone number, even next to another figure
    (`ORD-123456 2024-05-01`, `49.99 49.99 49.99 49.99`, `0.1.0 1747341706`). Cached for the
    last few texts: the card and the phone detectors both ask for the same text in turn.
    """
    if ("-" in text or "/" in text or "." in text or "\u2013" in text) and _DATE_HINT.search(
        text
    ) is not None:
        text = _DATE.sub(_date_blank, text)
    # Searched after the dates are blanked: `sub` reads that text, and blanking adds no digit.
    if "." in text and _AMOUNT_HINT.search(text) is not None:
        text = _AMOUNT_OR_VERSION.sub(lambda m: "x" * len(m.group()), text)
    return text


class PhoneDetector:
    """Phone numbers, normalised to E.164 with the `phonenumbers` library.

    Numbers written with `+` or `00` are read as international; others are tried against
    ``regions`` in order. Phone-shaped is enough: besides valid numbers, a number libphonenumber
    calls possible (full length, e.g. an unassigned area code: `245-957-3870`) counts too.
    Read nationally, a number's digit groups after the first hold two digits or more (single
    digits between separators are arithmetic), a North American one is grouped 3-3-4, 3-7, 6-4
    or 10 (and, if not valid, has an area code and exchange starting 2–9), and others are only
    read with their region's trunk prefix (`0` in the UK: see
    :func:`casework.privacy.pseudonyms.read_phone`). Dates and money amounts end a number. A run of digit groups that does not read whole is searched
    for its longest sub-run that does, so a number followed by another figure is still found.
    """

    kind = "phone"
    cue = Cue(run=7)
    gate = Gate.any_of(digit_run(7))
    _re = re.compile(
        rf"(?=[\d+(\s])(?<![\w+])(?<!\d[.,:])(?:\+|00)?\s?\(?\d[\d{SEP_OR_BRACKET[1:]}{{5,40}}\d(?![\w])"
    )
    _group = re.compile(r"\+?\(?(\d+)\)?")
    _dotted_quad = re.compile(r"\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}")

    def __init__(self, regions: Sequence[str] = ("US", "GB")) -> None:
        self.regions = tuple(regions)
        self._national_lengths = self._lengths(self.regions)
        self._leads: dict[int, tuple[str, ...]] = {}
        for lead, lengths in self._plausible_shapes(self.regions):
            for n in lengths:
                self._leads[n] = (*self._leads.get(n, ()), lead)
        self._elsewhere = tuple(
            r for r in self.regions if phonenumbers.country_code_for_region(r.upper()) != 1
        )

    @staticmethod
    def _lengths(regions: Sequence[str]) -> frozenset[int]:
        """Digit counts a national number of ``regions`` can have (with trunk or country code)."""
        out: set[int] = set()
        for region in regions:
            meta = phonenumbers.PhoneMetadata.metadata_for_region(region.upper())
            if meta is None:
                raise ConfigError(
                    "casework.toml", None, "privacy.phone_regions", "unknown region", region
                )
            desc = meta.general_desc
            for n in desc.possible_length if desc is not None else ():
                out.update(
                    {n, n + len(meta.national_prefix or ""), n + len(str(meta.country_code))}
                )
        return frozenset(out)

    @staticmethod
    def _plausible_shapes(regions: Sequence[str]) -> tuple[tuple[str, frozenset[int]], ...]:
        """(leading digits, digit counts) a national number of ``regions`` can be written with.

        A region whose numbers are written with their trunk prefix (`0` in the UK) needs it; North
        American numbers may carry their `1`; any number may start with its country code.
        """
        shapes: list[tuple[str, frozenset[int]]] = []
        for region in regions:
            meta = phonenumbers.PhoneMetadata.metadata_for_region(region.upper())
            if meta is None or meta.general_desc is None:
                continue
            lengths = tuple(meta.general_desc.possible_length)
            prefix = meta.national_prefix or ""
            code = str(meta.country_code)
            shapes.append((code, frozenset(n + len(code) for n in lengths)))
            if prefix:
                shapes.append((prefix, frozenset(n + len(prefix) for n in lengths)))
            if not prefix or meta.country_code == 1 or trunk_optional(region.upper()):
                shapes.append(("", frozenset(lengths)))
        return tuple(shapes)

    def _plausible(self, digits: str) -> bool:
        """A cheap filter before libphonenumber: the digits fit a region's leading digits and length.

        Reading a number with libphonenumber costs about a hundred times this check, and most
        digit runs in a message (cards, IBANs, order ids, their sub-runs) fail it.
        """
        return digits.startswith(self._leads.get(len(digits), ()))

    def _valid(self, raw: str, groups: Sequence[str]) -> str | None:
        """The E.164 form of ``raw`` if it reads as a phone number; ``groups`` are its digit groups.

        The groups come from the one pass over the candidate that found them: every check on
        the shape of the number (its length, leading digits, single-digit groups, North American
        grouping) reads them instead of searching ``raw`` again.
        """
        digits = sum(map(len, groups))
        if digits < 7 or digits > 15:
            return None
        international = raw.lstrip("( ").startswith(("+", "00"))
        if not international:
            if digits not in self._national_lengths:
                return None
            if raw.count(".") >= 3 and self._dotted_quad.search(raw):
                return None
            if any(len(g) == 1 for g in groups[1:]):
                return None  # single digits between separators are arithmetic, not a phone number
            if not self._plausible("".join(groups)):
                return None
        if international:
            return possible_e164(raw.lstrip("( "))
        sizes = tuple(map(len, groups))
        if not self._nanp_grouped(sizes):
            # Were it read as North American, it would be dropped below for its grouping: read
            # it in the other regions only (the same answer, without parsing it as one first).
            return self._read_elsewhere(raw)
        reading = read_phone(raw, self.regions)
        if reading is None:
            return None
        if self._north_american(reading) and not self._nanp_shaped(sizes, reading):
            # Not grouped like a North American number: it may still be another region's.
            return self._read_elsewhere(raw)
        return reading.e164

    def _read_elsewhere(self, raw: str) -> str | None:
        """The E.164 form of a national number read outside North America, if any.

        Only the E.164 form is asked for: with one region to read it in, no reading needs to
        say whether the number is valid (:func:`casework.privacy.pseudonyms.possible_e164`).
        """
        if len(self._elsewhere) == 1:
            return possible_e164(raw, self._elsewhere[0])
        reading = read_phone(raw, self._elsewhere) if self._elsewhere else None
        return reading.e164 if reading is not None else None

    @staticmethod
    def _north_american(reading: PhoneReading) -> bool:
        meta = phonenumbers.PhoneMetadata.metadata_for_region(reading.region or "")
        return meta is not None and meta.country_code == 1

    _NANP_GROUPS = frozenset({(3, 3, 4), (3, 7), (10,), (6, 4)})

    def _nanp_grouped(self, sizes: tuple[int, ...]) -> bool:
        """Whether digit groups of ``sizes`` are 3-3-4, 3-7, 6-4 or 10 (after an optional `1`), or 11."""
        if sizes[:1] == (1,):
            sizes = sizes[1:]
        return sizes in self._NANP_GROUPS or sizes == (11,)

    def _nanp_shaped(self, sizes: tuple[int, ...], reading: PhoneReading) -> bool:
        """Whether a North American number is written like one.

        Its digit groups are 3-3-4, 3-7, 6-4 or 10 (after an optional leading `1`), and, when
        it is not a valid (assigned) number, its area code and exchange start 2–9. So a year range
        `2024-2025 10` is not a phone number, and `245-957-3870` is.
        """
        if not self._nanp_grouped(sizes):
            return False
        if sizes[:1] == (1,):
            sizes = sizes[1:]
        if sizes == (3, 3, 4):
            return True  # written like a phone number: scrubbed even with an unassigned area code
        n = reading.national
        return reading.valid or (len(n) == 10 and n[0] in "23456789" and n[3] in "23456789")

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every phone number in ``text``."""
        yield from self._find(text, (), set())

    def find_outside(
        self, text: str, covered: Sequence[tuple[int, int]]
    ) -> tuple[list[Detection], set[int]]:
        """Phone numbers in ``text`` outside runs of digits lying wholly in a ``covered`` span.

        The scrubber passes the spans found before this detector: a run of digit groups inside
        an IBAN or a card is not read as a phone number (libphonenumber is the dearest step of
        scrubbing), since the longer span there wins. Returns the numbers and the indices of the
        covered spans it relied on: should one of those lose to another span, the scrubber
        calls :meth:`find` instead.
        """
        used: set[int] = set()
        return list(self._find(text, covered, used)), used

    def _find(
        self, text: str, covered: Sequence[tuple[int, int]], used: set[int]
    ) -> Iterator[Detection]:
        if text_scan(text).longest < 7:
            return
        for m in self._re.finditer(_without_figures(text)):
            raw = text[m.start() : m.end()]
            lead = len(raw) - len(raw.lstrip())
            start = m.start() + lead
            inside = _covering(covered, start, m.end()) if covered else None
            if inside is not None:
                used.add(inside)
                continue
            raw = raw.strip()
            groups = [(g.start(), g.end(), g.group(1)) for g in self._group.finditer(raw)]
            e164 = self._valid(raw, [g[2] for g in groups])
            if e164 is not None:
                yield Detection(start, m.end(), self.kind, e164)
                continue
            yield from self._sub_runs(raw, start, groups)

    def _sub_runs(
        self, raw: str, offset: int, groups: list[tuple[int, int, str]]
    ) -> Iterator[Detection]:
        best: tuple[int, int, str] | None = None
        for i in range(len(groups)):
            digits = 0
            spans: list[tuple[int, int]] = []
            for j in range(i, len(groups)):
                digits += len(groups[j][2])
                if digits > 15:
                    break
                if digits >= 7:
                    spans.append((j, digits))
            for j, _ in reversed(spans):
                if best is not None and groups[j][1] - groups[i][0] <= best[1] - best[0]:
                    break
                e164 = self._valid(
                    raw[groups[i][0] : groups[j][1]], [g[2] for g in groups[i : j + 1]]
                )
                if e164 is not None:
                    best = (groups[i][0], groups[j][1], e164)
                    break
        if best is not None:
            yield Detection(offset + best[0], offset + best[1], self.kind, best[2])


_CARD_FIRST = frozenset("23456789")


class CardDetector:
    """Payment card numbers: 13–19 digits, Luhn-valid, grouped any way with any separators.

    Groups may be separated by up to three separator characters (spaces of every width, dashes,
    dots, slashes, underscores: `4111.1111.1111.1111`, `4111 - 1111 - 1111 - 1111`). Numbers
    start 2–9, the ISO/IEC 7812 issuer ranges of payment cards (Mir 2, Amex 3, Visa 4, Mastercard
    5, Discover and UnionPay 6, RuPay 8, Troy 9…): no card starts 0 (`00…` dials abroad), and
    1 is the airline-only UATP range but also how every Unix timestamp in milliseconds (13 digits)
    or nanoseconds (19 digits) starts until 2033 — a tenth of which pass Luhn. Dates and money
    amounts never join a card (`ORD-123456 2024-05-01` is 14 digits).
    """

    kind = "card"
    cue = Cue(run=13)
    gate = Gate.any_of(digit_run(13))
    # A dot straight after a digit and before a space ends a sentence (`1747341706. 100`), so it
    # never joins groups; a spaced dot (`4111 . 1111`) and a bare one (`4111.1111`) still do.
    _re = re.compile(
        rf"(?=[0-9])(?<![\d+])(?<!\d[.,:])[0-9](?:(?!\.\s){SEP}{{0,3}}[0-9]){{12,}}(?![0-9])"
    )
    _group = re.compile(r"[0-9]+")

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every Luhn-valid card number in ``text``.

        Within a run of digit groups, each group start yields its longest valid window; the
        scrubber's overlap resolution then keeps the best non-overlapping ones (so a card
        right after an IBAN or another card is still found).
        """
        yield from self._find(text, (), set())

    def find_outside(
        self, text: str, covered: Sequence[tuple[int, int]]
    ) -> tuple[list[Detection], set[int]]:
        """Card numbers outside runs lying wholly in a ``covered`` span (see `PhoneDetector`)."""
        used: set[int] = set()
        return list(self._find(text, covered, used)), used

    def _find(
        self, text: str, covered: Sequence[tuple[int, int]], used: set[int]
    ) -> Iterator[Detection]:
        if text_scan(text).longest < 13:
            return
        for m in self._re.finditer(_without_figures(text)):
            inside = _covering(covered, m.start(), m.end()) if covered else None
            if inside is not None:
                used.add(inside)
                continue
            raw = m.group()
            groups = [(g.start(), g.end()) for g in self._group.finditer(raw)]
            for i, (first, _) in enumerate(groups):
                if len(raw) - first < 13:
                    break  # fewer than a card's thirteen digits (or any characters) left
                if raw[first] not in _CARD_FIRST:
                    continue  # every window from group `i` starts with this digit
                found = self._longest_from(raw, groups, i)
                if found is not None:
                    j, digits = found
                    yield Detection(
                        m.start() + groups[i][0], m.start() + groups[j][1], self.kind, digits
                    )

    @staticmethod
    def _longest_from(raw: str, groups: list[tuple[int, int]], i: int) -> tuple[int, str] | None:
        digits = ""
        candidates: list[tuple[int, str]] = []
        for j in range(i, len(groups)):
            digits += raw[groups[j][0] : groups[j][1]]
            if len(digits) > 19:
                break
            if len(digits) >= 13 and digits[0] in _CARD_FIRST and luhn_valid(digits):
                candidates.append((j, digits))
        return candidates[-1] if candidates else None


def _iban_start() -> str:
    """An RE2 pattern for an IBAN's first four characters: a registry country, two digits."""
    seconds: dict[str, str] = {}
    for country in sorted(IBAN_LENGTHS):
        seconds[country[0]] = seconds.get(country[0], "") + country[1]
    countries = "|".join(f"{a}{SEP_RE2}{{0,3}}[{b}]" for a, b in seconds.items())
    return f"(?i:{countries}){SEP_RE2}{{0,3}}[0-9]{SEP_RE2}{{0,3}}[0-9]"


class IbanDetector:
    """IBANs in any case and grouping, checked by country length and mod 97.

    Separators (up to three characters: spaces of every width, dashes, dots, slashes,
    underscores) may stand between any two characters, the country code and check digits
    included (`GB 82 WEST …`, `gb82-west-1234…`), except an abbreviation dot after the country
    code (`no. 4074…` is a number, not Norway). The country must be one of the ISO 13616
    registry and the number must hold at least 8 digits, so words in a sentence never join up
    into one.
    """

    kind = "iban"
    cue = Cue(digits=8)
    # Where the pattern below starts: a registry country's code and two digits, separators
    # aside. (Counting the text's digits too would multiply the states of the RE2 set.) Any two
    # letters instead of the countries learnt fewer states (cold, on the benchmark's first 400
    # messages, 14,500 instructions a message less) but let the detector run on 2.4 times as
    # many texts (`of 40`, `on 12`): 12,000 instructions a message more once the states are
    # learnt, which is most of a long run.
    _start = re.compile(
        rf"[A-Za-z](?<![A-Za-z0-9][A-Za-z]){SEP}{{0,3}}(?P<b>[A-Za-z])(?!\.\s)"
        rf"{SEP}{{0,3}}[0-9]{SEP}{{0,3}}[0-9]"
    )
    # Only where `_start`'s lookbehind lets a match start, not inside a word or a number
    # (`left_edge`): without it the country's letters were looked for at every letter of every
    # word, each a thread the RE2 set's automaton carries.
    gate = Gate.any_of(left_edge(_start) + f"(?:{_iban_start()})")
    _sep = re.compile(SEP)
    #: An IBAN of each registry length as written: that many letters and digits, up to three
    #: separator characters between two of them. The quantifiers are possessive: separators and
    #: letters never overlap, so giving any back cannot help a match, and a failing candidate
    #: (`at 415 …` read as Austria) is rejected without the engine backtracking through it.
    _shapes: ClassVar[dict[int, re.Pattern[str]]] = {
        n: re.compile(rf"(?:[A-Za-z0-9]{SEP}{{0,3}}+){{{n - 1}}}+[A-Za-z0-9]")
        for n in sorted(set(IBAN_LENGTHS.values()))
    }

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every valid IBAN in ``text``."""
        if text_scan(text).digits < 8:
            return
        pos = 0
        while True:
            m = self._start.search(text, pos)
            if m is None:
                return
            found = self._read(text, m.start(), (text[m.start()] + m.group("b")).upper())
            if found is None:
                pos = m.start() + 1
                continue
            end, iban = found
            yield Detection(m.start(), end, self.kind, iban)
            pos = end

    @classmethod
    def _read(cls, text: str, start: int, country: str) -> tuple[int, str] | None:
        """The IBAN of ``country``'s registry length written from ``start``, if valid."""
        length = IBAN_LENGTHS.get(country)
        if length is None:
            return None  # not a registry country: most candidates end here
        m = cls._shapes[length].match(text, start)
        if m is None:
            return None
        # the IBAN must end at a word edge: not in the middle of a run of letters/digits
        if m.end() < len(text) and text[m.end()].isalnum():
            return None
        candidate = cls._sep.sub("", m.group()).upper()
        # `map` calls `str.isdigit` from C: a generator of `ch.isdigit()` cost a fifth of this
        # detector's time.
        if sum(map(str.isdigit, candidate)) < 8 or not iban_valid(candidate):
            return None
        return m.end(), candidate


class IpDetector:
    """IPv4 and IPv6 addresses (validated by :mod:`ipaddress`; v6 normalised to compressed form)."""

    kind = "ip"
    # IPv4 holds dots, IPv6 colons. No gate of its own: the prefilter matches the cue's `.` and
    # `:`, and `find` counts them. Four numbers joined by dots (`[0-9]{1,3}\.[0-9]{1,3}…`), read
    # in the RE2 set beside the other gates' runs of digits, made it learn more states: cold,
    # on the benchmark's first 400 messages, 37,500 instructions a message for the set against
    # 31,900 with the two characters (two colons around hex digits alone: 31,800).
    cue = Cue(chars=(".", ":"))
    _v4 = re.compile(
        r"(?=\d)(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
        r"(?!\.?\d)(?![\w])"
    )
    _v6 = re.compile(
        r"(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|(?:\d{1,3}\.){3}\d{1,3})?(?![\w:])"
    )
    _v6_hint = re.compile(r":[0-9A-Fa-f]{0,4}:")

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every IP address in ``text``."""
        # An IPv4 address holds three dots and four digits or more in one run.
        if text.count(".") >= 3 and text_scan(text).longest >= 4:
            for m in self._v4.finditer(text):
                yield Detection(m.start(), m.end(), self.kind, m.group())
        # Every IPv6 match holds two colons with up to four hex digits between them (its first
        # two groups): one search that skips to colons, where `_v6` is tried at every character.
        if self._v6_hint.search(text) is not None:
            for m in self._v6.finditer(text):
                raw = m.group()
                try:
                    address = ipaddress.IPv6Address(raw)
                except ValueError:
                    continue
                yield Detection(m.start(), m.end(), self.kind, address.compressed)


class UrlDetector:
    """URLs that point at a person.

    Personal means: a path segment after a personal marker (`/users/…`, `/account/…`, `/in/…`),
    a `~name` or `@handle` segment, credentials, or a personal query parameter (`?email=`).
    """

    kind = "url"
    cue = Cue(chars=("://", "www."))
    _re = re.compile(r"(?:\b[a-zA-Z][a-zA-Z0-9+.-]*://|\bwww\.)[^\s<>\"'`]+", re.ASCII)
    MARKERS = frozenset(
        {
            "u", "user", "users", "profile", "profiles", "account", "accounts", "customer",
            "customers", "member", "members", "people", "person", "in", "me", "my", "client",
            "clients", "patient", "patients", "employee", "employees", "staff", "author", "authors",
            "home", "id", "subscriber", "subscribers", "contact", "contacts",
        }
    )  # fmt: skip
    QUERY_KEYS = frozenset(
        {
            "user", "uid", "user_id", "userid", "email", "mail", "account", "account_id",
            "customer", "customer_id", "member", "member_id", "phone", "name", "token", "session",
            "sid", "session_id", "auth", "key", "id", "login", "username",
        }
    )  # fmt: skip

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every personal URL in ``text``."""
        if "://" not in text and "www." not in text:
            return
        for m in self._re.finditer(text):
            raw = m.group().rstrip(".,;:!?)]}")
            if self.personal(raw):
                yield Detection(m.start(), m.start() + len(raw), self.kind, normalise("url", raw))

    @classmethod
    def personal(cls, url: str) -> bool:
        """Whether ``url`` identifies a person by its path or query."""
        text = "//" + url if url.lower().startswith("www.") else url
        try:
            parts = urlsplit(text)
        except ValueError:
            return True  # malformed: err on the side of scrubbing
        segments = [s for s in parts.path.split("/") if s]
        for i, seg in enumerate(segments):
            if seg.startswith(("~", "@")) and len(seg) > 1:
                return True
            if seg.lower() in cls.MARKERS and i + 1 < len(segments):
                return True
        if parts.username or parts.password:
            return True
        return any(k.lower() in cls.QUERY_KEYS and v for k, v in parse_qsl(parts.query))


class StreetAddressDetector:
    """Street addresses written the English way: number, capitalised words, street type.

    For example `12 Nowhere Lane`, `221B Baker Street`, `5 Hypothetical Ave`.
    """

    kind = "address"
    cue = Cue(run=1)
    _re = re.compile(
        r"(?<![\w-])\d{1,5}[A-Za-z]?,?\s+(?:[A-Z][\w'’.-]*\s+){1,4}"
        r"(?:Street|St|Avenue|Ave|Road|Rd|Lane|Ln|Drive|Dr|Court|Ct|Way|Boulevard|Blvd|Place|Pl|"
        r"Terrace|Close|Crescent|Square|Sq|Parkway|Pkwy|Highway|Hwy|Row|Mews|Gardens|Grove|Hill|"
        r"Walk|Circle|Cir|Trail|Alley|Strasse|Straße)\b\.?"
    )

    _type = re.compile(
        r"\b(?:St(?:reet|r(?:asse|aße))?|Ave(?:nue)?|R(?:oa)?d|L(?:a)?n(?:e)?|Dr(?:ive)?|C(?:our)?t|"
        r"Way|Bl(?:vd|oulevard)|Pl(?:ace)?|Terrace|Close|Crescent|Sq(?:uare)?|P(?:ar)?kwy|Parkway|"
        r"H(?:igh)?wy|Highway|Row|Mews|Gardens|Grove|Hill|Walk|Cir(?:cle)?|Trail|Alley)\b"
    )

    #: Every address holds its number, then a capitalised word: searched first, from the digits.
    _number_then_word = re.compile(r"\d[A-Za-z]?,?\s+[A-Z]")
    # The number and word only, `find` looks for the street type: in the RE2 set of cue words,
    # `_type`'s words (`St`, `Rd`, `Way`… inside any word: a superset drops `\b`) cost 4,400 of
    # its 19,000 instructions a message, cold, on the benchmark's first 400 messages, and let
    # through few texts fewer.
    gate = Gate.any_of(ascii_superset(_number_then_word))

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every street address in ``text``."""
        if (
            not text_scan(text).longest
            or self._number_then_word.search(text) is None
            or not self._type.search(text)
        ):
            return
        for m in self._re.finditer(text):
            raw = m.group().rstrip(".")
            yield Detection(m.start(), m.start() + len(raw), self.kind, normalise(self.kind, raw))


class PatternDetector:
    """An identifier kind declared as a regular expression (`privacy.id_patterns`)."""

    def __init__(self, kind: str, pattern: str, flags: int = 0) -> None:
        self.kind = kind
        self.pattern = re.compile(pattern, flags)
        # Runs only on texts its RE2 form matches, when it has one (plain syntax).
        self.gate = pattern_gate(self.pattern)

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every match of the pattern (empty matches are ignored)."""
        for m in self.pattern.finditer(text):
            if m.end() > m.start():
                yield Detection(m.start(), m.end(), self.kind, normalise(self.kind, m.group()))


def id_pattern_detectors(
    patterns: Mapping[str, str], where: str = "casework.toml"
) -> list[PatternDetector]:
    """Detectors for the configured id patterns (kind -> regex).

    Raises:
        ConfigError: A kind is not a valid kind name, or a pattern does not compile.
    """
    out = []
    for kind, pattern in patterns.items():
        field = f"privacy.id_patterns.{kind}"
        if not KIND_RE.match(kind):
            raise ConfigError(
                where,
                None,
                field,
                "kind must be lower-case letters and digits starting with a letter "
                f"(it prefixes pseudonyms like `{kind.lower().replace('_', '')}_3fa91c0b27d4`)",
                kind,
            )
        try:
            out.append(PatternDetector(kind, pattern))
        except re.error as exc:
            raise ConfigError(
                where, None, field, f"invalid regular expression: {exc}", pattern
            ) from exc
    return out
