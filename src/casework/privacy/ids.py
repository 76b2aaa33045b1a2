"""National ids, postcodes and card expiry dates in free text.

Entry points: :class:`NationalIdDetector` (kinds `ssn` for a US social-security number,
`nationalid` for the others), :class:`PostcodeDetector` (kind `postcode`) and
:class:`ExpiryDetector` (kind `expiry`). Check digits are verified with `python-stdnum`.

A value in a distinctive written form is found anywhere (`742-38-1981`, `024.730.543-04`,
`SW1A 1AA`); a bare run of digits only after words that say what it is (`my BSN is 740389129`,
`zip 94105`, `exp 03/27`), which is how people type them and what keeps order numbers, amounts
and dates out.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from stdnum.br import cpf
from stdnum.es import dni, nie
from stdnum.fr import nir
from stdnum.it import codicefiscale
from stdnum.us import ssn

from casework.privacy.detectors import Detection
from casework.privacy.pseudonyms import normalise

__all__ = ["ExpiryDetector", "NationalIdDetector", "PostcodeDetector"]

#: How far (characters) a value may follow the words naming it.
_REACH = 40

_NON_ALNUM = re.compile(r"[^0-9A-Za-z]")


def _compact(value: str) -> str:
    return _NON_ALNUM.sub("", value).upper()


@dataclass(frozen=True)
class _Rule:
    """One written form of an identifier: its pattern, its check, and whether it needs a cue."""

    kind: str
    pattern: re.Pattern[str]
    valid: Callable[[str], bool]
    cue: str | None
    """Group name of the cue that must precede a match, or ``None`` when the form alone is enough."""


def _any(_: str) -> bool:
    return True


_B = r"(?<![\w.\-/])"  # start: not inside a longer word, number or date
_E = r"(?![\w]|[.\-/]\w)"  # end: likewise

_ID_CUES = re.compile(
    r"(?<!\w)(?:(?P<ssn>ssn|social\s+security(?:\s+(?:number|no\.?|#))?|soc\.?\s*sec\.?)|"
    r"(?P<nid>national\s+insurance(?:\s+number|\s+no\.?)?|ni\s+(?:number|no\.?)|nino|nir|"
    r"(?:numéro\s+de\s+)?sécurité\s+sociale|securite\s+sociale|insee|codice\s+fiscale|"
    r"tax\s+code|fiscal\s+code|bsn|burgerservicenummer|citizen\s+service\s+number|sofinummer|cpf|"
    r"pesel|sin|social\s+insurance(?:\s+number)?|aadhaa?r(?:\s+(?:number|no\.?|card))?|dni|nie|nif|"
    r"national\s+id(?:entity)?(?:\s+(?:number|no\.?|card))?|id\s+(?:number|card)|"
    r"personal\s+id(?:\s+number)?|tax\s+id(?:\s+number)?|steuer-?id|"
    r"steueridentifikationsnummer|personalausweis(?:nummer)?|tfn|tax\s+file\s+number))(?!\w)",
    re.IGNORECASE,
)

_ID_RULES = (
    # US social-security number written 3-2-4; bare nine digits only after an SSN cue.
    _Rule("ssn", re.compile(rf"{_B}\d{{3}}[ \-]\d{{2}}[ \-]\d{{4}}{_E}"), ssn.is_valid, None),
    _Rule("ssn", re.compile(rf"{_B}\d{{3}}[ \-.]?\d{{2}}[ \-.]?\d{{4}}{_E}"), _any, "ssn"),
    # Brazil CPF 000.000.000-00, France NIR (15 digits, key mod 97), Italy codice fiscale,
    # Spain DNI/NIE (check letter), India Aadhaar 4-4-4 (Verhoeff, via stdnum's module).
    _Rule(
        "nationalid", re.compile(rf"{_B}\d{{3}}\.\d{{3}}\.\d{{3}}-\d{{2}}{_E}"), cpf.is_valid, None
    ),
    _Rule(
        "nationalid",
        re.compile(
            rf"{_B}[12] ?\d{{2}} ?\d{{2}} ?(?:\d{{2}}|2[AB]) ?\d{{3}} ?\d{{3}} ?\d{{2}}{_E}"
        ),
        nir.is_valid,
        None,
    ),
    _Rule(
        "nationalid",
        re.compile(
            r"(?<!\w)[A-Z]{6}[0-9LMNPQRSTUV]{2}[A-EHLMPR-T][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z](?!\w)",
            re.IGNORECASE,
        ),
        codicefiscale.is_valid,
        None,
    ),
    _Rule("nationalid", re.compile(rf"{_B}\d{{8}}-?[A-Z]{_E}", re.IGNORECASE), dni.is_valid, None),
    _Rule(
        "nationalid",
        re.compile(rf"{_B}[XYZ]-?\d{{7}}-?[A-Z]{_E}", re.IGNORECASE),
        nie.is_valid,
        None,
    ),
    # UK National Insurance number: two letters, six digits (grouped any way), a letter.
    _Rule(
        "nationalid",
        re.compile(r"(?<!\w)[A-Z]{2} ?\d{2} ?\d{2} ?\d{2} ?[A-Z](?!\w)"),
        _any,
        None,
    ),
    # After words naming a national id: any run of 8-15 digits in common groupings (BSN, SIN,
    # PESEL, bare CPF, Aadhaar, a NIR written in groups...), valid or not: people mistype, and
    # the cue says what it is.
    _Rule(
        "nationalid",
        re.compile(rf"{_B}\d(?:[ .\-]?\d){{7,14}}{_E}"),
        _any,
        "nid",
    ),
)


#: Every national id form holds six digits in a row, single separators aside (or a codice
#: fiscale's six letters and two digits): a text without that holds none, and the rules are
#: not run on it.
_ID_HINT = re.compile(r"\d(?:[ .\-]?\d){5}|[A-Za-z]{6}\d\d")


#: The forms found without a cue, as one pattern (one pass over the text instead of one each).
_FORMS = [rule for rule in _ID_RULES if rule.cue is None]
_ANY_FORM = re.compile(
    "|".join(
        f"(?P<f{i}>{'(?i:' if rule.pattern.flags & re.IGNORECASE else '(?:'}{rule.pattern.pattern}))"
        for i, rule in enumerate(_FORMS)
    )
)


def _id_spans(text: str) -> Iterator[tuple[int, int, str]]:
    if _ID_HINT.search(text) is None:
        return
    for m in _ANY_FORM.finditer(text):
        rule = _FORMS[int(str(m.lastgroup)[1:])]
        if rule.valid(_compact(m.group())):
            yield m.start(), m.end(), rule.kind
    cues: dict[str, list[int]] = {"ssn": [], "nid": []}
    for m in _ID_CUES.finditer(text):
        cues["ssn" if m.group("ssn") else "nid"].append(m.end())
    for rule in _ID_RULES:
        ends = cues[rule.cue] if rule.cue is not None else []
        if not ends:
            continue
        for m in rule.pattern.finditer(text):
            if any(0 <= m.start() - e <= _REACH for e in ends) and rule.valid(_compact(m.group())):
                yield m.start(), m.end(), rule.kind


class NationalIdDetector:
    """National ids: kind `ssn` for a US social-security number, `nationalid` for the others.

    Found anywhere in a form that is theirs alone: a valid SSN written 3-2-4 (`742-38-1981`), a
    CPF `024.730.543-04`, a French NIR (15 digits, key mod 97), an Italian codice fiscale, a
    Spanish DNI or NIE (check letter), a British National Insurance number (`QQ 12 34 56 C`). Any
    run of 8–15 digits within 40 characters after words naming one (`SSN`, `BSN`, `PESEL`, `SIN`,
    `CPF`, `Aadhaar`, `national id`...) is one too, checked or not.
    """

    kind = "nationalid"
    kinds = ("ssn", "nationalid")

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every national id in ``text``."""
        if not any(ch.isdigit() for ch in text):
            return
        for start, end, kind in _id_spans(text):
            yield Detection(start, end, kind, normalise(kind, text[start:end]))


