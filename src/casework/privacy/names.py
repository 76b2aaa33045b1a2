"""Person names typed in free text: found by context cues and a first-name gazetteer.

Entry point: :class:`NameDetector`. A name is read after a cue — `my name is`, `I'm`, `this is`,
a sign-off (`Thanks,` + new line, `Best regards,`, `— `) — as capitalised words (titles skipped,
particles such as `van der` or `de la` kept) or a run of CJK characters. After a strong cue
(`my name is`, `name:`) any such word is a name; after a weak one (`I'm`, `this is`, a sign-off)
the first word must be a known first name, so `I'm Not Sure` and `Thanks, The Team` stay.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache
from importlib import resources

from casework.privacy.detection import Detection, text_scan
from casework.privacy.prefilter import Gate, ascii_superset
from casework.privacy.pseudonyms import normalise

__all__ = ["NameDetector", "first_names"]


@lru_cache(maxsize=1)
def first_names() -> frozenset[str]:
    """The shipped first-name gazetteer, case-folded (see `first_names.txt` for its source)."""
    text = resources.files("casework.privacy").joinpath("first_names.txt").read_text("utf-8")
    return frozenset(_fold(line) for line in text.splitlines() if line and not line.startswith("#"))


# A strong cue names what follows; a weak one often precedes other words. Sign-offs end a line
# (or are a dash) and their name stands alone on what follows.
_STRONG = r"my\s+name\s+is|my\s+name's|name\s*:|call\s+me|signed\s*:?"
_WEAK = r"i'm|i\s+am|i’m|this\s+is|it's\s+me|here\s+is|hier\s+ist|je\s+suis|soy|sono|ik\s+ben"
_SIGN_OFF = (
    r"(?:thanks|thank\s+you|many\s+thanks|cheers|regards|best\s+regards|kind\s+regards|"
    r"warm\s+regards|best\s+wishes|best|sincerely|yours\s+sincerely|yours\s+truly|yours|"
    r"respectfully|take\s+care|greetings|mit\s+freundlichen\s+grüßen|cordialement|saludos|"
    r"cordiali\s+saluti|groeten|met\s+vriendelijke\s+groet|atenciosamente|pozdrawiam)"
    r"(?:\s+(?:again|so\s+much|a\s+lot))?\s*[,!.]?[ \t]*(?:\r?\n\s*|(?<=,)[ \t]*)"
)
_CUE = re.compile(
    rf"(?<![\w'’])(?:(?P<strong>{_STRONG})|(?P<weak>{_WEAK})|(?P<sign>{_SIGN_OFF})|"
    r"(?P<dash>(?:^|(?<=\s))(?:—|–|--)))[ \t]*",
    re.IGNORECASE | re.MULTILINE,
)
# What every cue but a dash contains, searched in the lower-cased text before the cue pattern
# runs: most messages hold none, and this costs a tenth of the case-insensitive pattern.
_WORDS_HINT = (
    r"name|i'm|i’m|i\s+am|this\s+is|it's\s+me|here\s+is|hier\s+ist|je\s+suis|soy|sono|ik\s+ben|"
    r"call\s+me|signed|thank|cheers|regards|best|sincerely|yours|respectfully|take\s+care|greetings|grüßen|"
    r"cordialement|saludos|saluti|groet|atenciosamente|pozdrawiam"
)
_WORD_CUE_HINT = re.compile(_WORDS_HINT)
_CUE_HINT = re.compile(_WORDS_HINT + "|—|–|--")
# `_CUE` where only its dash can match. `(?<![\w'’])` is left out: a space before the dash, or
# the start of a line, is neither a word character nor an apostrophe.
_DASH_CUE = re.compile(r"(?:^|(?<=\s))(?:—|–|--)[ \t]*", re.MULTILINE)
# A word that can be part of a name: letters with inner apostrophes, hyphens and dots.
_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|['’\-.](?=[^\W\d_]))*\.?")
# CJK letters, with the iteration mark 々 that repeats a kanji (`佐々木`).
_CJK = re.compile(
    r"[\u3005\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{1,6}"
    r"(?:[ \u3000][\u3005\u3040-\u30ff\u3400-\u9fff]{1,6})?"
)
# A title as written, hyphens and dots included (`Dipl.-Ing.`), which `_WORD` would cut.
_TITLE_TOKEN = re.compile(r"[^\W\d_][\w.\-]*")
# After a weak cue, a lone unknown word is a name when it introduces its writer: `this is Gerlinde
# from the billing team`.
_FROM = re.compile(r"[ \t]+from\b")
_GAP = re.compile(r"[ \t]+")

_TITLES = frozenset(
    [
        "mr",
        "mr.",
        "mrs",
        "mrs.",
        "ms",
        "ms.",
        "miss",
        "mx",
        "mx.",
        "misc.",
        "dr",
        "dr.",
        "prof",
        "prof.",
        "univ.prof.",
        "sir",
        "dame",
        "herr",
        "frau",
        "mme",
        "mme.",
        "m.",
        "mlle",
        "sig.",
        "sig",
        "sig.ra",
        "sra",
        "sra.",
        "sr",
        "sr.",
        "sr.a",
        "dona",
        "don",
        "pan",
        "pani",
        "dipl.-ing.",
        "ing.",
        "dott.",
        "dott.ssa",
        "shri",
        "smt.",
        "smt",
        "rev",
        "rev.",
        "lic.",
        "lic",
        "srta",
        "srta.",
        "dra",
        "dra.",
        "ind.",
    ]
)
_PARTICLES = frozenset(
    [
        "van",
        "von",
        "der",
        "den",
        "de",
        "del",
        "della",
        "dos",
        "das",
        "da",
        "di",
        "du",
        "la",
        "le",
        "ten",
        "ter",
        "y",
        "bin",
        "al",
        "el",
        "zu",
        "vom",
    ]
)
_SUFFIXES = frozenset(
    [
        "jr",
        "jr.",
        "sr.",
        "ii",
        "iii",
        "iv",
        "md",
        "phd",
        "dds",
        "dvm",
        "b.a.",
        "b.sc.",
        "m.sc.",
        "mba",
        "mba.",
        "m.a.",
    ]
)


#: Capitalised words that sign a message but are no one's name (`Thanks, The Support Team`).
_NOT_NAMES = frozenset(
    [
        "the",
        "a",
        "an",
        "our",
        "your",
        "my",
        "team",
        "support",
        "service",
        "customer",
        "customers",
        "care",
        "accounts",
        "account",
        "payable",
        "receivable",
        "department",
        "dept",
        "office",
        "desk",
        "sales",
        "billing",
        "management",
        "staff",
        "group",
        "crew",
        "family",
        "helpdesk",
        "admin",
        "administrator",
        "manager",
        "operations",
        "hr",
        "it",
        "legal",
        "finance",
        "shipping",
        "returns",
        "orders",
        "not",
        "sure",
        "so",
        "very",
        "just",
        "also",
        "really",
        "here",
        "there",
        "sorry",
        "happy",
        "glad",
        "looking",
        "writing",
        "trying",
        "going",
        "still",
        "back",
        "fine",
        "done",
        "ok",
        "okay",
        "yes",
        "no",
        "please",
        "thanks",
        "thank",
        "hello",
        "hi",
        "dear",
        "all",
        "everyone",
        "anyone",
        "someone",
    ]
)


@lru_cache(maxsize=1)
def _stop_words() -> frozenset[str]:
    """scikit-learn's English stop words and :data:`_NOT_NAMES` (imported only when needed)."""
    from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

    return frozenset(ENGLISH_STOP_WORDS) | _NOT_NAMES


