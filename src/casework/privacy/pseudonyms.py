"""Keyed pseudonyms: ``kind_<12 hex>`` = HMAC-SHA256(key, kind + ":" + normalised value).

Entry points: :func:`pseudonym`, :func:`normalise` (one rule per kind, so equal values written
differently map to one pseudonym) and :data:`PSEUDONYM_RE` (what an existing pseudonym looks like).
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any
from urllib.parse import unquote, urlsplit

import phonenumbers

__all__ = [
    "KIND_RE",
    "PSEUDONYM_RE",
    "PhoneReading",
    "is_pseudonym",
    "normalise",
    "normalise_phone",
    "possible_e164",
    "pseudonym",
    "read_phone",
    "trunk_optional",
]

#: A kind name: lower-case letters and digits, starting with a letter (no `_`: it separates).
KIND_RE = re.compile(r"^[a-z][a-z0-9]{0,31}$")

#: An existing pseudonym anywhere in text (never scrubbed again).
PSEUDONYM_RE = re.compile(r"(?<![A-Za-z0-9_])([a-z][a-z0-9]{0,31})_[0-9a-f]{12}(?![A-Za-z0-9_])")

_WS = re.compile(r"\s+")
_NON_DIGIT = re.compile(r"\D")
_NON_ALNUM = re.compile(r"[^0-9A-Za-z]")
_DIGITS = re.compile(r"\d+")


def is_pseudonym(value: str, kinds: frozenset[str] | None = None) -> bool:
    """Whether ``value`` is exactly a pseudonym (of one of ``kinds``, when given)."""
    m = PSEUDONYM_RE.fullmatch(value)
    return m is not None and (kinds is None or m.group(1) in kinds)


def pseudonym(key: bytes, kind: str, normalised: str) -> str:
    """The keyed pseudonym of an already-normalised value.

    >>> pseudonym(b"k" * 32, "email", "ada@example.com")
    'email_8dc713f272f6'

    Args:
        key: The pseudonym key (at least 32 bytes; see :func:`casework.privacy.load_key`).
        kind: Kind of identifier (`email`, `phone`, `account`...), see :data:`KIND_RE`.
        normalised: The value after :func:`normalise`.
    """
    # HMAC as RFC 2104 defines it, from two SHA-256 states that have hashed the key's inner and
    # outer pads: a value costs two copies, two updates and two digests, all C calls. The
    # `hmac` module's copy, update and hexdigest are Python methods around the same C object
    # (a third more time a value: paid on every new identifier).
    inner, outer = _keyed(key)
    mac = inner.copy()
    mac.update(f"{kind}:{normalised}".encode())
    out = outer.copy()
    out.update(mac.digest())
    return f"{kind}_{out.hexdigest()[:12]}"


#: SHA-256 reads 64-byte blocks; HMAC pads its key to one and XORs it with these bytes.
_BLOCK, _IPAD, _OPAD = 64, bytes(b ^ 0x36 for b in range(256)), bytes(b ^ 0x5C for b in range(256))


@lru_cache(maxsize=8)
def _keyed(key: bytes) -> tuple[Any, Any]:
    """SHA-256 states fed ``key``'s inner and outer HMAC pads: :func:`pseudonym` copies them.

    A key longer than a block is hashed first, as RFC 2104 (and :func:`hmac.new`) does.
    """
    if len(key) > _BLOCK:
        key = hashlib.sha256(key).digest()
    padded = key.ljust(_BLOCK, b"\0")
    return hashlib.sha256(padded.translate(_IPAD)), hashlib.sha256(padded.translate(_OPAD))


@dataclass(frozen=True)
class PhoneReading:
    """How `phonenumbers` reads a phone number.

    Attributes:
        e164: The number in E.164 form (`+12459573870`).
        valid: Whether it is a valid (assigned) number, not only a possible one.
        region: The region it was read against, or ``None`` when written internationally.
        national: Its national significant number (digits).
    """

    e164: str
    valid: bool
    region: str | None
    national: str


_PHONE_NOISE = re.compile(r"[^\d+]+")


def _national_form(text: str, region: str) -> bool:
    """Whether ``text`` is written as a national number of ``region`` is: with its trunk prefix.

    People write a British number `020 7946 0958`, never `20 7946 0958`, so a number without the
    `0` is not read as British; North American numbers (trunk prefix `1`, usually left out),
    regions without a trunk prefix and regions whose national format leaves it out (Brazil writes
    `(11) 91234-5678`) need none.
    """
    meta = phonenumbers.PhoneMetadata.metadata_for_region(region.upper())
    if meta is None or meta.country_code == 1 or not meta.national_prefix:
        return True
    if trunk_optional(region.upper()):
        return True
    return text.replace(" ", "").startswith(meta.national_prefix)


@lru_cache(maxsize=256)
def trunk_optional(region: str) -> bool:
    """Whether one of ``region``'s national formats is written without its trunk prefix."""
    meta = phonenumbers.PhoneMetadata.metadata_for_region(region)
    if meta is None or not meta.national_prefix:
        return False
    prefix = meta.national_prefix
    return any(
        f.national_prefix_formatting_rule is not None
        and prefix not in f.national_prefix_formatting_rule
        for f in meta.number_format
    )


