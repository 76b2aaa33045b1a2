"""Seeded generator of support-style messages with planted near-duplicates (leakage benchmark).

``generate(n, seed)`` returns ``n`` customer messages: templated intents with slot values (orders,
products, amounts, dates, names), optional openers, context sentences and closers, so that
unrelated rows of one intent share many shingles (Jaccard mostly 0.1-0.6) the way real support
text does. About 3% of the rows are planted copies of an earlier row with 0-3 small edits (a word
replaced, dropped or inserted, an order number changed), which puts many pairs just above and just
below Jaccard 0.8: the region where LSH recall is decided.

Scale-free: every block of :data:`TENANT_ROWS` rows is one "tenant" (a product line, a market)
with its own words: after the first block, the letters of every word a tenant writes carry the
tenant's tag (``refund`` -> ``refundqb``), so two tenants' messages share no shingle unless one
copies the other (planted copies may come from any earlier row, tenant or not). Without it, every
row of a 10M corpus is drawn from the same few dozen templates and 750 products, each template's
near-twins grow with the row count, and candidate pairs grow as rows squared (10.65 million at 1M
rows, about 1.07 billion at 10M): a real 10M eval set spans many products and is not one
product's messages ten times over. The first block is unchanged, so corpora up to 1M rows are the
same as before.

Run ``python benchmarks/leakage_data.py N OUT.txt`` to write one message per line (streamed).
"""

from __future__ import annotations

import random
import re
import sys
from array import array
from pathlib import Path

OPENERS = [
    "",
    "",
    "",
    "hi",
    "hello",
    "hey there",
    "good morning",
    "good afternoon team",
    "hi support",
    "hello, hope you are well.",
    "dear customer service,",
    "hiya",
]

CLOSERS = [
    "",
    "",
    "",
    "thanks",
    "thank you",
    "thanks in advance!",
    "please help asap",
    "cheers, {name}",
    "regards, {name}",
    "appreciate it.",
    "let me know what you need from me.",
    "this is really frustrating.",
    "kind regards {name} from {city}",
]

CONTEXT = [
    "",
    "",
    "i have been a customer for {days} years.",
    "i already tried the app but it keeps crashing.",
    "your chat bot could not help me.",
    "it was a gift for my {relative}.",
    "i called yesterday and nobody picked up.",
    "the tracking page has not changed for {days} days.",
    "my card was charged {amount} already.",
    "i live in {city} if that matters.",
    "i need this sorted before {date}.",
    "the box was left outside in the rain.",
    "my {relative} ordered it on my account.",
    "i paid with paypal.",
    "i used the discount code {code}.",
    "the email confirmation says {date}.",
    "i can send photos if you need them.",
    "this is the second time this has happened.",
]

INTENTS = [
    [
        "where is my refund for order {order}? i returned the {product} on {date}.",
        "i still have not received the refund of {amount} for my {product}, order {order}.",
        "can you check the status of my refund? order number is {order}.",
    ],
    [
        "my {product} arrived damaged, the {part} is broken. order {order}.",
        "the {product} from order {order} came with a cracked {part}, i want a replacement.",
        "order {order} arrived today and the {product} is damaged.",
    ],
    [
        "please cancel order {order}, i ordered the wrong {product}.",
        "i want to cancel my order {order} before it ships.",
        "can i still cancel the {product} i bought on {date}? order {order}",
    ],
    [
        "i need to change the delivery address for order {order} to {street} in {city}.",
        "wrong address on order {order}, please ship it to {street}, {city} instead.",
    ],
    [
        "my order {order} was supposed to arrive on {date} and it is still not here.",
        "the {product} is {days} days late. order {order}. where is it?",
        "delivery for {order} keeps getting pushed back, now it says {date}.",
    ],
    [
        "i received a {product2} instead of the {product} i ordered, order {order}.",
        "wrong item in my parcel for order {order}: got {product2}, expected {product}.",
    ],
    [
        "i was charged twice for order {order}, two payments of {amount}.",
        "double charge on my card for {amount}, order {order}, please refund one.",
    ],
    [
        "how do i get a return label for the {product}? order {order}.",
        "i want to return my {product}, it does not fit. order {order}, bought {date}.",
    ],
    [
        "the promo code {code} does not work at checkout for the {product}.",
        "i forgot to apply code {code} to order {order}, can you take off {amount}?",
    ],
    [
        "my account is locked after i reset my password, email is {name}@example.com.",
        "i cannot log in, it says my account {name}{days} is suspended.",
    ],
    [
        "please cancel my subscription, i was charged {amount} on {date}.",
        "how do i pause my monthly {product} subscription until {date}?",
    ],
    [
        "my {product} stopped working after {days} months, is it under warranty? order {order}",
        "the {part} of my {product} broke, i bought it on {date}. warranty claim please.",
    ],
]

