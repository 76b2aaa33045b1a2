"""Small seeded corpora of support-style messages with planted near-duplicates (for tests)."""

from __future__ import annotations

import json
import random
from pathlib import Path

INTENTS = [
    "where is my refund for order {o} i returned the {p} last week",
    "my {p} arrived damaged and the lid is cracked order {o}",
    "please cancel order {o} i bought the wrong {p} by mistake",
    "i was charged twice for order {o} please refund one payment",
    "the {p} from order {o} stopped working after two days",
]
OPENERS = ["", "hi", "hello there", "good morning team", "hey", "dear support"]
CLOSERS = ["", "thanks", "thank you so much", "please help me asap", "regards sam", "cheers"]
CONTEXT = [
    "",
    "",
    "i have been a customer for {y} years",
    "your chat bot could not help me",
    "it was a gift for my {r}",
    "i called yesterday and nobody picked up",
    "the tracking page has not changed for {y} days",
    "i paid with my {r}s card",
]
ADJECTIVES = ["blue", "red", "steel", "wool", "smart", "mini", "wooden", "travel"]
NOUNS = ["kettle", "lamp", "pan", "jacket", "watch", "chair", "speaker", "backpack"]
RELATIVES = ["mum", "dad", "sister", "brother", "friend"]
PRODUCTS = [f"{a} {n}" for a in ADJECTIVES for n in NOUNS]


def message(rng: random.Random) -> str:
    body = rng.choice(INTENTS).format(o=rng.randrange(10**6, 10**7), p=rng.choice(PRODUCTS))
    context = rng.choice(CONTEXT).format(y=rng.randrange(2, 15), r=rng.choice(RELATIVES))
    parts = (rng.choice(OPENERS), body, context, rng.choice(CLOSERS))
    return " ".join(x for x in parts if x)


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


def case_row(case_id: str, split: str, text: str, **extra: object) -> dict[str, object]:
    """A minimal valid case as a JSON object whose only user turn is ``text``."""
    return {
        "id": case_id,
        "slice": "support",
        "split": split,
        "source": "mined",
        "situation": {"goal": "get help", "turns": [{"role": "user", "content": text}]},
        **extra,
    }


PROMPT = """You are the support agent of a small shop. Be brief and kind.

When a customer asks where is my refund for order, look the order up first.
If the item arrived damaged, ask for a photo. Never promise a date.

Example 1
User: {copied}
Assistant: I am sorry about that, let me check the order.
"""


def project_rows(seed: int = 0) -> list[dict[str, object]]:
    """40 background rows over three splits plus the plants the tests look for.

    Plants: ``h-near`` ~ ``d-near`` (one word changed), ``h-copy`` == ``d-copy``, ``s-near`` ~
    ``h-base`` (smoke against holdout), ``h-short`` == ``d-short`` (a short template-like intent),
    and ``h-prompt``, whose text is the few-shot example in ``PROMPT``.
    """
    rng = random.Random(seed)
    rows = []
    for i in range(40):
        split = ("dev", "dev", "holdout", "smoke")[i % 4]
        rows.append(case_row(f"bg-{i:02d}", split, message(rng)))
    near = (
        "hello there where is my refund for order 4411223 i returned the red lamp last week thanks"
    )
    rows += [
        case_row("d-near", "dev", near),
        case_row("h-near", "holdout", near.replace("thanks", "thank you")),
        case_row(
            "d-copy", "dev", "my smart watch arrived damaged and the lid is cracked order 5550001"
        ),
        case_row(
            "h-copy",
            "holdout",
            "My smart watch arrived damaged, and the lid is cracked! Order 5550001.",
        ),
        case_row(
            "h-base",
            "holdout",
            "please cancel order 7000123 i bought the wrong desk chair by mistake regards sam",
        ),
        case_row(
            "s-near",
            "smoke",
            "please cancel order 7000123 i bought the wrong desk chair by mistake regards sam!!",
        ),
        case_row("d-short", "dev", "cancel my order please"),
        case_row("h-short", "holdout", "Cancel my order, please."),
        case_row(
            "h-prompt",
            "holdout",
            "hi the steel pan from order 3141592 stopped working after two days please help me asap",
        ),
    ]
    return rows


def write_project(root: Path, rows: list[dict[str, object]], prompt: str | None = None) -> None:
    """A project folder with dataset ``support`` and, if given, the prompt file agent/prompt.md."""
    (root / "agent").mkdir(parents=True, exist_ok=True)
    (root / "datasets" / "support").mkdir(parents=True, exist_ok=True)
    (root / "casework.toml").write_text(
        'name = "leak"\n\n[agent]\nprompt_files = ["agent/prompt.md"]\n', encoding="utf-8"
    )
    if prompt is not None:
        (root / "agent" / "prompt.md").write_text(prompt, encoding="utf-8")
    (root / "datasets" / "support" / "cases.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8"
    )
