"""Label-preserving rule-based transforms (deterministic, offline): `typos`, `informal_register`.

Each variant draws from ``random.Random("<seed>|<transform>|<case id>|<n>")``, so the same seed
gives the same bytes on any machine. Identifiers and numbers are never rewritten.
Entry points: :class:`Typos`, :class:`InformalRegister`.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from casework.schema import Case, Situation
from casework.synth.identifiers import inside, protected_spans
from casework.synth.transforms import (
    Skip,
    TransformContext,
    TransformSpec,
    rng_for,
    user_texts,
    with_user_turns,
)

__all__ = ["InformalRegister", "Typos"]

_KEYBOARD_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _neighbours(ch: str) -> str:
    low = ch.lower()
    for row in _KEYBOARD_ROWS:
        i = row.find(low)
        if i >= 0:
            near = row[max(0, i - 1) : i] + row[i + 1 : i + 2]
            return near.upper() if ch.isupper() else near
    return ""


def _misspell(word: str, rng: random.Random) -> str:
    ops = ["swap", "drop", "double", "neighbour"]
    rng.shuffle(ops)
    for op in ops:
        i = rng.randrange(1, len(word) - 1)
        if op == "swap" and word[i] != word[i + 1]:
            return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        if op == "drop":
            return word[:i] + word[i + 1 :]
        if op == "double":
            return word[: i + 1] + word[i] + word[i + 1 :]
        if op == "neighbour" and _neighbours(word[i]):
            return word[:i] + rng.choice(_neighbours(word[i])) + word[i + 1 :]
    return word[:1] + word[2:]  # pragma: no cover - "drop" always applies


class Typos:
    """Misspells about a quarter of the longer words (swap, drop, double, neighbouring key).

    Identifiers, numbers and all-capital words are never touched, so the facts the label rests
    on stay readable: the label is preserved.
    """

    spec = TransformSpec(
        "typos", True, "rule", "user_text", 1, "misspells about a quarter of the longer words"
    )

    def __init__(self, rate: float = 0.25) -> None:
        self.rate = rate

    def _one(self, text: str, rng: random.Random, ctx: TransformContext) -> str:
        protected = protected_spans(text, ctx.id_patterns)
        eligible = [
            m
            for m in re.finditer(r"[A-Za-z]{4,}", text)
            if not inside(m.start(), m.end(), protected) and not m.group().isupper()
        ]
        if not eligible:
            return text
        count = max(1, round(self.rate * len(eligible)))
        chosen = sorted(rng.sample(eligible, count), key=lambda m: m.start())
        out, last = [], 0
        for m in chosen:
            out.append(text[last : m.start()])
            out.append(_misspell(m.group(), rng))
            last = m.end()
        out.append(text[last:])
        return "".join(out)

    def make(
        self, seed: Case, indices: Sequence[int], ctx: TransformContext
    ) -> list[Situation | Skip]:
        """One misspelt copy of the user turns per index."""
        texts = user_texts(seed.situation)
        if not any(re.search(r"[A-Za-z]{4,}", t) for t in texts):
            return [Skip("no word of four letters or more to misspell")] * len(indices)
        results: list[Situation | Skip] = []
        for n in indices:
            rng = rng_for(ctx.seed, self.spec.name, seed.id, n)
            results.append(with_user_turns(seed.situation, [self._one(t, rng, ctx) for t in texts]))
        return results


# ---------------------------------------------------------------------------------------------
# informal register

_REGISTER: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        r"\b(?:hello|good (?:morning|afternoon|evening)|dear (?:sir|madam|sir or madam|team))\b,?",
        ("hey", "hi", "hiya"),
    ),
    (r"\bi would like to\b", ("i wanna", "i'd like to")),
    (r"\bi would like\b", ("i'd like", "i want")),
    (r"\bi want to\b", ("i wanna",)),
    (r"\bi am going to\b", ("i'm gonna", "im gonna")),
    (r"\bgoing to\b", ("gonna",)),
    (r"\bcould you please\b", ("can u pls", "could u plz")),
    (r"\b(?:could|can|would) you\b", ("can u", "could u")),
    (r"\bplease\b", ("pls", "plz")),
    (r"\bthank you(?: very much)?\b", ("thanks", "thx", "ty")),
    (r"\bi am\b", ("i'm", "im")),
    (r"\bi have\b", ("i've", "ive")),
    (r"\bi will\b", ("i'll", "ill")),
    (r"\bdo not\b", ("don't", "dont")),
    (r"\bdoes not\b", ("doesn't", "doesnt")),
    (r"\bdid not\b", ("didn't", "didnt")),
    (r"\bhave not\b", ("haven't", "havent")),
    (r"\bhas not\b", ("hasn't", "hasnt")),
    (r"\bis not\b", ("isn't", "isnt")),
    (r"\bwas not\b", ("wasn't", "wasnt")),
    (r"\b(?:cannot|can not)\b", ("can't", "cant")),
    (r"\bit is\b", ("it's", "its")),
    (r"\bthat is\b", ("that's", "thats")),
    (r"\bbecause\b", ("cuz", "bc")),
    (r"\byou\b", ("u",)),
    (r"\byour\b", ("ur",)),
    (r"\bokay\b", ("ok", "k")),
    (r"\byes\b", ("yeah", "yep")),
    (r"\breceived\b", ("got",)),
    (r"\bassistance\b", ("help",)),
    (r"\bregarding\b", ("about",)),
    (r"\bhowever\b", ("but",)),
    (r"\bpurchased\b", ("bought",)),
)


class InformalRegister:
    """Rewrites formal phrasing as chat: contractions, `u`/`pls`/`thx`, lower case, no final period.

    Only wording changes (every replacement means the same), identifiers are left alone: the label
    is preserved. A message with no formal phrasing to rewrite is skipped, not faked.
    """

    spec = TransformSpec(
        "informal_register",
        True,
        "rule",
        "user_text",
        1,
        "contractions, chat abbreviations, lower case, no final period",
    )

    def _one(self, text: str, rng: random.Random, ctx: TransformContext) -> tuple[str, int]:
        fired = 0
        for pattern, choices in _REGISTER:

            def swap(
                m: re.Match[str], choices: tuple[str, ...] = choices, source: str = text
            ) -> str:
                nonlocal fired
                if inside(m.start(), m.end(), protected_spans(source, ctx.id_patterns)):
                    return m.group()
                fired += 1
                return rng.choice(choices)

            text = re.sub(pattern, swap, text, flags=re.IGNORECASE)
        protected = protected_spans(text, ctx.id_patterns)

        def lower(m: re.Match[str]) -> str:
            if inside(m.start(), m.end(), protected) or (
                m.group().isupper() and len(m.group()) > 1
            ):
                return m.group()
            return m.group().lower()

        text = re.sub(r"(?:^|(?<=[.!?]\s))[A-Z][a-z']*", lower, text, flags=re.MULTILINE)
        text = re.sub(r"\bI\b", "i", text)
        text = re.sub(r"(?<![.\d])\.\s*$", "", text)
        return text, fired

    def make(
        self, seed: Case, indices: Sequence[int], ctx: TransformContext
    ) -> list[Situation | Skip]:
        """One informal copy of the user turns per index."""
        results: list[Situation | Skip] = []
        for n in indices:
            rng = rng_for(ctx.seed, self.spec.name, seed.id, n)
            rewritten = [self._one(t, rng, ctx) for t in user_texts(seed.situation)]
            if not any(fired for _, fired in rewritten):
                results.append(Skip("no formal phrasing to make informal"))
                continue
            results.append(with_user_turns(seed.situation, [t for t, _ in rewritten]))
        return results
