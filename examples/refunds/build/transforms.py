"""Synthetic variants of seed cases, as `casework synth` records them.

Label-preserving: `paraphrase` (the seed's facts rewritten in new words), `typos`,
`informal_register`, `noise_detail`. Information-changing: `drop_identifier` (the order number is
removed, so the variant goes back to labelling and carries no label).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

from core import lower_outside_kept

from casework.schema import Generator, Turn

PRESERVING = ("paraphrase", "typos", "informal_register", "noise_detail")
CHANGING = ("drop_identifier",)

#: Who wrote each transform's variants: rule-based ones are deterministic code, the rest an LLM.
GENERATORS = {
    "paraphrase": Generator(
        model="llama-3.1-70b-instruct", prompt_version="paraphrase-v3", family="llama"
    ),
    "noise_detail": Generator(
        model="llama-3.1-70b-instruct", prompt_version="noise-detail-v2", family="llama"
    ),
    "drop_identifier": Generator(
        model="llama-3.1-70b-instruct", prompt_version="drop-identifier-v1", family="llama"
    ),
    "typos": Generator(model="rules", prompt_version="typos-1"),
    "informal_register": Generator(model="rules", prompt_version="register-1"),
}

# Words a typo may hit: letters only, not part of an id, pseudonym, email or address.
_WORD = re.compile(r"(?<![\w.@'-])[A-Za-z]{5,}(?![\w.@'-])")
_ID = re.compile(r"\b(?:ORD-\d{6}|order_[0-9a-f]{12})\b")


def _typo(word: str, rng: random.Random) -> str:
    i = rng.randrange(1, len(word) - 2)
    kind = rng.randrange(3)
    if kind == 0:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    if kind == 1:
        return word[:i] + word[i + 1 :]
    return word[:i] + word[i] + word[i:]


def typos(text: str, rng: random.Random) -> str:
    """Swap, drop or double a letter in one word of eight, at least two (never inside ids)."""
    spots = list(_WORD.finditer(text))
    hit = {m.start() for m in rng.sample(spots, min(len(spots), max(2, len(spots) // 8)))}
    return _WORD.sub(lambda m: _typo(m.group(), rng) if m.start() in hit else m.group(), text)


_INFORMAL = [
    (r"\bI would\b", "i'd"),
    (r"\bI am\b", "im"),
    (r"\bI'm\b", "im"),
    (r"\bplease\b", "pls"),
    (r"\byou\b", "u"),
    (r"\bthanks\b", "thx"),
    (r"\bThanks\b", "thx"),
    (r"\bdon't\b", "dont"),
    (r"\bcan't\b", "cant"),
    (r"\bbecause\b", "cos"),
    (r"\bThank you\b", "ty"),
]


def _tokens(text: str) -> list[str]:
    return re.sub(r"[\W_]+", " ", text.lower()).split()


def informal_register(text: str, rng: random.Random) -> str:
    """Text-message register: lower case, clipped words, no full stops."""
    out = text
    for pattern, repl in _INFORMAL:
        out = re.sub(pattern, repl, out, flags=re.IGNORECASE)
    out = re.sub(
        r"^(hi|hello|hey|good morning|good afternoon|morning|hiya)[,!]?\s*(there\s*[—,]?\s*)?",
        "",
        out,
        flags=re.I,
    )
    out = out.replace(". ", " ").rstrip(".")
    if _tokens(out) == _tokens(text):
        out = rng.choice(["hey so ", "ok so ", "hiya "]) + out
    return lower_outside_kept(out)


_NOISE = [
    "Sorry if this is the wrong place to ask, I'm typing on my phone on the bus.",
    "We've had builders in all week so the house is chaos.",
    "I've been a customer for years and this is the first time anything like this has happened.",
    "My daughter set up the account for me so bear with me.",
    "I tried calling first but the line was busy.",
    "Also your website was really slow this morning, not sure if you know.",
]


def noise_detail(text: str, rng: random.Random) -> str:
    """An irrelevant sentence before or after the request."""
    noise = rng.choice(_NOISE)
    return f"{noise} {text}" if rng.random() < 0.5 else f"{text} {noise}"


def drop_identifier(text: str, rng: random.Random) -> str:
    """The message without its order number."""
    out = re.sub(r"\s*\((?:order\s+)?" + _ID.pattern + r"\)", "", text)
    out = re.sub(
        r"\b(?:[Oo]rder(?: number is)?\s+)" + _ID.pattern + r"\s*[:—-]?\s*", "my order ", out
    )
    return _ID.sub("my order", out)


def has_identifier(text: str) -> bool:
    """Whether the text names an order (the only identifier `drop_identifier` removes)."""
    return _ID.search(text) is not None


TEXT_TRANSFORMS: dict[str, Callable[[str, random.Random], str]] = {
    "typos": typos,
    "informal_register": informal_register,
    "noise_detail": noise_detail,
    "drop_identifier": drop_identifier,
}


def transform_turns(turns: list[Turn], name: str, rng: random.Random) -> list[Turn]:
    """Apply a text transform to the user turns only (system lines and tool calls stay as they are)."""
    fn = TEXT_TRANSFORMS[name]
    return [
        t.model_copy(update={"content": fn(t.content, rng)}) if t.role == "user" else t
        for t in turns
    ]
