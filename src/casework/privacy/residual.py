"""Residual-PII check: a second, independent pass over released cases, for CI (`check --pii`).

Entry points: :func:`residual_pii` (own looser patterns, not the scrubber's detectors, so one
blind spot does not hide in both) and :func:`presidio_second_opinion` (optional, extra
`casework[presidio]`, model-free). Both return :class:`casework.dataset.Finding` values.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from casework.dataset.check import Finding
from casework.errors import UsageError
from casework.privacy.checksums import iban_valid, luhn_valid
from casework.privacy.pseudonyms import PSEUDONYM_RE
from casework.schema import Case

__all__ = [
    "RESIDUAL_CHECK",
    "case_texts",
    "presidio_analyzer",
    "presidio_second_opinion",
    "residual_pii",
]

#: Name of the check in findings (`presidio` findings use `residual_pii_presidio`).
RESIDUAL_CHECK = "residual_pii"

_EMAIL = re.compile(
    r"[^\s@<>()\[\]{}\"',;:/?=&]+(?:@|%40)[^\s@<>()\[\]{}\"',;:/?=&%]+\.[A-Za-z]{2,}",
    re.IGNORECASE,
)
_DIGIT_RUN = re.compile(r"\d[\d \-]{11,28}\d")
_INTL_PHONE = re.compile(r"(?:\+|\b00)\d[\d ().\-]{6,18}\d")
_NANP_PHONE = re.compile(r"(?<!\d)\(?\d{3}\)?[ .\-]?\d{3}[ .\-]\d{4}(?!\d)")
_UK_PHONE = re.compile(r"(?<!\d)0\d{2,4}[ \-]?\d{3,4}[ \-]?\d{3,4}(?!\d)")
_IBAN = re.compile(r"\b[A-Za-z]{2}\d{2}(?:[ ]?[A-Za-z0-9]){11,30}\b")
_IPV4 = re.compile(r"(?<![\d.])(?:\d{1,3}\.){3}\d{1,3}(?![\d.]*\d)")
_IPV6 = re.compile(r"(?<![\w:])[0-9A-Fa-f:]*:[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*")
_URL = re.compile(r"(?:\b[A-Za-z][A-Za-z0-9+.-]*://|\bwww\.)[^\s<>\"'`]+")
#: Path segments after which the next one names a person (this check's own, looser list).
_URL_PERSON = frozenset(
    {
        "u", "user", "users", "profile", "profiles", "account", "accounts", "customer",
        "customers", "member", "members", "people", "person", "in", "me", "my", "client",
        "clients", "patient", "patients", "subscriber", "subscribers", "contact", "contacts",
        "employee", "employees", "staff", "author", "authors", "id", "uid", "home", "owner",
    }
)  # fmt: skip
_URL_PERSON_QUERY = re.compile(
    r"(?:^|[?&;])(?:e?mail|email_address|user(?:name|_?id)?|uid|login|account(?:_?id)?|"
    r"customer(?:_?id)?|member(?:_?id)?|phone|name|token|session(?:_?id)?|sid|auth|key)="
    r"(?=[^&;#\s])",
    re.IGNORECASE,
)

#: Domains reserved for examples (RFC 2606 / 6761): addresses there are fake by definition.
_EXAMPLE_DOMAINS = re.compile(
    r"(?:^|\.)(?:example\.(?:com|org|net)|example|test|invalid|localhost)$"
)
#: Documentation address ranges (RFC 5737, RFC 3849).
_DOC_NETS = tuple(
    ipaddress.ip_network(n)
    for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
)
#: Fictional phone ranges: NANP 555-0100..0199, Ofcom drama numbers (London, mobile).
_FICTIONAL_PHONE = re.compile(
    r"555[ .\-]?01\d\d$|^(?:\+?44|0)?\s?20\s?7946\s?0\d{3}$|7700\s?900\d{3}$"
)


@dataclass(frozen=True)
class _Text:
    where: str
    text: str


def _walk(value: Any, where: str) -> Iterator[_Text]:
    if isinstance(value, str):
        yield _Text(where, value)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield _Text(f"{where}.{k}", str(k))
            yield from _walk(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, f"{where}[{i}]")


def case_texts(case: Case) -> Iterator[tuple[str, str]]:
    """Every string of a case a person could have written PII into, with its location."""
    body = case.model_dump(mode="json", by_alias=True, include={"situation", "label"})
    for item in _walk(body, ""):
        if item.text:
            yield item.where.lstrip("."), item.text


def _mask(text: str) -> str:
    """A hint of what was found that does not repeat it: first character, length, last two."""
    text = text.strip()
    return f"{text[:1]}…{text[-2:]} ({len(text)} chars)" if len(text) > 4 else "…"


def _blank_pseudonyms(text: str) -> str:
    return PSEUDONYM_RE.sub(lambda m: " " * len(m.group()), text)


@dataclass(frozen=True)
class _Hit:
    start: int
    end: int
    report: bool
    """False for a match that is known to be fake (it still claims its span)."""


def _emails(text: str) -> Iterator[_Hit]:
    for m in _EMAIL.finditer(text):
        domain = re.split("@|%40", m.group(), flags=re.IGNORECASE)[-1].lower().rstrip(".")
        yield _Hit(m.start(), m.end(), not _EXAMPLE_DOMAINS.search(domain))


def _urls(text: str) -> Iterator[_Hit]:
    """URLs that still name a person (credentials, `/users/NAME`, `/~name`, `?email=`…).

    Example domains count here: the username in the path of a URL on `example.com` is not fake.
    """
    for m in _URL.finditer(text):
        raw = m.group().rstrip(".,;:!?)]}")
        rest = raw.split("://", 1)[-1]
        authority, _, tail = rest.partition("/")
        path, _, query = tail.partition("?")
        segments = [seg for seg in path.split("#", 1)[0].split("/") if seg.strip()]
        personal = "@" in authority or any(
            seg.startswith(("~", "@")) and len(seg) > 1 for seg in segments
        )
        personal = personal or any(
            seg.lower() in _URL_PERSON and i + 1 < len(segments) for i, seg in enumerate(segments)
        )
        personal = personal or bool(_URL_PERSON_QUERY.search("?" + query))
        yield _Hit(m.start(), m.start() + len(raw), personal)


def _cards(text: str) -> Iterator[_Hit]:
    """Runs of digit groups holding 13–19 digits (whole groups), issuer 2–6, Luhn-valid."""
    for m in _DIGIT_RUN.finditer(text):
        groups = re.findall(r"\d+", m.group())
        for i in range(len(groups)):
            digits = ""
            for group in groups[i:]:
                digits += group
                if len(digits) > 19:
                    break
                if len(digits) >= 13 and digits[0] in "23456" and luhn_valid(digits):
                    yield _Hit(m.start(), m.end(), True)
                    break
            else:
                continue
            break


def _phones(text: str) -> Iterator[_Hit]:
    for pattern in (_INTL_PHONE, _NANP_PHONE, _UK_PHONE):
        for m in pattern.finditer(text):
            digits = re.sub(r"\D", "", m.group())
            if 10 <= len(digits) <= 15:
                yield _Hit(m.start(), m.end(), not _FICTIONAL_PHONE.search(m.group().strip()))


def _ibans(text: str) -> Iterator[_Hit]:
    for m in _IBAN.finditer(text):
        compact = re.sub(r"[^0-9A-Za-z]", "", m.group()).upper()
        if any(iban_valid(compact[:n]) for n in range(len(compact), 14, -1)):
            yield _Hit(m.start(), m.end(), True)


def _ips(text: str) -> Iterator[_Hit]:
    for pattern in (_IPV4, _IPV6):
        for m in pattern.finditer(text):
            raw = m.group()
            try:
                address = ipaddress.ip_address(raw)
            except ValueError:
                continue
            fake = address.is_unspecified or any(address in net for net in _DOC_NETS)
            yield _Hit(m.start(), m.end(), not fake)


#: A US social-security number written 3-2-4: area not 000, 666 or 9xx, group not 00, serial
#: not 0000 (the SSA's rules; 9xx holds the advertising and test ranges).
_SSN = re.compile(r"(?<![\d\-])(?!000|666|9)\d{3}([ \-])(?!00)\d{2}\1(?!0000)\d{4}(?![\d\-])")
#: Words that say a national id or a postcode follows, then the figure itself.
_NATIONAL_ID = re.compile(
    r"(?i:\b(?:ssn|social\s+(?:security|insurance)|national\s+(?:insurance|id)|ni\s+number|bsn|"
    r"cpf|pesel|sin|nir|codice\s+fiscale|aadhaa?r|dni|nie|nif|tax\s+id)\b)\D{0,30}?"
    r"(?<![\w])[\dA-Z](?:[ .\-]?[\dA-Z]){6,15}(?![\w])"
)
_POSTCODE = re.compile(
    r"(?i:\b(?:zip(?:\s*code)?|post\s*code|postal\s+code|plz|cep)\b)\W{0,12}"
    r"(?:[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}|\d{4,5}(?:-\d{3,4})?)\b"
)
_EXPIRY_DATE = re.compile(
    r"(?i:\b(?:exp(?:iry|iration|ires)?|valid\s+(?:thru|through))\b)\W{0,12}"
    r"(?:0?[1-9]|1[0-2])\s?/\s?(?:20)?\d{2}\b"
)
#: Words after which people give their name; the name is one or more capitalised words.
_NAME = re.compile(
    r"(?i:\b(?:my\s+name\s+is|my\s+name's|i'm|i\s+am|this\s+is|thanks|regards|cheers|"
    r"sincerely))[,.!]?\s+(?P<name>[^\W\d_a-z][^\W\d_]+(?:[ \-][^\W\d_a-z][^\W\d_]+)*)"
)
#: Capitalised words after those cues that are not names (`Thanks, The team`, `I'm Not sure`).
_NOT_A_NAME = frozenset(
    {
        "the", "a", "an", "not", "so", "very", "just", "also", "really", "here", "sorry", "happy",
        "glad", "looking", "writing", "your", "our", "team", "support", "customer", "please", "hi",
        "hello", "dear",
    }
)  # fmt: skip


def _matches(*patterns: re.Pattern[str]) -> Callable[[str], Iterator[_Hit]]:
    def scan(text: str) -> Iterator[_Hit]:
        for pattern in patterns:
            for m in pattern.finditer(text):
                yield _Hit(m.start(), m.end(), True)

    return scan


def _names(text: str) -> Iterator[_Hit]:
    for m in _NAME.finditer(text):
        first = m.group("name").split()[0].split("-")[0]
        if first.casefold() not in _NOT_A_NAME and not first.isupper():
            yield _Hit(m.start("name"), m.end("name"), True)


_SCANS = (
    ("url", _urls),
    ("email", _emails),
    ("iban", _ibans),
    ("card", _cards),
    ("ip", _ips),
    ("national id", _matches(_SSN, _NATIONAL_ID)),
    ("postcode", _matches(_POSTCODE)),
    ("expiry", _matches(_EXPIRY_DATE)),
    ("phone", _phones),
)


def _scan(text: str, *, names: bool = False) -> Iterator[tuple[str, str]]:
    """(kind, matched text) of every reportable hit; an earlier kind's span hides later ones."""
    claimed: list[_Hit] = []
    scans = (*_SCANS, ("name", _names)) if names else _SCANS
    for kind, scan in scans:
        for hit in scan(text):
            if any(hit.start < c.end and c.start < hit.end for c in claimed):
                continue
            claimed.append(hit)
            if hit.report:
                yield kind, text[hit.start : hit.end]