@lru_cache(maxsize=65536)
def read_phone(raw: str, regions: Sequence[str] = ("US", "GB")) -> PhoneReading | None:
    """The first valid reading of a phone number, else the first possible one, else ``None``.

    Numbers written with `+` or `00` need no region; national numbers are tried against
    ``regions`` in order, each only when written with that region's trunk prefix (`0` in the
    UK; North America's `1` is optional). "Possible" is libphonenumber's full-length check
    (`IS_POSSIBLE`): an unassigned area code such as `245-957-3870` is possible but not valid.
    Any separators are accepted (underscores, dots, dashes of every width, spaces).
    """
    text = _phone_text(raw)
    candidates: Sequence[str | None] = (None,) if text.startswith("+") else tuple(regions)
    possible: PhoneReading | None = None
    for region in candidates:
        if region is not None and not _national_form(text, region):
            continue
        try:
            number = phonenumbers.parse(text, region)
        except phonenumbers.NumberParseException:
            continue
        # Valid in the region it was read in is valid (and checks one region, where
        # is_valid_number first looks for the number's region among all sharing its code).
        valid = (
            region is not None and phonenumbers.is_valid_number_for_region(number, region)
        ) or phonenumbers.is_valid_number(number)
        if not valid and (
            possible is not None
            or phonenumbers.is_possible_number_with_reason(number)
            != phonenumbers.ValidationResult.IS_POSSIBLE
        ):
            continue
        reading = PhoneReading(
            phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164),
            valid,
            region,
            phonenumbers.national_significant_number(number),
        )
        if valid:
            return reading
        possible = reading
    return possible


def _phone_text(raw: str) -> str:
    """``raw`` as libphonenumber is given it: separators as spaces, a leading `00` as `+`."""
    text = _PHONE_NOISE.sub(" ", raw).strip()
    return "+" + text[2:] if text.startswith("00") else text


@lru_cache(maxsize=65536)
def possible_e164(raw: str, region: str | None = None) -> str | None:
    """The E.164 form of a number read in one region, or written internationally, if any.

    The same answer as ``read_phone(raw, (region,)).e164`` (``None`` where that reading is
    ``None``), for about half the work: with one region to read it in, a reading is kept
    when the number is valid or possible, and a valid number is possible, so validity (the
    dearest check: every type of number of every region sharing the country code) is asked
    only of a number whose length could be valid yet is not possible (:func:`_valid_only`).
    ``region`` is ignored for a number written with `+` or `00`.
    """
    text = _phone_text(raw)
    if text.startswith("+"):
        region = None
    elif region is None or not _national_form(text, region):
        return None
    try:
        number = phonenumbers.parse(text, region)
    except phonenumbers.NumberParseException:
        return None
    if phonenumbers.is_possible_number_with_reason(
        number
    ) != phonenumbers.ValidationResult.IS_POSSIBLE and (
        len(phonenumbers.national_significant_number(number))
        not in _valid_only(number.country_code)
        or not (
            (region is not None and phonenumbers.is_valid_number_for_region(number, region))
            or phonenumbers.is_valid_number(number)
        )
    ):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


