"""A seeded sample of texts and what the scrubber detects in each, to compare two versions.

The sample mixes the planted-PII messages (clean ones included), the independent planted-format
messages, the Faker corpus (each locale read with its phone region) and Faker's clean messages
(read with the default regions and with every locale's). :func:`digest` hashes every detection
(span, kind, value) in order, so a change to the detectors that alters any result changes it.

Run ``python -m tests.privacy.detections_sample N OUT`` to write every text and its detections
to OUT (one JSON line each) for a line-by-line comparison of two versions (N = 1000: 66,130
texts). Faker draws some values from today's date (PESEL, expiry dates): compare dumps made on
the same day.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from collections.abc import Iterator

from casework.privacy import PseudonymKey, Scrubber, builtin_detectors, id_pattern_detectors
from tests.privacy.faker_corpus import LOCALES, clean_messages
from tests.privacy.faker_corpus import corpus as faker_corpus
from tests.privacy.planted_formats import GENERATORS, KINDS, RandomPick
from tests.privacy.planted_formats import message as format_message
from tests.privacy.planted_pii import ORDER_PATTERN
from tests.privacy.planted_pii import corpus as planted_corpus

KEY = PseudonymKey(b"detections-sample-key-not-secret-0123456", "test")
Row = tuple[str, str, list[tuple[int, int, str, str]]]


def _regions(region: str) -> tuple[str, ...]:
    return (region,) if region in ("US", "GB") else (region, "US", "GB")


def rows(planted: int, formats: int, faker: int, clean: int, seed: int = 2026) -> Iterator[Row]:
    """(corpus, text, detections) for ``planted`` planted-PII messages, ``formats`` planted-format
    messages per kind, ``faker`` Faker values per kind and locale and ``clean`` clean messages per
    locale (each read twice)."""
    default = Scrubber(KEY, [*id_pattern_detectors(ORDER_PATTERN), *builtin_detectors()])
    scrubbers: dict[tuple[str, ...], Scrubber] = {}

    def found(scrubber: Scrubber, text: str) -> list[tuple[int, int, str, str]]:
        return [(d.start, d.end, d.kind, d.value) for d in scrubber.conversation().detections(text)]

    for message in planted_corpus(planted, seed=seed):
        yield "planted", message.text, found(default, message.text)
    rng = random.Random(seed)
    for kind in KINDS:
        for _ in range(formats):
            pick = RandomPick(rng)
            text = format_message(pick, GENERATORS[kind](pick))
            yield "formats", text, found(default, text)
    for sample in faker_corpus(faker, seed=seed) if faker else ():
        regions = _regions(LOCALES[sample.locale])
        scrubber = scrubbers.setdefault(regions, Scrubber(KEY, phone_regions=regions))
        yield "faker", sample.text, found(scrubber, sample.text)
    every = Scrubber(KEY, phone_regions=tuple(LOCALES.values()))
    for text in clean_messages(clean, seed=seed):
        yield "clean", text, found(default, text)
        yield "clean-all", text, found(every, text)


def digest(planted: int, formats: int, faker: int, clean: int, seed: int = 2026) -> tuple[int, str]:
    """How many texts the sample holds, and the sha256 of every detection in them, in order."""
    h = hashlib.sha256()
    n = 0
    for corpus, text, detections in rows(planted, formats, faker, clean, seed):
        n += 1
        h.update(json.dumps([corpus, text, detections], ensure_ascii=False).encode())
    return n, h.hexdigest()


if __name__ == "__main__":
    scale = int(sys.argv[1])
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        for row in rows(planted=20 * scale, formats=6 * scale, faker=scale // 10, clean=scale // 2):
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