def residual_pii(cases: Sequence[Case]) -> list[Finding]:
    """Anything in released cases that still looks like raw PII (error-level findings).

    Looks for personal URLs (credentials, `/users/NAME`, `/~name`, `?email=`…), emails (also
    URL-encoded), IBANs (mod 97), card numbers (Luhn), IP addresses and phone numbers in every
    string of each case's situation and label, ignoring keyed pseudonyms, example domains (RFC 2606), documentation address ranges
    and fictional phone ranges (555-01xx, Ofcom drama numbers). National ids (a US SSN written
    3-2-4, or a figure after `SSN`, `BSN`, `CPF`, `national id`...), postcodes after `zip` or
    `postcode` (`postcode`) and card expiry dates after `exp` (`expiry`) are reported too. In mined cases,
    a capitalised name after `my name is`, `I'm`, `this is` or a sign-off is reported too (people
    write hand-made and synthetic cases with made-up names). Findings never repeat the value.
    """
    findings: list[Finding] = []
    for case in cases:
        mined = case.source == "mined"
        for where, raw in case_texts(case):
            for kind, hit in _scan(_blank_pseudonyms(raw), names=mined):
                findings.append(
                    Finding(
                        RESIDUAL_CHECK,
                        "error",
                        case.id,
                        f"{where}: {kind}",
                        f"looks like a raw {kind} ({_mask(hit)}); scrub the row "
                        "(mine it again) or remove it",
                    )
                )
    return findings


