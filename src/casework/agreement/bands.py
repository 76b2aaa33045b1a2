"""Bands that turn a kappa into a decision: may this slice gate a release?

Entry points: :class:`BandEdges` (from ``[thresholds]``), :func:`band_of`, :func:`classify`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Band", "BandEdges", "BandVerdict", "Status", "band_of", "classify"]

Band = Literal["ambiguous", "review", "dependable"]
"""`ambiguous` (below the gate edge: the guideline does not decide these rows, the slice may not
gate a release), `review` (between the edges), `dependable` (at or above the upper edge)."""

Status = Literal["ok", "undefined_single_category", "insufficient_rows", "insufficient_positives"]
"""Why a verdict has a band or not, stated instead of NaN: `ok`; `undefined_single_category`
(every rating in one class: p_o is reported, kappa and band are not); `insufficient_rows` (fewer
double-labelled rows than the minimum); `insufficient_positives` (a rare tool: too few rows where
anyone said yes)."""


@dataclass(frozen=True)
class BandEdges:
    """Edges between bands (``thresholds.kappa_gate`` and ``thresholds.kappa_dependable``).

    Attributes:
        gate: Below this a slice is ``ambiguous`` and may not gate a release (default 0.6).
        dependable: At or above this labels are ``dependable`` (default 0.8).
    """

    gate: float = 0.6
    dependable: float = 0.8

    def __post_init__(self) -> None:
        if not -1 <= self.gate <= self.dependable <= 1:
            raise ValueError(
                "edges: need -1 <= gate <= dependable <= 1. "
                f"Got gate={self.gate!r}, dependable={self.dependable!r}."
            )


def band_of(value: float, edges: BandEdges) -> Band:
    """The band of a kappa: ``[-1, gate)`` ambiguous, ``[gate, dependable)`` review, else dependable.

    Example:
        >>> band_of(0.52, BandEdges()), band_of(0.6, BandEdges()), band_of(0.84, BandEdges())
        ('ambiguous', 'review', 'dependable')
    """
    if value < edges.gate:
        return "ambiguous"
    if value < edges.dependable:
        return "review"
    return "dependable"


@dataclass(frozen=True)
class BandVerdict:
    """What a slice's agreement means for the gate.

    Attributes:
        status: ``ok`` or why there is no band.
        band: The band of the point estimate, or ``None`` when ``status`` is not ``ok``.
        provisional: True when a confidence interval reaches across a band edge, so more rows
            could move the slice to another band.
        gate_eligible: True when the slice may gate a release (status ``ok`` and band ``review``
            or ``dependable``).
        reason: One sentence saying why, for people.
    """

    status: Status
    band: Band | None
    provisional: bool
    gate_eligible: bool
    reason: str


def _crosses(low: float, high: float, edges: BandEdges) -> list[float]:
    return [e for e in sorted({edges.gate, edges.dependable}) if low < e < high]


def classify(
    value: float | None,
    intervals: Sequence[tuple[float | None, float | None]],
    edges: BandEdges,
    *,
    status: Status = "ok",
) -> BandVerdict:
    """Band, provisional mark and gate eligibility of one agreement coefficient.

    The band is read off the point estimate; the verdict is *provisional* when any of the
    ``intervals`` (the asymptotic and, when computed, the bootstrap CI) strictly contains a band
    edge. Only an ``ok`` status gets a band: a missing value never silently becomes a band.

    Args:
        value: The coefficient (kappa), or ``None`` when undefined.
        intervals: Confidence intervals ``(low, high)``; ``None`` ends are ignored.
        edges: The band edges.
        status: The coefficient's status; anything but ``ok`` means no band.

    Example:
        >>> v = classify(0.65, [(0.52, 0.78)], BandEdges())
        >>> v.band, v.provisional, v.gate_eligible
        ('review', True, True)
    """
    if status == "ok" and value is None:
        status = "undefined_single_category"
    if status != "ok" or value is None:
        reasons = {
            "undefined_single_category": "every rating fell in one class, so kappa is undefined",
            "insufficient_rows": "too few double-labelled rows to measure agreement",
            "insufficient_positives": "too few rows where any labeller said yes",
        }
        return BandVerdict(status, None, False, False, reasons[status] + "; it may not gate")
    band = band_of(value, edges)
    crossed = sorted(
        {
            e
            for low, high in intervals
            if low is not None and high is not None
            for e in _crosses(low, high, edges)
        }
    )
    eligible = band != "ambiguous"
    if band == "ambiguous":
        reason = f"kappa {value:.2f} is below {edges.gate:g}: the guideline leaves these rows open"
    elif band == "review":
        reason = f"kappa {value:.2f} is between {edges.gate:g} and {edges.dependable:g}"
    else:
        reason = f"kappa {value:.2f} is at or above {edges.dependable:g}"
    if crossed:
        reason += "; provisional: the CI crosses " + " and ".join(f"{e:g}" for e in crossed)
    return BandVerdict("ok", band, bool(crossed), eligible, reason)
