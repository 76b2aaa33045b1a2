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

from casework.privacy.detection import Cue, Detection, text_scan
from casework.privacy.prefilter import Gate, ascii_superset, digit_run, edge_superset
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
    digits: int = 0
    """The fewest digits a match holds in one run of digit groups: the rule is not run on a text
    without such a run (see :class:`casework.privacy.detection.TextScan`)..."""
    unless: tuple[str, ...] = ()
    """...unless the text holds one of these (a form whose digits a letter splits)."""
    needs: str = ""
    """Characters every match holds: the rule is not run on a text missing one."""

    def may_match(self, text: str, longest: int) -> bool:
        """Whether a text whose longest run of digit groups holds ``longest`` digits may match."""
        if longest < self.digits and not any(mark in text for mark in self.unless):
            return False
        return all(ch in text for ch in self.needs)


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

# The forms found without a cue start with the class of their first character and look behind
# it after: the regex engine then skips to candidate characters (see detectors.py).
_ID_RULES = (
    # US social-security number written 3-2-4; bare nine digits only after an SSN cue.
    _Rule(
        "ssn",
        re.compile(rf"\d(?<![\w.\-/]\d)\d{{2}}[ \-]\d{{2}}[ \-]\d{{4}}{_E}"),
        ssn.is_valid,
        None,
        9,
    ),
    _Rule("ssn", re.compile(rf"(?=\d){_B}\d{{3}}[ \-.]?\d{{2}}[ \-.]?\d{{4}}{_E}"), _any, "ssn", 9),
    # Brazil CPF 000.000.000-00, France NIR (15 digits, key mod 97; Corsica's 2A/2B splits its
    # digits), Italy codice fiscale, Spain DNI/NIE (check letter).
    _Rule(
        "nationalid",
        re.compile(rf"\d(?<![\w.\-/]\d)\d{{2}}\.\d{{3}}\.\d{{3}}-\d{{2}}{_E}"),
        cpf.is_valid,
        None,
        11,
        needs=".-",
    ),
    _Rule(
        "nationalid",
        re.compile(
            rf"[12](?<![\w.\-/][12]) ?\d{{2}} ?\d{{2}} ?(?:\d{{2}}|2[AB]) ?\d{{3}} ?\d{{3}} ?\d{{2}}{_E}"
        ),
        nir.is_valid,
        None,
        15,
        unless=("2A", "2B"),  # Corsica: 2A/2B stands in the middle of the digits
    ),
    _Rule(
        "nationalid",
        re.compile(
            r"[A-Z](?<!\w[A-Z])[A-Z]{5}[0-9LMNPQRSTUV]{2}[A-EHLMPR-T][0-9LMNPQRSTUV]{2}[A-Z]"
            r"[0-9LMNPQRSTUV]{3}[A-Z](?!\w)",
            re.IGNORECASE,
        ),
        codicefiscale.is_valid,
        None,
    ),
    _Rule(
        "nationalid",
        re.compile(rf"\d(?<![\w.\-/]\d)\d{{7}}-?[A-Z]{_E}", re.IGNORECASE),
        dni.is_valid,
        None,
        8,
    ),
    _Rule(
        "nationalid",
        re.compile(rf"[XYZ](?<![\w.\-/][XYZ])-?\d{{7}}-?[A-Z]{_E}", re.IGNORECASE),
        nie.is_valid,
        None,
        7,
    ),
    # UK National Insurance number: two letters, six digits (grouped any way), a letter.
    _Rule(
        "nationalid",
        re.compile(r"[A-Z](?<!\w[A-Z])[A-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-Z](?!\w)"),
        _any,
        None,
        6,
    ),
    # After words naming a national id: any run of 8-15 digits in common groupings (BSN, SIN,
    # PESEL, bare CPF, Aadhaar, a NIR written in groups...), valid or not: people mistype, and
    # the cue says what it is.
    _Rule(
        "nationalid",
        re.compile(rf"(?=\d){_B}\d(?:[ .\-]?\d){{7,14}}{_E}"),
        _any,
        "nid",
        8,
    ),
)


#: Every national id form holds six digits in a row, single separators aside (or a codice
#: fiscale's six letters and two digits): a text without that holds none, and the rules are
#: not run on it.
_SIX_DIGITS = re.compile(r"\d(?:[ .\-]?\d){5}")
# Found from its digits, looking back at the letters: the engine skips to digits.
_CODICE_HINT = re.compile(r"\d\d(?<=[A-Za-z]{6}\d\d)")


#: The forms found without a cue.
_FORMS = [rule for rule in _ID_RULES if rule.cue is None]
#: Any of those forms, in one pattern: a search of it finds a match wherever one of the forms
#: would, so a text without one skips the forms' separate passes (most texts holding digits hold
#: no national id: one pass instead of up to seven, measured 40% less time on such texts).
_ANY_FORM = re.compile(
    "|".join(
        f"(?i:{rule.pattern.pattern})"
        if rule.pattern.flags & re.IGNORECASE
        else f"(?:{rule.pattern.pattern})"
        for rule in _FORMS
    )
)


def _forms_for(text: str) -> list[_Rule]:
    """The forms that may match in ``text``: all of them if one does, else none.

    One search of `_ANY_FORM`. An RE2 set of the forms' supersets, which says which forms may
    match, cost more on new messages: its automaton learns its states from the texts it meets,
    and on the benchmark's first 400 messages, cold, it cost 7,400 instructions a message for
    the 27 texts that reached it; running every form on a text where one matches is as exact
    (a form that matches nowhere finds nothing), and rare.
    """
    return _FORMS if _ANY_FORM.search(text) is not None else []


