"""Planted PII in any format is scrubbed on the path `casework mine` takes (property tests).

The generators (`tests/privacy/planted_formats.py`) know nothing of the detectors' patterns: they
write valid identifiers with arbitrary separators, grouping, case and surrounding punctuation.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from tests.privacy.planted_formats import (
    GENERATORS,
    KINDS,
    DrawPick,
    looks_like_a_figure,
    message,
    mining_scrubber,
    recall,
    scrub_as_mined,
    scrubbed,
)

SCRUBBER = mining_scrubber()


@pytest.mark.parametrize("kind", KINDS)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_every_planted_value_is_scrubbed(kind: str, data: st.DataObject) -> None:
    pick = DrawPick(data)
    planted = GENERATORS[kind](pick)
    assume(not looks_like_a_figure(planted))  # by design a date or amount ends a number
    text = message(pick, planted)
    draft = scrub_as_mined(SCRUBBER, text)
    assert scrubbed(SCRUBBER, planted, draft), (text, draft)


def test_recall_per_kind_on_a_seeded_corpus() -> None:
    for r in recall(500, seed=5):
        assert r.found - r.figures_found == r.planted - r.figures, r
        assert r.figures <= r.planted * 0.02, r


def test_issue_examples() -> None:
    for text, kind, value in [
        ("call 245-957-3870 today", "phone", "+12459573870"),
        ("or +1 (429) 623-5934", "phone", "+14296235934"),
        ("card 4111.1111.1111.1111", "card", "4111111111111111"),
        ("card 4111/1111/1111/1111", "card", "4111111111111111"),
        ("card 4111_1111_1111_1111", "card", "4111111111111111"),
        ("card 4111\u00a01111\u00a01111\u00a01111", "card", "4111111111111111"),
        ("card 4111 - 1111.1111/1111", "card", "4111111111111111"),
        ("iban gb82-west-1234-5698-7654-32.", "iban", "GB82WEST12345698765432"),
        ("iban GB 82 WEST 12345698765432", "iban", "GB82WEST12345698765432"),
        ("card no. 4074–8991 9795−9 ok", "card", "4074899197959"),  # not a Norwegian IBAN
    ]:
        draft = scrub_as_mined(SCRUBBER, text)
        assert SCRUBBER.pseudonym(kind, value) in draft, text


def test_the_generators_own_iban_layouts_match_the_registry() -> None:
    from casework.privacy.checksums import IBAN_LENGTHS
    from tests.privacy.planted_formats import IBAN_LAYOUTS

    assert {c: len(layout) + 4 for c, layout in IBAN_LAYOUTS.items()} == {
        c: IBAN_LENGTHS[c] for c in IBAN_LAYOUTS
    }


ORDINARY = st.sampled_from(
    [
        "49.99", "$1,234.56", "€12,50", "1.5 kg", "12 of 40", "3 boxes", "size 42", "15%",
        "0.5%", "2024-05-01", "01/05/2024", "5/1/24", "12.03.2024", "2024/05/01 10:30:00",
        "10:30", "10:30:15", "ORD-123456", "order #4471", "#12345", "CUS-90533", "2.3.1",
        "v10.0.19045", "10-20", "5–7 days", "2024-2025", "1920x1080", "(0.75 - 0.48) / 0.52",
        "12 x 3 = 36", "1747341706", "1747341706123", "1762770001000000000", "item 4471",
        "2 × 24.99", "refund of 120 dollars", "on 2024-01-15 10:30", "total 1,234,567.00",
        "tracking 1Z999AA10123456784", "ticket 88213", "Order 12 of 40 pieces", "3-5 business days",
        "1/2", "100/200/300", "pages 12-14", "room 101", "v2", "0.1.0", "2026-11-30T12:00:00Z",
    ]
)  # fmt: skip


# Figures are joined by words or punctuation, as in prose: figures separated by nothing but
# spaces that add up to 13-19 Luhn-valid digits read as a card written in groups, by design.
@example(parts=["1/2", "1747341706", "100/200/300"], joiner=". ")  # once read as a card
@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(ORDINARY, min_size=1, max_size=5),
    joiner=st.sampled_from([", ", "; ", " and ", " then ", ". ", ",\n"]),
)
def test_ordinary_figures_survive(parts: list[str], joiner: str) -> None:
    text = "I was charged " + joiner.join(parts) + "."
    found = [
        (d.kind, text[d.start : d.end])
        for d in SCRUBBER.conversation().detections(text)
        if d.kind in ("card", "iban", "phone")
    ]
    assert found == [], text
