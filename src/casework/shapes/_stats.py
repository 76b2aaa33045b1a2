"""Share changes between two weeks: two-proportion z-tests with Holm's correction (pure)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def two_proportion_z(x1: int, n1: int, x2: int, n2: int) -> tuple[float, float]:
    """Pooled two-proportion z statistic of ``x1/n1`` against ``x2/n2`` and its two-sided p-value.

    ``z = (p1 - p2) / sqrt(p (1 - p) (1/n1 + 1/n2))`` with ``p = (x1 + x2) / (n1 + n2)``; when
    both shares are 0 or both 1 there is no difference to test (z = 0, p = 1).
    """
    if n1 <= 0 or n2 <= 0:
        raise ValueError("both samples need at least one observation")
    pooled = (x1 + x2) / (n1 + n2)
    var = pooled * (1 - pooled) * (1 / n1 + 1 / n2)
    if var <= 0:
        return 0.0, 1.0
    z = (x1 / n1 - x2 / n2) / math.sqrt(var)
    return z, math.erfc(abs(z) / math.sqrt(2))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the order given (step-down, monotone, at most 1)."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        out[i] = running
    return out
