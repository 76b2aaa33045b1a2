"""The flip rate of repeated judge verdicts and what it does to admissibility (pure)."""

from __future__ import annotations

from casework.grading import PROMPT_VERSION
from casework.grading.certify import FlipRate, Pin, Settings, certify_counts, flip_rate

PIN = Pin("refunds", "answer_fact", "judge-1", PROMPT_VERSION, "r-1")


def test_an_item_flips_when_its_verdicts_differ_or_one_is_missing() -> None:
    rows: list[list[bool | None]] = [
        [True, True, True],
        [True, False, True],
        [False, False, False],
        [True, None, True],
    ]
    assert flip_rate(rows, 3) == FlipRate(items=4, flipped=2, samples=3)
    assert flip_rate([[True, True]], 3).flipped == 1  # a sample short: not repeatable
    assert flip_rate([], 3).rate == 1.0  # nothing measured fails closed


def test_a_judge_flipping_more_than_the_maximum_is_not_admissible() -> None:
    st = Settings(max_flip=0.1)
    steady = certify_counts(PIN, 40, 2, 40, 2, st, current=True, flip=FlipRate(20, 2, 3))
    assert steady.admissible and not steady.flips_too_often  # 0.10 is not above 0.10
    flaky = certify_counts(PIN, 40, 2, 40, 2, st, current=True, flip=FlipRate(20, 3, 3))
    assert flaky.flips_too_often and not flaky.admissible
    assert flaky.as_json()["flip"] == {"items": 20, "flipped": 3, "samples": 3, "rate": 0.15}
    unmeasured = certify_counts(PIN, 40, 2, 40, 2, st, current=True)
    assert unmeasured.admissible and unmeasured.as_json()["flip"] is None