ADJ = [
    "blue",
    "red",
    "black",
    "white",
    "wireless",
    "smart",
    "mini",
    "pro",
    "ultra",
    "classic",
    "compact",
    "deluxe",
    "portable",
    "steel",
    "wooden",
    "cotton",
    "leather",
    "silver",
    "green",
    "foldable",
    "electric",
    "ceramic",
    "outdoor",
    "kids",
    "travel",
]
NOUN = [
    "headphones",
    "kettle",
    "blender",
    "jacket",
    "backpack",
    "lamp",
    "speaker",
    "watch",
    "phone case",
    "sofa cover",
    "desk chair",
    "monitor",
    "keyboard",
    "mouse",
    "toaster",
    "vacuum",
    "drill",
    "tent",
    "water bottle",
    "yoga mat",
    "camera",
    "router",
    "printer",
    "charger",
    "scooter",
    "mattress",
    "pan set",
    "coffee maker",
    "air fryer",
    "heater",
]
PARTS = ["lid", "handle", "screen", "strap", "zip", "cable", "base", "button", "hinge", "wheel"]
NAMES = [
    "anna",
    "ben",
    "carla",
    "dev",
    "emma",
    "farid",
    "grace",
    "hugo",
    "ines",
    "jon",
    "kai",
    "lena",
    "marco",
    "nadia",
    "omar",
    "priya",
    "quinn",
    "rosa",
    "sam",
    "tariq",
    "uma",
    "viktor",
    "wen",
    "xavier",
    "yara",
    "zoe",
    "liam",
    "olivia",
    "noah",
    "mia",
    "lucas",
    "sofia",
    "mateo",
    "aria",
]
CITIES = [
    "london",
    "leeds",
    "bristol",
    "manchester",
    "glasgow",
    "cardiff",
    "dublin",
    "york",
    "bath",
    "oxford",
    "cambridge",
    "brighton",
    "norwich",
    "exeter",
    "belfast",
    "aberdeen",
    "derby",
    "hull",
]
STREETS = ["high street", "station road", "church lane", "park avenue", "mill road", "king street"]
RELATIVES = ["mum", "dad", "sister", "brother", "wife", "husband", "son", "daughter", "friend"]
MONTHS = ["jan", "feb", "march", "april", "may", "june", "july", "aug", "sept", "oct", "nov", "dec"]
#: Rows per tenant (each block of this many rows writes with its own vocabulary).
TENANT_ROWS = 1_000_000
_LETTERS = re.compile(r"[a-z]+")
FILLER = ["really", "just", "also", "please", "still", "actually", "again", "now", "urgently"]


def _fill(template: str, rng: random.Random) -> str:
    product = f"{ADJ[rng.randrange(len(ADJ))]} {NOUN[rng.randrange(len(NOUN))]}"
    product2 = f"{ADJ[rng.randrange(len(ADJ))]} {NOUN[rng.randrange(len(NOUN))]}"
    values = {
        "order": f"{rng.randrange(1_000_000, 9_999_999)}",
        "product": product,
        "product2": product2,
        "part": PARTS[rng.randrange(len(PARTS))],
        "date": f"{rng.randrange(1, 29)} {MONTHS[rng.randrange(12)]}",
        "amount": f"£{rng.randrange(5, 400)}.{rng.randrange(0, 100):02d}",
        "name": NAMES[rng.randrange(len(NAMES))],
        "city": CITIES[rng.randrange(len(CITIES))],
        "street": f"{rng.randrange(1, 200)} {STREETS[rng.randrange(len(STREETS))]}",
        "days": f"{rng.randrange(2, 15)}",
        "relative": RELATIVES[rng.randrange(len(RELATIVES))],
        "code": f"SAVE{rng.randrange(5, 50)}",
    }
    return template.format(**values)