#: What every id cue contains, searched in the lower-cased text before `_ID_CUES` runs.
_ID_CUE_HINT = re.compile(
    r"ssn|soc|insurance|ni\s(?<=\bni\s)|nino|nir|curit|insee|codice|tax|fiscal|bsn|burger|citizen|"
    r"sofi|cpf|pesel|sin|aadha|dni|nie|nif|national|id\s(?<=\bid\s)|personal|steuer|tfn"
)


def _id_spans(text: str) -> Iterator[tuple[int, int, str]]:
    scan = text_scan(text)
    if scan.longest < 2 or (
        (scan.longest < 6 or _SIX_DIGITS.search(text) is None) and _CODICE_HINT.search(text) is None
    ):
        return
    for rule in _forms_for(text):
        if not rule.may_match(text, scan.longest):
            continue
        for m in rule.pattern.finditer(text):
            if rule.valid(_compact(m.group())):
                yield m.start(), m.end(), rule.kind
    # A cued id holds eight digits or more in a run, and its cue one of the hint's words.
    if scan.longest < 8 or not scan.may_hold(_ID_CUE_HINT):
        return
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
    cue = Cue(run=2)
    # A form found anywhere but the codice fiscale, each where its lookbehind lets it start
    # (`edge_superset`: not inside a number or a word). A codice fiscale's first eight characters
    # (its whole pattern would multiply the states of the RE2 set), where `_id_spans` reads on:
    # after six letters and two digits, or in a text holding six digits in a run. Or a cue's
    # words and eight digits in a run (every cued rule's pattern holds that many).
    gate = Gate.any_of(
        "|".join(edge_superset(r.pattern) for r in _FORMS if r.valid is not codicefiscale.is_valid),
        "[A-Za-z]{6}[0-9]{2}",
        ("(?i:[A-Z]{6}[0-9L-NP-V]{2})", digit_run(6)),
        (ascii_superset(_ID_CUES, word_start=True), digit_run(8)),
    )
    kinds = ("ssn", "nationalid")

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every national id in ``text``."""
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
    r"(?=[A-Z])(?<![\w-])(?:[A-PR-UWYZ][A-HK-Y]?\d[A-Z\d]? ?\d[ABD-HJLNP-UW-Z]{2}"
    r"|[ABCEGHJ-NPRSTVXY]\d[ABCEGHJ-NPRSTV-Z] ?\d[ABCEGHJ-NPRSTV-Z]\d)(?![\w-])"
)
#: British and Canadian postcodes hold a capital letter touching a digit.
_UPPER_DIGIT = re.compile(r"[A-Z]\d")
#: Postcodes of other countries: digits, maybe grouped (`94105`, `94105-1234`, `03-427`,
#: `83449-786`, `693-3584`, `1011 AB`), read only after a postcode cue.
_POST_NUMERIC = re.compile(
    r"(?=\d)(?<![\w.\-/])\d{2,6}(?:[ \-]?\d{3,4})?(?: ?[A-Z]{2})?(?![\w]|[.\-/]\d)"
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
    cue = Cue(run=1)
    # A British or Canadian shape (not inside a word); or a cue's words and a numeric
    # postcode's four digits.
    gate = Gate.any_of(
        edge_superset(_POST_SHAPES),
        (
            ascii_superset(_POST_CUES, word_start=True),
            digit_run(4),
        ),
    )

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every postcode in ``text``."""
        scan = text_scan(text)
        if not scan.longest:
            return
        if _UPPER_DIGIT.search(text) is not None:
            for m in _POST_SHAPES.finditer(text):
                yield Detection(m.start(), m.end(), self.kind, normalise(self.kind, m.group()))
        # A numeric postcode holds four digits or more, after a cue holding one of the hint's words.
        if scan.longest < 4 or not scan.may_hold(_POST_HINT):
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
#: What every expiry cue contains, searched in the lower-cased text before `_EXPIRY` runs.
_EXPIRY_HINT = re.compile(r"exp|valid|thru|ablauf|gültig|scadenza|vencimiento|caducidad")
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
    cue = Cue(run=3, chars=("/", "-", "."))
    gate = Gate.any_of(
        ascii_superset(_EXPIRY, word_start=True),
        # After a card: thirteen digits in a run, and the `/` of its month and year. Not the
        # month and year themselves: a pattern reading which digits a text holds multiplies
        # the states the RE2 set learns (on the benchmark's first 400 messages, cold, the set
        # cost 43,000 instructions a message more with it), and `/` passes few more texts.
        (digit_run(13), "/"),
    )

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every card expiry date in ``text``."""
        if "/" not in text and "-" not in text and "." not in text:
            return
        scan = text_scan(text)
        # A month and year hold three digits or more, a card and its expiry seventeen.
        if scan.longest >= 3 and scan.may_hold(_EXPIRY_HINT):
            yield from self._dates(_EXPIRY, text)
        if scan.longest >= 17 and "/" in text:
            yield from self._dates(_AFTER_CARD, text)

    def _dates(self, pattern: re.Pattern[str], text: str) -> Iterator[Detection]:
        for m in pattern.finditer(text):
            start, end = m.span("date")
            yield Detection(start, end, self.kind, normalise(self.kind, m.group("date")))
