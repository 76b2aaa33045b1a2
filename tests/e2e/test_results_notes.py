"""`results show` prints a fallback note once: a group's note that the overall note covers is left out."""

from __future__ import annotations

from casework.cli.results import _widest

ALL = "PPI++ needs people's verdicts on this run's replies and has none for a/x, b/x: Rogan–Gladen used"
ONE = "PPI++ needs people's verdicts on this run's replies and has none for a/x: Rogan–Gladen used"
OTHER = (
    "PPI++ needs people's verdicts on this run's replies and has none for c/x: Rogan–Gladen used"
)


def test_a_note_another_says_more_of_is_left_out() -> None:
    assert _widest(sorted([ALL, ONE])) == [ALL]


def test_notes_naming_other_strata_or_saying_other_things_stay() -> None:
    assert _widest(sorted([ALL, OTHER])) == sorted([ALL, OTHER])
    assert _widest(["no reviewed replies at all", ONE]) == ["no reviewed replies at all", ONE]
    assert _widest([]) == []
