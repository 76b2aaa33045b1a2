"""The unsatisfiable quota: the share of cases per slice whose honest answer is not a completion.

A slice marked mature (`[thresholds] mature_slices`) must keep its unsatisfiable share inside
`[thresholds] unsatisfiable_band` (default 20–25%, inclusive); `casework dataset check` reports every
slice's share and fails a mature slice outside the band. Slices not marked mature are reported
and never fail: a young slice has too few cases for a share to mean much.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

from casework.dataset.check import Finding
from casework.runner.metrics import in_population


class SliceSatisfiable(Protocol):
    """What the quota reads of a case (a :class:`~casework.schema.Case`, or its compact facts)."""

    @property
    def slice(self) -> str:
        """The case's slice."""

    @property
    def satisfiable(self) -> bool:
        """False when the honest answer is a refusal, a question or an escalation."""

    @property
    def split(self) -> str:
        """The case's split (retired cases, split `smoke`, are not counted)."""


@dataclass(frozen=True)
class UnsatisfiableShare:
    """One slice's unsatisfiable share, against the band when the slice is mature.

    Attributes:
        slice: The slice.
        unsatisfiable: Unsatisfiable cases in it.
        total: All cases in it.
        mature: Whether the slice is marked mature (the band applies).
        band: The configured band (low, high), shares 0–1, inclusive.
        retired: Retired cases of the slice (split `smoke`), left out of the share.
    """

    slice: str
    unsatisfiable: int
    total: int
    mature: bool
    band: tuple[float, float]
    retired: int = 0

    @property
    def share(self) -> float:
        """Unsatisfiable share of the slice."""
        return self.unsatisfiable / self.total if self.total else 0.0

    @property
    def in_band(self) -> bool:
        """Whether the share lies inside the band (exact fractions: 1 of 4 is 25%)."""
        share = Fraction(self.unsatisfiable, self.total) if self.total else Fraction(0)
        low, high = (Fraction(str(b)) for b in self.band)
        return low <= share <= high

    @property
    def fails(self) -> bool:
        """A mature slice outside the band."""
        return self.mature and not self.in_band

    def __str__(self) -> str:
        low, high = self.band
        apart = f", {self.retired} retired not counted" if self.retired else ""
        head = (
            f"slice '{self.slice}': {self.unsatisfiable} of {self.total} cases are "
            f"unsatisfiable ({self.share:.0%}{apart})"
        )
        if not self.mature:
            return f"{head}; not marked mature (thresholds.mature_slices), so no band applies"
        if self.in_band:
            return f"{head}, inside the band {low:.0%}–{high:.0%}"
        fix = (
            "add refusal, question or escalation cases"
            if self.share < low
            else "add satisfiable cases"
        )
        return (
            f"{head}, outside the band {low:.0%}–{high:.0%} "
            f"(thresholds.unsatisfiable_band) of a mature slice; {fix}"
        )

    def finding(self) -> Finding:
        """The share as an error-level finding of `casework dataset check`."""
        return Finding(
            "unsatisfiable_quota", "error", None, self.slice, str(self).split(": ", 1)[1]
        )


def unsatisfiable_shares(
    cases: Iterable[SliceSatisfiable], band: tuple[float, float], mature: Sequence[str]
) -> list[UnsatisfiableShare]:
    """Every slice's unsatisfiable share (sorted by slice), each against ``band`` when mature.

    The share is over the population the gate counts (:func:`casework.runner.in_population`):
    retired cases are counted apart. A mature slice without any case is listed with 0 of 0 (and
    fails: it has no share to keep).
    """
    total: Counter[str] = Counter()
    unsat: Counter[str] = Counter()
    retired: Counter[str] = Counter()
    for case in cases:
        if not in_population(case.split):
            retired[case.slice] += 1
            continue
        total[case.slice] += 1
        unsat[case.slice] += not case.satisfiable
    names = sorted(set(total) | set(mature) | set(retired))
    marked = set(mature)
    return [UnsatisfiableShare(n, unsat[n], total[n], n in marked, band, retired[n]) for n in names]
