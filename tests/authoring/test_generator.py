"""The example's planted-trace generator: seeded, readable by mining, week 2 moves two shapes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from casework.mining import failure_signals
from casework.mining.otel_genai import conversations_from_genai
from casework.mining.otlp import read_spans
from tests.authoring.conftest import generator


def test_same_seed_same_traces_other_seed_other_traces() -> None:
    gen = generator()
    assert gen.generate(5, 1, 50) == gen.generate(5, 1, 50)
    assert gen.generate(5, 1, 50)[0] != gen.generate(6, 1, 50)[0]


def test_failing_exactly_when_planted(tmp_path: Path) -> None:
    lines, truth = generator().generate(9, 1, 400)
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    conversations = conversations_from_genai(read_spans([path], {path: "t.jsonl"}))
    planted = {t["session"]: t["shape"] for t in truth}
    assert len(conversations) == 400
    for conv in conversations:
        assert bool(failure_signals(conv)) == (planted[conv.session_id] != "success")
    # The signals of one shape vary (the shape does not fix them).
    by_shape: dict[str, set[tuple[str, ...]]] = {}
    for conv in conversations:
        by_shape.setdefault(planted[conv.session_id], set()).add(tuple(failure_signals(conv)))
    assert len(by_shape["wrong_account_order"]) >= 2


def test_week_two_drops_one_shape_and_adds_one() -> None:
    gen = generator()
    one = Counter(t["shape"] for t in gen.generate(4, 1, 3000)[1])
    two = Counter(t["shape"] for t in gen.generate(4, 2, 3000)[1])
    planted = {k for k in one if k != "success" and not k.startswith("tail-")}
    assert len(planted) == 15
    assert "cancel_after_dispatch" in one and "cancel_after_dispatch" not in two
    assert "price_match_request" in two and "price_match_request" not in one
