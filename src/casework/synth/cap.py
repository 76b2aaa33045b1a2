"""The per-slice synthetic cap: how many variants a slice may still take, and which slices exceed it.

Entry points: :func:`synthetic_budget` (enforced at generation) and
:func:`synthetic_cap_violations` (read by `casework dataset check` and the gate).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Protocol

from casework.dataset.check import Finding

__all__ = ["CapViolation", "synthetic_budget", "synthetic_cap_violations"]


def _fraction(cap: float) -> Fraction:
    # str() first: 0.3 must mean 3/10, not the binary float just above it.
    return Fraction(str(cap))


@dataclass(frozen=True)
class CapViolation:
    """A slice whose share of synthetic cases is above the cap.

    Attributes:
        slice: The slice.
        synthetic: Synthetic cases in it.
        total: All cases in it.
        cap: The configured cap (share, 0–1).
    """

    slice: str
    synthetic: int
    total: int
    cap: float

    @property
    def share(self) -> float:
        """Synthetic share of the slice."""
        return self.synthetic / self.total if self.total else 0.0

    def __str__(self) -> str:
        return (
            f"slice '{self.slice}': {self.synthetic} of {self.total} cases are synthetic "
            f"({self.share:.0%}), above the cap of {self.cap:.0%} "
            "(thresholds.synthetic_cap); add real cases or remove variants"
        )

    def finding(self) -> Finding:
        """The violation as an error-level finding of `casework dataset check`."""
        return Finding("synthetic_cap", "error", None, self.slice, str(self).split(": ", 1)[1])


class SliceSource(Protocol):
    """What the cap reads of a case (a :class:`~casework.schema.Case`, or its compact facts)."""

    @property
    def slice(self) -> str:
        """The case's slice."""

    @property
    def source(self) -> str:
        """The case's source (`synthetic` counts against the cap)."""


def synthetic_cap_violations(cases: Iterable[SliceSource], cap: float) -> list[CapViolation]:
    """Slices whose synthetic share exceeds ``cap``, sorted by slice name.

    A slice exactly at the cap passes (3 synthetic of 10 with cap 0.3).
    """
    limit = _fraction(cap)
    total: Counter[str] = Counter()
    synthetic: Counter[str] = Counter()
    for case in cases:
        total[case.slice] += 1
        synthetic[case.slice] += case.source == "synthetic"
    return [
        CapViolation(name, synthetic[name], total[name], cap)
        for name in sorted(total)
        if Fraction(synthetic[name], total[name]) > limit
    ]


def synthetic_budget(synthetic: int, total: int, cap: float) -> int | None:
    """How many synthetic cases a slice may still take without exceeding ``cap``.

    The largest ``x ≥ 0`` with ``(synthetic + x) / (total + x) ≤ cap``, i.e.
    ``x ≤ (cap·total − synthetic) / (1 − cap)``; ``None`` when the cap is 1 (no limit).
    With 7 real cases and cap 0.3, 3 variants fit (3/10) and a 4th would not (4/11 ≈ 0.36):

    >>> synthetic_budget(0, 7, 0.3)
    3
    """
    limit = _fraction(cap)
    if limit >= 1:
        return None
    room = (limit * total - synthetic) / (1 - limit)
    return max(0, math.floor(room))
