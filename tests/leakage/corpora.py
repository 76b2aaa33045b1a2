"""Small seeded corpora of support-style messages with planted near-duplicates (for tests)."""

from __future__ import annotations

import random

INTENTS = [
    "where is my refund for order {o} i returned the {p} last week",
    "my {p} arrived damaged and the lid is cracked order {o}",
    "please cancel order {o} i bought the wrong {p} by mistake",
    "i was charged twice for order {o} please refund one payment",
    "the {p} from order {o} stopped working after two days",
]
OPENERS = ["", "hi", "hello there", "good morning team"]
CLOSERS = ["", "thanks", "thank you so much", "please help me asap", "regards sam"]
PRODUCTS = ["blue kettle", "red lamp", "steel pan", "wool jacket", "smart watch", "desk chair"]


def message(rng: random.Random) -> str:
    body = rng.choice(INTENTS).format(o=rng.randrange(10**6, 10**7), p=rng.choice(PRODUCTS))
    return " ".join(x for x in (rng.choice(OPENERS), body, rng.choice(CLOSERS)) if x)


def edit(text: str, rng: random.Random, edits: int) -> str:
    words = text.split(" ")
    for _ in range(edits):
        i = rng.randrange(len(words))
        if rng.random() < 0.5:
            words[i] = rng.choice(["really", "just", "now", "again"])
        else:
            words.insert(i, rng.choice(["really", "just", "now", "again"]))
    return " ".join(words)


def planted(n: int, seed: int = 0, share: float = 0.1) -> list[str]:
    """``n`` messages; about ``share`` of them are copies of earlier rows with 0-2 edits."""
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(n):
        if i > 2 and rng.random() < share:
            out.append(edit(out[rng.randrange(i)], rng, rng.randrange(3)))
        else:
            out.append(message(rng))
    return out