_POST_CUES = re.compile(
    r"(?<!\w)(?:zip(?:\s*code)?|zipcode|post\s*code|postal\s+code|postal|postleitzahl|plz|"
    r"code\s+postal|c\.?p\.?|cap|c[óo]digo\s+postal|cep|kod\s+pocztowy|postcode|pin\s*code|"
    r"pincode|〒|(?:deliver(?:y|ing)?|ship(?:ping)?|send(?:ing)?|post(?:ing)?)\s+(?:it\s+)?to)(?!\w)"
    r"(?:\s+(?:is|was|will\s+be|would\s+be))?",
    re.IGNORECASE,
)
#: Postcodes whose shape alone says what they are: British and Canadian.
_POST_SHAPES = re.compile(
    r"(?<![\w-])(?:[A-PR-UWYZ][A-HK-Y]?\d[A-Z\d]? ?\d[ABD-HJLNP-UW-Z]{2}"
    r"|[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z] ?\d[ABCEGHJ-NPRSTV-Z]\d)(?![\w-])"
)
#: British and Canadian postcodes hold a capital letter touching a digit.
_UPPER_DIGIT = re.compile(r"[A-Z]\d")
#: Postcodes of other countries: digits, maybe grouped (`94105`, `94105-1234`, `03-427`,
#: `83449-786`, `693-3584`, `1011 AB`), read only after a postcode cue.
_POST_NUMERIC = re.compile(
    r"(?<![\w.\-/])\d{2,6}(?:[ \-]?\d{3,4})?(?: ?[A-Z]{2})?(?![\w]|[.\-/]\d)"
)


