"""Recall per kind on the Faker corpus (13 locales), and no detections on clean text.

The corpus (`tests/privacy/faker_corpus.py`) is written by Faker's locale providers, not from the
detectors' patterns. The test draws ``corpus(60, seed=7)``: 780 values per kind (60 in each of 13
locales), and 60 ids per locale split between `ssn` (307) and `nationalid` (473). Measured there
with Faker 40.63: phone 0.951 (742/780), name 0.990 (772/780), every other kind 1.000. The name
threshold leaves 0.02 (16 values) under that: at 100 values per locale and seed 2026 names measured
0.985, and another Faker release draws other names; see docs/privacy.md for what the misses are.
"""

from __future__ import annotations

from collections import Counter

import pytest

from casework.privacy import PseudonymKey, Scrubber
from tests.privacy.faker_corpus import LOCALES, Sample, clean_messages, corpus, found

KEY = PseudonymKey(b"faker-corpus-test-key-0123456789abcdef", "test")

#: Street addresses outside English are only found as known values (docs/privacy.md, Limits).
THRESHOLDS = {
    "phone": 0.94,
    "email": 1.0,
    "name": 0.97,
    "ssn": 0.99,
    "nationalid": 0.99,
    "postcode": 0.99,
    "expiry": 0.99,
}


def _scrubber(region: str) -> Scrubber:
    regions = (region,) if region in ("US", "GB") else (region, "US", "GB")
    return Scrubber(KEY, phone_regions=regions)


def _spans(scrubber: Scrubber, sample: Sample) -> list[tuple[int, int, str]]:
    return [(d.start, d.end, d.kind) for d in scrubber.conversation().detections(sample.text)]


def test_recall_per_kind_on_the_faker_corpus() -> None:
    scrubbers = {locale: _scrubber(region) for locale, region in LOCALES.items()}
    total: Counter[str] = Counter()
    hit: Counter[str] = Counter()
    for sample in corpus(60, seed=7):
        if sample.kind not in THRESHOLDS:
            continue
        total[sample.kind] += 1
        hit[sample.kind] += found(sample, _spans(scrubbers[sample.locale], sample))
    for kind, threshold in THRESHOLDS.items():
        assert total[kind] >= 200, kind
        assert hit[kind] / total[kind] >= threshold, (kind, hit[kind], total[kind])


def test_a_scrubbed_value_leaves_no_trace_in_the_text() -> None:
    scrubber = _scrubber("US")
    for sample in corpus(5, seed=8):
        if sample.locale != "en_US" or sample.kind not in THRESHOLDS:
            continue
        assert sample.value not in scrubber.text(sample.text), sample


@pytest.mark.parametrize("regions", [("US", "GB"), tuple(LOCALES.values())])
def test_clean_messages_have_no_detections(regions: tuple[str, ...]) -> None:
    scrubber = Scrubber(KEY, phone_regions=regions)
    texts = list(clean_messages(80, seed=9))
    hits = [
        (text, [(text[d.start : d.end], d.kind) for d in scrubber.conversation().detections(text)])
        for text in texts
    ]
    noisy = [h for h in hits if h[1]]
    # At most 1 message in 500: Faker's sentences hold no PII, only words and punctuation.
    assert len(noisy) <= len(texts) // 500, noisy
