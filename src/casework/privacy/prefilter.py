r"""One compiled pass over a text that says which detectors can find anything in it.

A built-in detector declares a :class:`Gate`: RE2 patterns of which an ASCII text must match
all of at least one group for the detector to find anything there (a necessary condition, never
a sufficient one). :class:`Prefilter` compiles every detector's patterns into RE2 sets; a set
reports in a single pass over the text every pattern of it that matches, and the scrubber then
calls only the detectors whose gate the text passes. On the benchmark's messages that leaves 2.6
detector calls a message where the cues left 7.0 (see docs/privacy.md).

Why RE2 sets: Python's ``re`` has no multi-pattern matcher (an alternation reports one match at
a time). Hyperscan scans as fast (2.5 µs a message through its Python callbacks, against 2.0 µs
for two RE2 sets) but took 2.2 s to compile these patterns, on every start; RE2 compiles them in
milliseconds and learns its automata's states from the texts it meets (the benchmark's first
20,000 messages cost 3.7 µs each to match, 2.0 µs once the states are learnt; load 12).

Gates are written for ASCII texts only, where Python's ``\d``, ``\s``, ``\w`` and case folding
are ASCII classes that RE2 spells exactly; a text whose only other characters are dashes is read
with an ASCII stand-in in their place (:func:`stand_in_text`), and a text holding anything else
goes the older way (:class:`casework.privacy.detection.Cue`). :func:`ascii_superset` turns a
detector's own Python pattern into such a pattern, so a gate and its detector share one source.

Entry points: :class:`Gate`, :func:`ascii_superset`, :func:`digit_run`, :class:`Prefilter`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, NamedTuple

import re2  # type: ignore[import-untyped]

from casework.privacy.detection import SEP, SEP_OR_BRACKET, Cue, Detector

__all__ = [
    "STAND_IN",
    "STAND_INS",
    "Gate",
    "Prefilter",
    "ascii_superset",
    "digit_run",
    "edge_superset",
    "forget_learnt",
    "gate_of",
    "left_edge",
    "matching",
    "pattern_gate",
    "stand_in_text",
]


class Gate(NamedTuple):
    """What an ASCII text must hold for a detector to find anything in it, as RE2 patterns.

    Attributes:
        clauses: Groups of RE2 patterns: the detector may find something in a text only if,
            for at least one group, every pattern of the group matches somewhere in the text.
    """

    clauses: tuple[tuple[str, ...], ...]

    @classmethod
    def any_of(cls, *clauses: str | tuple[str, ...]) -> Gate:
        """A gate passed by a text matching any of ``clauses`` (a tuple: all of its patterns)."""
        return cls(tuple((c,) if isinstance(c, str) else c for c in clauses))

    @classmethod
    def of_cue(cls, cue: Cue) -> Gate:
        """The gate a :class:`~casework.privacy.detection.Cue` describes, as RE2 patterns."""
        patterns = []
        if cue.run > 0:
            patterns.append(digit_run(cue.run))
        if cue.digits > 0:
            patterns.append(f"[0-9](?:[^0-9]*[0-9]){{{cue.digits - 1}}}")
        if cue.chars:
            # As the text the gates read has them (:func:`stand_in_text`).
            patterns.append("|".join(re2.escape(c.translate(_TO_STAND_IN)) for c in cue.chars))
        return cls((tuple(patterns),))  # no condition: one empty group, which every text passes


def digit_run(digits: int) -> str:
    """An RE2 pattern for a run of ``digits`` digits joined by separators or brackets.

    Every gate counts digits this one way (the :attr:`Cue.run` of
    :class:`~casework.privacy.detection.Cue`): counters that differ only in their length share
    the states of the RE2 set's automaton, where counters of different shapes multiply them.
    """
    body = ascii_superset(SEP_OR_BRACKET)
    return f"[0-9](?:{body}*[0-9]){{{digits - 1}}}" if digits > 1 else "[0-9]"


#: What a configured pattern may not hold for it to be given a gate: escaped digits (octal
#: escapes, backreferences), anchors `\A`, `\Z`, `\G`, named characters, comments,
#: conditionals, the verbose, ASCII and locale flags, and Python's `{,n}`.
_UNREAD = re.compile(r"\\[0-9AZGN]|\(\?[#(xaLu]|\{,")


def pattern_gate(pattern: re.Pattern[str]) -> Gate | None:
    """A gate for a configured pattern (`privacy.id_patterns`), or ``None`` if it has none.

    Only a pattern of the plain syntax Python and RE2 read alike, compiled without flags but
    ignoring case, is given one; any other runs on every text, as before.
    """
    if pattern.flags & ~(re.IGNORECASE | re.UNICODE) or _UNREAD.search(pattern.pattern):
        return None
    try:
        translated = ascii_superset(pattern)
        re2.compile(translated)
    except (ValueError, re.error, re2.error):
        return None
    return Gate.any_of(translated)


def gate_of(detector: Detector) -> Gate | None:
    """A detector's gate: its own, else its cue's, else ``None`` (it runs on every text)."""
    gate = getattr(detector, "gate", None)
    if isinstance(gate, Gate):
        return gate
    cue = getattr(detector, "cue", None)
    return Gate.of_cue(cue) if isinstance(cue, Cue) else None


def ascii_superset(source: str | re.Pattern[str], *, word_start: bool = False) -> str:
    r"""A pattern matching, in any ASCII text, wherever the Python one does; ASCII itself.

    ``source`` is a pattern or a compiled one (whose case and ASCII flags then count). The
    result may match more: lookarounds, anchors and word boundaries are dropped (an assertion
    left out only lets more through) and possessive quantifiers become greedy ones. Every class,
    every escape (``\d``, ``\s``, ``\.``) and every character outside ASCII becomes the class of
    the ASCII characters Python's own engine matches with it (so ``\s`` holds 0x1C–0x1F, and a
    character outside ASCII that folds to none becomes a class no ASCII text holds). The result
    reads the same in RE2, in Hyperscan and in Python. With ``word_start``, a ``(?<!\w)``
    becomes ``\b``: the caller vouches that a word character follows it in every match (a
    cue's words).

    Raises:
        ValueError: The pattern holds a backreference or a construct this does not read.
    """
    pattern = source if isinstance(source, str) else source.pattern
    own = 0 if isinstance(source, str) else source.flags & (re.IGNORECASE | re.ASCII)
    ignore_case = bool(own & re.IGNORECASE)
    # A class inside a `(?i:…)` group is read ignoring case: more characters, never fewer.
    flags = own | (re.IGNORECASE if "(?i" in pattern else 0)
    out: list[str] = []
    i, n = 0, len(pattern)
    quantified = False  # the last item written was a quantifier: a `+` after it is possessive
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            esc = pattern[i + 1]
            if esc in "bB":
                i += 2
                continue
            if (esc.isdigit() and esc != "0") or esc in "AZ":
                raise ValueError(f"no ASCII superset for \\{esc} in {pattern!r}")
            width = {"u": 6, "U": 10, "x": 4}.get(esc, 2)
            out.append(_ascii_class(pattern[i : i + width], flags))
            i += width
            quantified = False
            continue
        if ch == "[":
            end = _class_end(pattern, i)
            out.append(_ascii_class(pattern[i:end], flags))
            i = end
            quantified = False
            continue
        if ch == "(" and pattern.startswith("(?", i):
            if pattern.startswith(("(?<=", "(?<!", "(?=", "(?!"), i):
                end = _group_end(pattern, i)
                if word_start and pattern[i:end] == r"(?<!\w)":
                    out.append(r"\b")
                i = end
                continue
            if pattern.startswith("(?P<", i):
                i = pattern.index(">", i) + 1
                out.append("(?:")
                continue
            if pattern.startswith("(?>", i):
                i += 3
                out.append("(?:")
                continue
            if pattern.startswith("(?P=", i):
                raise ValueError(f"no ASCII superset for a backreference in {pattern!r}")
        if ch in "^$":
            i += 1
            continue
        if ch == "+" and quantified:
            quantified = False
            i += 1
            continue
        quantified = ch in "*+?}"
        out.append(ch if ch.isascii() else _ascii_class(ch, flags))
        i += 1
    body = "".join(out)
    return f"(?i:{body})" if ignore_case else body


#: A pattern's opening: lookaheads (dropped), then a lookbehind of one item ``(?<!C)``, or one
#: item ``X`` and a lookbehind ``(?<!CX)`` of the character before it and ``X`` itself.
_EDGE = re.compile(
    r"(?:\(\?=(?:[^()\[\]\\]|\\.|\[(?:[^\]\\]|\\.)*\])*\))*"
    r"(?:\(\?<!(?P<alone>\\[a-zA-Z]|\[(?:[^\]\\]|\\.)+\])\)"
    r"|(?P<first>\\[a-zA-Z]|\[(?:[^\]\\]|\\.)+\])"
    r"\(\?<!(?P<before>\\[a-zA-Z]|\[(?:[^\]\\]|\\.)+\])(?P=first)\))"
)


def edge_superset(source: str | re.Pattern[str]) -> str:
    r""":func:`ascii_superset` of ``source``, held to the left edge its opening lookbehind sets.

    When the pattern opens with ``(?<!C)`` (after lookaheads), or with one item ``X`` and
    ``(?<!CX)``, no match starts right after a character of ``C``: in an ASCII text the
    character before a match, if there is one, is one of the ASCII characters ``C`` does not
    match (read with the pattern's flags, as :func:`ascii_superset` reads a class). The result is
    ``(?:^|[^C])`` and the translation: it matches wherever the Python pattern does. Where
    :func:`ascii_superset` drops the lookbehind, a match may start at every character of a run
    (a digit inside a number, a letter inside a word), and each start is a thread the RE2 set's
    automaton carries, multiplying its states: cold, on the benchmark's first 400 messages, the
    digit-shape set (IBAN starts, id forms, postcode shapes) cost 52,000 instructions a message
    without the edges, 30,000 with them. A pattern opening any other way gets no edge.
    """
    edge = left_edge(source)
    return f"{edge}(?:{ascii_superset(source)})" if edge else ascii_superset(source)


def left_edge(source: str | re.Pattern[str]) -> str:
    """The RE2 ``(?:^|[^C])`` of :func:`edge_superset` for ``source``, or ``""`` (no edge).

    A pattern put after it must match, in ASCII text, wherever ``source`` does, starting
    where ``source``'s match starts (as :func:`ascii_superset` of ``source`` does).
    """
    pattern = source if isinstance(source, str) else source.pattern
    flags = 0 if isinstance(source, str) else source.flags & (re.IGNORECASE | re.ASCII)
    opening = _EDGE.match(pattern)
    if opening is None:
        return ""
    # Without :data:`STAND_IN`, which may stand for a dash `C` does not match: a text's own
    # unit separator before a match passes the gate, which only lets more through.
    held = _ascii_class(
        f"(?!{re.escape(STAND_IN)}){opening.group('alone') or opening.group('before')}",
        flags,
        stand_in=False,
    )
    if held == r"[^\x00-\x7f]":
        return ""  # `C` matches no ASCII character: every start is allowed
    return f"(?:^|[^{held[1:-1]}])"


#: Characters outside ASCII that a text may hold and still be read by the prefilter, each
#: replaced by :data:`STAND_IN` (:func:`stand_in_text`): dashes, which messages write between
#: clauses (`sent it twice — 0121 234 4390 — why`). Neither is a word character.
STAND_INS = "\u2013\u2014"
#: The ASCII character that takes the place of each of :data:`STAND_INS`. Every pattern item
#: matching one of them matches it in a gate (:func:`_ascii_class`), so a gate passes the
#: replaced text wherever its Python pattern matches the text itself. A control character (the
#: unit separator), not a word character, that messages hardly hold.
STAND_IN = "\x1f"
_TO_STAND_IN = str.maketrans(dict.fromkeys(STAND_INS, STAND_IN))


def stand_in_text(text: str) -> str | None:
    """``text`` with each of :data:`STAND_INS` replaced by :data:`STAND_IN`, if ASCII then.

    ``None`` when ``text`` holds any other character outside ASCII. Of the same length: the
    replaced text is read only by the gates, the detectors read ``text`` itself.
    """
    for ch in STAND_INS:
        text = text.replace(ch, STAND_IN)
    return text if text.isascii() else None


@lru_cache(maxsize=512)
def _ascii_class(item: str, flags: int, *, stand_in: bool = True) -> str:
    r"""The ASCII characters Python's engine matches with one pattern item, as a class.

    With ``stand_in``, :data:`STAND_IN` too when the item matches one of :data:`STAND_INS`.
    An item no such character matches becomes ``[^\x00-\x7f]``, which no ASCII text holds.
    """
    one = re.compile(item, flags)
    held = [c for c in map(chr, range(128)) if one.fullmatch(c) is not None]
    if stand_in and STAND_IN not in held and any(one.fullmatch(c) for c in STAND_INS):
        held = sorted([*held, STAND_IN])
    if not held:
        return r"[^\x00-\x7f]"
    runs: list[list[int]] = []
    for code in map(ord, held):
        if runs and runs[-1][1] == code - 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return "[" + "".join(_ascii_run(a, b) for a, b in runs) + "]"


def _ascii_run(first: int, last: int) -> str:
    def one(code: int) -> str:
        return chr(code) if chr(code).isalnum() else f"\\x{code:02x}"

    return one(first) if first == last else f"{one(first)}-{one(last)}"


def _class_end(pattern: str, start: int) -> int:
    """The index after the character class opening at ``start``."""
    i = start + 1
    i += pattern.startswith("^", i)
    i += pattern.startswith("]", i)  # a `]` first in a class is a literal
    while pattern[i] != "]":
        i += 2 if pattern[i] == "\\" else 1
    return i + 1


def _group_end(pattern: str, start: int) -> int:
    """The index after the group opening at ``start`` (escapes and classes skipped)."""
    depth = 0
    i = start
    in_class = False
    while i < len(pattern):
        ch = pattern[i]
        i += 1
        if ch == "\\":
            i += 1
        elif in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
            i += pattern.startswith("^", i)
            i += pattern.startswith("]", i)  # a `]` first in a class is a literal
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError(f"unbalanced group in {pattern!r}")


#: :data:`casework.privacy.detection.SEP` as an ASCII class.
SEP_RE2 = ascii_superset(SEP)

#: Patterns at least this long (alternations of cue words, of id forms) go in other RE2 sets
#: (:func:`_set_groups`). One set for all patterns learns far more automaton states, each made
#: the first time a text reaches it: cold, on the benchmark's messages, 82 ms for the first
#: 5,000 messages against 28 ms with two sets, for 1.35 against 2.0 µs a message once learnt
#: (load 12).
_LONG = 80
#: Memory for each RE2 set's automaton: with RE2's default (8 MiB) the cache of states is reset
#: again and again and a message costs ten times as much.
_MAX_MEM = 32 << 20


def _set_groups(patterns: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """The three RE2 sets ``patterns`` are matched in: short ones, long words, long digit shapes.

    Patterns shorter than :data:`_LONG` share a set. Long ones of words (opening at a word
    boundary, as a cue's words do, or reading no digit) share a second; the other long ones
    (id forms, an IBAN's start, the postcode shapes: digits in various shapes) a third. Each
    state of a set's automaton holds every pattern it is inside, so digit shapes and cue words
    in one set multiply each other's states, each learnt the first time a text reaches it:
    cold, on the benchmark's first 400 messages, the sets cost 107,000 instructions a message
    against 153,000 in two sets (short, long). A set's own pass costs about 0.6 µs a message
    once learnt, so no more are made: with each digit shape apart (five sets) the first 400
    messages cost less, but 4,000 cost more.
    """
    short = tuple(p for p in patterns if len(p) < _LONG)
    long = [p for p in patterns if len(p) >= _LONG]
    words = tuple(p for p in long if p.startswith(r"(?i:\b") or "0-9" not in p)
    return short, tuple(p for p in long if p not in words), words


@lru_cache(maxsize=16)
def _compiled(patterns: tuple[str, ...]) -> Any:
    """One RE2 set of ``patterns`` (index ``i`` is pattern ``i``), the empty pattern last.

    The empty pattern matches every text: an answer without it means RE2 gave up (its automaton
    ran out of memory on a long text), and the caller then runs every detector.
    """
    options = re2.Options()
    options.never_capture = True
    options.log_errors = False
    options.max_mem = _MAX_MEM
    found = re2.Set.SearchSet(options)
    for pattern in (*patterns, ""):
        found.Add(pattern)
    found.Compile()
    # The compiled set itself, when the wrapper exposes it: `re2.Set.Match` is a Python method
    # that only checks the text's type and turns an empty answer into ``None`` (two Python calls
    # a message for the prefilter). The set's own `Match` takes bytes and returns a list.
    return getattr(found, "_set", found)


def matching(patterns: tuple[str, ...], text: str) -> frozenset[int] | None:
    """The indices of the RE2 ``patterns`` that match somewhere in ASCII ``text``, in one pass.

    ``None`` when RE2 gives up on the text (its automaton ran out of memory): the caller then
    reads the text another way. The set of ``patterns`` is compiled once (and dropped by
    :func:`forget_learnt`).
    """
    found = _compiled(patterns).Match(text.encode("ascii"))
    held = frozenset(found) if found else frozenset()
    return held if len(patterns) in held else None


def forget_learnt() -> None:
    """Drop the compiled RE2 sets, and with them the automaton states they learnt from texts.

    Scrubbers made after this start as a new process would: the benchmark calls it before each
    timed run, so that every run pays for the learning.
    """
    _compiled.cache_clear()


class Prefilter:
    """Which of a list of detectors may find something in an ASCII text, in one RE2 pass a set.

    Args:
        detectors: The detectors, in the order they run; one without a gate always runs.
    """

    def __init__(self, detectors: Sequence[Detector]) -> None:
        gates = [(d, gate_of(d)) for d in detectors]
        patterns = list(dict.fromkeys(p for _, g in gates if g for c in g.clauses for p in c))
        groups = _set_groups(patterns)
        # A pattern's id in the answer: its index in its set plus the set's offset (each set's
        # sentinel, the empty pattern, takes the id after its last pattern).
        place: dict[str, int] = {}
        self._sets: list[tuple[Any, int]] = []
        sentinels: list[int] = []
        for group in groups:
            offset = len(place) + len(sentinels)
            place.update({p: offset + i for i, p in enumerate(group)})
            self._sets.append((_compiled(group), offset))
            sentinels.append(offset + len(group))
        self._sentinels = frozenset(sentinels)
        self._gates = [
            (d, None if g is None else tuple(frozenset(place[p] for p in c) for c in g.clauses))
            for d, g in gates
        ]
        self._plans: dict[tuple[tuple[int, ...], ...], tuple[Detector, ...] | None] = {}
        #: Whether a text read with :data:`STAND_IN` for its dashes may be planned: every gate
        #: is made here (from a cue, or by :func:`ascii_superset` and the gates of this
        #: package's detectors, written knowing the stand-in). A gate of another package's
        #: detector was written for ASCII text only.
        self.stands_in = all(
            not isinstance(getattr(d, "gate", None), Gate)
            or type(d).__module__.startswith("casework.privacy.")
            for d in detectors
        )

    def plan(self, text: str) -> tuple[Detector, ...] | None:
        """The detectors whose gate ``text`` passes, in order; ``None`` when RE2 cannot say.

        ``text`` must be ASCII (:meth:`str.isascii`): the gates are written for ASCII text,
        and for a text's :func:`stand_in_text` when :attr:`stands_in`.
        """
        data = text.encode("ascii")
        (first, _), (second, second_at), (third, third_at) = self._sets
        # Keyed by the three answers as RE2 gives them: building the set of ids costs more
        # than the lookup, and is done only for answers not met before.
        a, b, c = first.Match(data), second.Match(data), third.Match(data)
        key = (tuple(a) if a else (), tuple(b) if b else (), tuple(c) if c else ())
        try:
            return self._plans[key]
        except KeyError:
            pass
        held = frozenset(key[0]).union(
            [second_at + i for i in key[1]], [third_at + i for i in key[2]]
        )
        plan = (
            tuple(
                d
                for d, clauses in self._gates
                if clauses is None or any(clause <= held for clause in clauses)
            )
            if self._sentinels <= held
            else None
        )
        if len(self._plans) < 4096:
            self._plans[key] = plan
        return plan