@lru_cache(maxsize=512)
def _valid_only(country_code: int) -> frozenset[int]:
    """Lengths a valid number of ``country_code`` may have that libphonenumber calls not possible.

    A number is valid for a region only if it matches the region's general description,
    whose lengths bound it; it is possible when its length is one of the main region's
    lengths and not one of its local-only ones. The lengths of every region sharing the code,
    less those, are what a valid number may have without being possible (North America:
    Canada's seven-digit `310` numbers).
    """
    main = phonenumbers.region_code_for_country_code(country_code)
    meta = phonenumbers.PhoneMetadata.metadata_for_region_or_calling_code(country_code, main)
    if meta is None or meta.general_desc is None:
        return frozenset()  # no regions: nothing of this code is valid
    desc = meta.general_desc
    possible = set(desc.possible_length) - set(desc.possible_length_local_only or ())
    lengths: set[int] = set()
    for region in phonenumbers.region_codes_for_country_code(country_code):
        other = phonenumbers.PhoneMetadata.metadata_for_region_or_calling_code(country_code, region)
        if other is not None and other.general_desc is not None:
            lengths.update(other.general_desc.possible_length)
    return frozenset(lengths - possible)


def normalise_phone(raw: str, regions: Sequence[str] = ("US", "GB")) -> str | None:
    """E.164 form of a phone number (valid, else possible: see :func:`read_phone`), or ``None``."""
    reading = read_phone(raw, tuple(regions))
    return reading.e164 if reading is not None else None


def _normalise_url(value: str) -> str:
    text = value.strip()
    if text.lower().startswith("www."):
        text = "//" + text
    parts = urlsplit(text)
    host = (parts.hostname or "").lower()
    host = host.removeprefix("www.")
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{host}{path}{query}"


def _normalise_ip(value: str) -> str:
    try:
        return ipaddress.ip_address(value.strip()).compressed
    except ValueError:
        return value.strip().lower()


def normalise(kind: str, value: str, *, phone_regions: Sequence[str] = ("US", "GB")) -> str:
    """Normalise ``value`` so that equal identifiers written differently become one string.

    Rules: `email` URL-decoded (`%40` is `@`) and case-folded; `phone` E.164 (of a valid, else
    a possible number; digits only if it is neither); `card` digits
    only; `iban`, `ssn`, `nationalid` and `postcode` upper-case without separators; `expiry`
    `MM/YY`; `ip` canonical (compressed IPv6); `url` host
    (lower-case, without `www.`) + path without trailing `/` + query; any other kind: whitespace
    collapsed and case-folded.
    """
    if kind == "email":
        text = value.strip()
        return (unquote(text) if "%" in text else text).casefold()
    if kind == "phone":
        e164 = normalise_phone(value, tuple(phone_regions))
        if e164 is not None:
            return e164
        digits = _NON_DIGIT.sub("", value)
        return ("+" + digits) if value.strip().startswith("+") else digits
    if kind == "card":
        return _NON_DIGIT.sub("", value)
    if kind in ("iban", "ssn", "nationalid", "postcode"):
        return _NON_ALNUM.sub("", value).upper()
    if kind == "expiry":
        parts = _DIGITS.findall(value)
        if len(parts) == 2:
            return f"{int(parts[0]):02d}/{parts[1][-2:]}"
    if kind == "ip":
        return _normalise_ip(value)
    if kind == "url":
        return _normalise_url(value)
    return _WS.sub(" ", value).strip().casefold()
