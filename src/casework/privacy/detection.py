"""What every PII detector shares: its output, its protocol and the once-per-text scan.

:class:`Detection` is what a detector yields, :class:`Detector` its protocol, and
:class:`TextScan` what is worked out once per text so that detectors can skip texts.

Entry points: :class:`Detection`, :class:`Detector`, :class:`Cue`, :func:`text_scan`. The detectors
themselves live in :mod:`casework.privacy.detectors`, :mod:`casework.privacy.ids` and
:mod:`casework.privacy.names`; :mod:`casework.privacy.registry` lists the built-in ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple, Protocol, runtime_checkable

__all__ = [
    "CASE_FOLDS_TO_ASCII",
    "SEP",
    "SEP_OR_BRACKET",
    "Cue",
    "Detection",
    "Detector",
    "TextScan",
    "text_scan",
]

_NON_DIGIT = re.compile(r"\D")


@dataclass(frozen=True)
class Detection:
    """One piece of PII found in a text.

    Attributes:
        start: Offset of the first character.
        end: Offset after the last character.
        kind: Kind of identifier (`email`, `phone`...).
        value: The normalised value the pseudonym is computed from.
    """

    start: int
    end: int
    kind: str
    value: str


@runtime_checkable
class Detector(Protocol):
    """A PII detector: finds spans of one kind in a text."""

    kind: str

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every span of this detector's kind in ``text`` (overlaps are resolved later)."""
        ...


#: Characters written between the digit groups of a card, IBAN or phone number: spaces of every
#: width (no-break, thin, figure...), dashes of every length, dots, slashes, underscores.
SEP = r"[\s.\-/_\u2010-\u2015\u2212\u30fc\uff0d]"

#: :data:`SEP` or a bracket, as one character class: the regex engine tests a class in one step,
#: where an alternation of classes inside a repeat costs a branch per character.
SEP_OR_BRACKET = SEP[:-1] + "()]"

#: A run of digit groups joined by separators or brackets, the loosest way any number the
#: detectors look for is written: a card, phone, id, postcode or expiry date lies within one.
_RUN = re.compile(rf"\d(?:{SEP_OR_BRACKET}*\d)*")


#: The characters that the regex engine, ignoring case, reads as an ASCII letter that their
#: lower-cased form is not (`İ` lower-cases to `i` and a combining dot, `ı` and `ſ` to
#: themselves, yet match `i` and `s`). Every other character lower-cases as the engine folds it,
#: so a text without these holds a case-insensitive cue only where its lower-cased form holds the
#: cue's words, whatever else outside ASCII it holds (a curly apostrophe, a dash). Worked out
#: over all of Unicode by `tests/privacy/test_privacy_cues.py`.
CASE_FOLDS_TO_ASCII = frozenset("\u0130\u0131\u017f")


class TextScan(NamedTuple):
    """What the detectors ask of every text, worked out once per text (see :func:`text_scan`).

    Attributes:
        lower: The text lower-cased, where cue words are looked for before a cue pattern runs.
        longest: The most digits in one run of digit groups (separators and brackets between
            them): a card needs 13, a phone number 7, a cued national id 8, so most messages
            skip most detectors on this one figure.
        digits: How many digits the text holds (an IBAN needs 8).
        plain_case: Whether lower-casing the text mirrors the regex engine's case-insensitive
            matching on it: true unless it holds one of :data:`CASE_FOLDS_TO_ASCII`.
    """

    lower: str
    longest: int
    digits: int
    plain_case: bool

    def may_hold(self, hint: re.Pattern[str]) -> bool:
        """Whether a case-insensitive cue pattern could match, judged by its ``hint``.

        ``hint`` holds lower-case words every cue contains; it is searched in :attr:`lower`.
        A text holding one of :data:`CASE_FOLDS_TO_ASCII` always may: the regex engine ignores
        case by its own mapping, which lower-casing does not mirror for those characters.
        """
        return not self.plain_case or hint.search(self.lower) is not None


class Cue(NamedTuple):
    """What a text must hold for a detector to find anything in it, judged from its :class:`TextScan`.

    A built-in detector declares one as its ``cue`` attribute; the scrubber reads every text's
    scan once and calls only the detectors whose cue the text holds, so a message without a
    long enough run of digits never reaches the phone, card or id readers at all. A cue is a
    necessary condition: a detector whose cue a text lacks would find nothing there.

    Attributes:
        run: Digits the text's longest run of digit groups holds at least.
        digits: Digits the whole text holds at least.
        chars: Substrings of which the text holds at least one (none: no such condition).
    """

    run: int = 0
    digits: int = 0
    chars: tuple[str, ...] = ()

    def held_by(self, scan: TextScan, text: str) -> bool:
        """Whether ``text`` (whose scan is ``scan``) holds this cue."""
        return (
            scan.longest >= self.run
            and scan.digits >= self.digits
            and (not self.chars or any(c in text for c in self.chars))
        )


@lru_cache(maxsize=16)
def text_scan(text: str) -> TextScan:
    """The :class:`TextScan` of ``text``.

    Cached for the last few texts: every detector asks for the text it is given, in turn.
    """
    if text.isascii():
        # Separators and brackets dropped, digits as `d` and every other character as a space:
        # the words left are the runs' digits. Three C calls where the pattern below costs a
        # regex pass and a call per run (0.9 against 2.4 µs on the benchmark's messages).
        marks = text.encode("ascii").translate(_ASCII_MARKS, _ASCII_JOINERS)
        digits = marks.count(b"d")
        longest = max(map(len, marks.split())) if digits else 0
        return TextScan(text.lower(), longest, digits, True)
    longest = digits = 0
    for run in _RUN.findall(text):
        # `\d` is a decimal digit: a run that is all decimal holds no separator to drop.
        n = len(run) if run.isdecimal() else len(_NON_DIGIT.sub("", run))
        digits += n
        if n > longest:
            longest = n
    plain_case = CASE_FOLDS_TO_ASCII.isdisjoint(text)
    return TextScan(text.lower(), longest, digits, plain_case)


#: The ASCII characters of :data:`SEP_OR_BRACKET`, which join digits into one run.
_ASCII_JOINERS = bytes(c for c in range(128) if re.fullmatch(SEP_OR_BRACKET, chr(c)))
#: Every ASCII character as :func:`text_scan` reads it once the joiners are gone: `d` a digit
#: (`\d`), a space any other character.
_ASCII_MARKS = bytes(b"d"[0] if re.fullmatch(r"\d", chr(c)) else 32 for c in range(256))