#: What every postcode cue contains, searched in the lower-cased text first (see `_POST_CUES`).
_POST_HINT = re.compile(r"zip|post|plz|code|c\.?p|cap|cep|kod|pin|〒|deliver|ship|send")


class PostcodeDetector:
    """Postcodes, kind `postcode`.

    British (`SW1A 1AA`) and Canadian (`K1A 0B1`) postcodes anywhere; numeric ones of other
    countries (`94105`, `94105-1234`, `10115`, `03-427`, `83449-786`, `1011 AB`) within 40
    characters after `zip`, `postcode`, `postal code`, `PLZ`, `CEP`, `deliver to`...
    """

    kind = "postcode"

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every postcode in ``text``."""
        if not any(ch.isdigit() for ch in text):
            return
        if _UPPER_DIGIT.search(text) is not None:
            for m in _POST_SHAPES.finditer(text):
                yield Detection(m.start(), m.end(), self.kind, normalise(self.kind, m.group()))
        if _POST_HINT.search(text.lower()) is None:
            return
        ends = [m.end() for m in _POST_CUES.finditer(text)]
        if not ends:
            return
        for m in _POST_NUMERIC.finditer(text):
            if sum(ch.isdigit() for ch in m.group()) >= 4 and any(
                0 <= m.start() - e <= _REACH for e in ends
            ):
                yield Detection(m.start(), m.end(), self.kind, normalise(self.kind, m.group()))


_EXPIRY = re.compile(
    r"(?<!\w)(?:exp(?:iry|iration|ires?|ed)?\.?(?:\s+date)?(?:\s+(?:is|on|in))?|"
    r"valid\s+(?:thru|through|until|till|to)|good\s+thru|ablaufdatum|gültig\s+bis|scadenza|"
    r"validade|vencimiento|caducidad|date\s+d'expiration|expire\s+(?:le|fin))\s*[:\-]?\s*"
    r"(?P<date>(?:0?[1-9]|1[0-2])\s?[/\-.]\s?(?:20)?\d{2})(?![\w]|[/\-.]\d)",
    re.IGNORECASE,
)
#: A card expiry written right after the card number (`4242 4242 4242 4242 03/27`).
_AFTER_CARD = re.compile(
    r"\d(?:[ \-]?\d){12,18}\s{1,3}(?P<date>(?:0[1-9]|1[0-2])/(?:20)?\d{2})(?![\w]|[/\-.]\d)"
)


class ExpiryDetector:
    """Card expiry dates (`03/27`, `3/2027`), kind `expiry`.

    Only after words saying so (`exp`, `expiry`, `expires`, `valid thru`, `scadenza`...) or right
    after a card number: a bare `03/27` is as likely a date or a fraction.
    """

    kind = "expiry"

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every card expiry date in ``text``."""
        if "/" not in text and "-" not in text and "." not in text:
            return
        for pattern in (_EXPIRY, _AFTER_CARD):
            for m in pattern.finditer(text):
                start, end = m.span("date")
                yield Detection(start, end, self.kind, normalise(self.kind, m.group("date")))