_PRESIDIO_KINDS = {
    "EMAIL_ADDRESS": "email",
    "PHONE_NUMBER": "phone",
    "CREDIT_CARD": "card",
    "IBAN_CODE": "iban",
    "IP_ADDRESS": "ip",
}


def presidio_analyzer() -> Any:
    """A Presidio analyzer with the model-free `no_op` NLP engine (pattern recognisers only).

    `TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS` is emptied first (unless set), so Presidio's email
    recogniser uses the suffix list bundled with tldextract instead of fetching it.

    Raises:
        UsageError: Presidio is not installed (`pip install 'casework[presidio]'`).
    """
    os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
    try:
        from presidio_analyzer import AnalyzerEngine
        from presidio_analyzer.nlp_engine import NoOpNlpEngine
    except ImportError as exc:
        raise UsageError(
            "the Presidio second opinion needs presidio-analyzer: pip install 'casework[presidio]'."
        ) from exc
    engine = NoOpNlpEngine(models=[{"lang_code": "en", "model_name": "no_op"}])
    return AnalyzerEngine(nlp_engine=engine, supported_languages=["en"])


def presidio_second_opinion(cases: Sequence[Case], *, threshold: float = 0.5) -> list[Finding]:
    """Presidio's pattern recognisers over the same texts (warning-level findings).

    A second opinion from an independent implementation; its findings are warnings because its
    patterns are tuned differently (it flags version numbers as IPs, for instance).

    Raises:
        UsageError: Presidio is not installed.
    """
    analyzer = presidio_analyzer()
    findings: list[Finding] = []
    for case in cases:
        for where, raw in case_texts(case):
            text = _blank_pseudonyms(raw)
            if not text.strip():
                continue
            for result in analyzer.analyze(
                text, language="en", entities=list(_PRESIDIO_KINDS), score_threshold=threshold
            ):
                kind = _PRESIDIO_KINDS[result.entity_type]
                hit = text[result.start : result.end]
                findings.append(
                    Finding(
                        f"{RESIDUAL_CHECK}_presidio",
                        "warning",
                        case.id,
                        f"{where}: {kind}",
                        f"Presidio sees a raw {kind} ({_mask(hit)}, score {result.score:.2f})",
                    )
                )
    return findings