def _message(rng: random.Random) -> str:
    intent = INTENTS[rng.randrange(len(INTENTS))]
    parts = [
        OPENERS[rng.randrange(len(OPENERS))],
        CONTEXT[rng.randrange(len(CONTEXT))] if rng.random() < 0.4 else "",
        intent[rng.randrange(len(intent))],
        CONTEXT[rng.randrange(len(CONTEXT))],
        CLOSERS[rng.randrange(len(CLOSERS))],
    ]
    return _fill(" ".join(p for p in parts if p), rng)


def _tag(tenant: int) -> str:
    """Letters appended to every word of ``tenant`` (none for the first): ``q`` + base-26 digits."""
    if not tenant:
        return ""
    digits = ""
    while tenant:
        tenant, d = divmod(tenant, 26)
        digits = chr(ord("a") + d) + digits
    return "q" + digits


def _for_tenant(text: str, i: int) -> str:
    """``text`` in the vocabulary of row ``i``'s tenant (unchanged in the first block)."""
    tag = _tag(i // TENANT_ROWS)
    return _LETTERS.sub(lambda m: m.group(0) + tag, text) if tag else text


def _edit(text: str, rng: random.Random) -> str:
    words = text.split(" ")
    for _ in range(int(rng.randrange(0, 4))):
        op = rng.randrange(4)
        i = int(rng.randrange(len(words)))
        if op == 0:
            words[i] = FILLER[rng.randrange(len(FILLER))]
        elif op == 1 and len(words) > 4:
            del words[i]
        elif op == 2:
            words.insert(i, FILLER[rng.randrange(len(FILLER))])
        else:
            digits = [j for j, w in enumerate(words) if any(c.isdigit() for c in w)]
            if digits:
                words[digits[rng.randrange(len(digits))]] = f"{rng.randrange(1_000_000, 9_999_999)}"
    return " ".join(words)


def generate(n: int, seed: int = 0, planted: float = 0.03) -> list[str]:
    """``n`` support-style messages; a ``planted`` share are edited copies of earlier rows."""
    rng = random.Random(seed)
    out: list[str] = []
    for i in range(n):
        if i > 10 and rng.random() < planted:
            out.append(_edit(out[int(rng.randrange(i))], rng))
        else:
            out.append(_for_tenant(_message(rng), i))
    return out


def write_corpus(n: int, path: Path, seed: int = 0, planted: float = 0.03) -> None:
    """Write ``generate(n, seed, planted)`` to ``path``, one message a line, in bounded memory.

    The same rows as :func:`generate`, streamed: a planted copy reads its source row back from the
    file being written (by its byte offset) instead of keeping every row in a list, so 10M rows
    need about 80 MB (the offsets), not the 2 GB of Python strings. Written to a temporary file
    and renamed, so an interrupted run leaves no half corpus behind.
    """
    rng = random.Random(seed)
    offsets = array("q")
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w+b") as out:
        for i in range(n):
            if i > 10 and rng.random() < planted:
                j = int(rng.randrange(i))
                end = out.tell()
                out.seek(offsets[j])
                source = out.readline().decode("utf-8").rstrip("\n")
                out.seek(end)
                text = _edit(source, rng)
            else:
                text = _for_tenant(_message(rng), i)
            offsets.append(out.tell())
            out.write(text.encode("utf-8") + b"\n")
    tmp.replace(path)


if __name__ == "__main__":
    write_corpus(int(sys.argv[1]), Path(sys.argv[2]))