def _fold(word: str) -> str:
    """``word`` case-folded without accents (`Ágatha` -> `agatha`)."""
    return "".join(
        ch for ch in unicodedata.normalize("NFKD", word.casefold()) if not unicodedata.combining(ch)
    )


def _is_name_word(word: str) -> bool:
    return (word[0].isupper() and not word.isupper()) or (len(word) <= 3 and word.istitle())


class NameDetector:
    """Person names after context cues (see the module docstring), kind `name`.

    Args:
        names: First names the weak cues accept (default: the shipped gazetteer).
    """

    kind = "name"
    # A cue (its words start with a letter: a word boundary before them), then the letter a
    # name or a title starts with, after the spaces `_CUE` ends with. On ASCII text there is no
    # CJK name to read.
    gate = Gate.any_of(
        ascii_superset(
            re.compile(
                rf"(?<!\w)(?:{_STRONG}|{_WEAK}|{_SIGN_OFF})[ \t]*[A-Za-z]|(?:—|–|--)[ \t]*[A-Za-z]",
                re.IGNORECASE,
            ),
            word_start=True,
        )
    )

    def __init__(self, names: frozenset[str] | None = None) -> None:
        self.names = names if names is not None else first_names()

    def find(self, text: str) -> Iterator[Detection]:
        """Yield every name read after a cue in ``text``."""
        scan = text_scan(text)
        if not scan.may_hold(_CUE_HINT):
            return
        if not scan.may_hold(_WORD_CUE_HINT):
            # Every cue but a dash holds one of the hint's words, so none of them can match
            # here: `_CUE`'s matches are its dash's, found without trying its hundred-odd words
            # ignoring case at every character (a message with an em dash holds the hint).
            for cue in _DASH_CUE.finditer(text):
                found = self._read(text, cue.end(), strong=False, alone=True)
                if found is not None:
                    yield Detection(*found, self.kind, normalise(self.kind, text[slice(*found)]))
            return
        for cue in _CUE.finditer(text):
            found = self._read(
                text,
                cue.end(),
                strong=cue.group("strong") is not None,
                alone=cue.group("weak") is None,
            )
            if found is not None:
                start, end = found
                yield Detection(start, end, self.kind, normalise(self.kind, text[start:end]))

    def _read(self, text: str, pos: int, *, strong: bool, alone: bool) -> tuple[int, int] | None:
        cjk = _CJK.match(text, pos)
        if cjk is not None:
            return cjk.start(), cjk.end()
        words = self._words(text, pos)
        if not words:
            return None
        parts = [text[s:e].casefold() for s, e in words]
        for i, part in enumerate(parts):
            if part in _NOT_NAMES:  # `Ada. The parcel…`: the name ends where ordinary words start
                words, parts = words[:i], parts[:i]
                break
        while parts and parts[-1] in _PARTICLES:
            words, parts = words[:-1], parts[:-1]
        if not parts:
            return None
        names = [p for p in parts if p not in _PARTICLES]
        if strong or any(_fold(part) in self.names for part in names[0].split("-")):
            return words[0][0], words[-1][1]
        # A weak cue without a known first name: a full name (given and family) still reads as
        # one, and so does a single word standing alone on a sign-off's line.
        if len(names) >= 2 or (alone and self._ends_line(text, words[-1][1])):
            return words[0][0], words[-1][1]
        if not alone and _FROM.match(text, words[-1][1]) and parts[0] not in _stop_words():
            return words[0][0], words[-1][1]
        return None

    @staticmethod
    def _ends_line(text: str, end: int) -> bool:
        rest = text[end : end + 2]
        return not rest.strip() or rest[:1] in "\r\n"

    @staticmethod
    def _words(text: str, pos: int) -> list[tuple[int, int]]:
        """Spans of the name words from ``pos``: titles skipped, particles kept before a name."""
        words: list[tuple[int, int]] = []
        pending: list[tuple[int, int]] = []  # particles waiting for the name they precede
        titled = False
        while len(words) < 5:
            if not words and not pending and not titled:
                title = _TITLE_TOKEN.match(text, pos)
                if title is not None and title.group().casefold() in _TITLES:
                    titled = True
                    gap = _GAP.match(text, title.end())
                    if gap is None:
                        break
                    pos = gap.end()
                    continue
            m = _WORD.match(text, pos)
            if m is None:
                break
            word = m.group()
            low = word.casefold()
            if words and low.rstrip(".,") in _SUFFIXES:
                break
            elif low in _PARTICLES:
                pending.append((m.start(), m.end()))
            elif _is_name_word(word):
                words.extend(pending)
                pending = []
                words.append((m.start(), m.end() - (1 if word.endswith(".") else 0)))
                if word.endswith(".") and len(word) > 2:
                    break  # the end of a sentence, not an initial
            else:
                break
            gap = _GAP.match(text, m.end())
            if gap is None:
                break
            pos = gap.end()
        return words
