"""Paired bootstrap confidence interval of Cohen's kappa: rows are resampled with both ratings.

Entry point: :func:`bootstrap_kappa` (seeded, vectorised over resamples).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from casework.agreement.kappa import normal_quantile
from casework.agreement.table import category_order, confusion_matrix, encode

__all__ = ["BootstrapCI", "bootstrap_kappa"]

_CHUNK = 500  # resamples drawn per batch, to bound memory at n * 500 integers
#: Row indices drawn at once, at most (fewer resamples a batch for many rows): memory stays
#: bounded as rows grow (500 resamples of 1M rows took 2 GB). numpy draws the same indices
#: whatever the batches (tests/agreement/test_grouping.py).
_DRAWS = 1 << 22


@dataclass(frozen=True)
class BootstrapCI:
    """Percentile bootstrap interval of a statistic.

    Attributes:
        low: Lower percentile of the defined replicates, or ``None`` if none was defined.
        high: Upper percentile, or ``None``.
        confidence: Confidence level (the interval holds this share of replicates).
        n_resamples: Resamples drawn.
        n_undefined: Resamples where the statistic was undefined (all ratings in one category);
            they are left out of the percentiles, so a large count means the interval is optimistic.
        seed: Seed of the ``numpy.random.Generator`` that drew the resamples.
    """

    low: float | None
    high: float | None
    confidence: float
    n_resamples: int
    n_undefined: int
    seed: int


def bootstrap_kappa(
    rater_a: Sequence[Hashable],
    rater_b: Sequence[Hashable],
    *,
    n_resamples: int = 2000,
    seed: int = 0,
    confidence: float = 0.95,
) -> BootstrapCI:
    """Percentile interval of Cohen's kappa from a paired bootstrap over rows (Efron & Tibshirani 1993, ch. 13).

    Each resample draws ``n`` rows with replacement, keeping each row's two ratings together (the
    pairing is what kappa measures), and recomputes kappa from the resampled confusion matrix. The
    interval is the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the defined
    replicates (linear interpolation, numpy's default). Unlike the asymptotic interval it needs no
    normal approximation, which matters on small or skewed slices.

    Args:
        rater_a: First rater's category for each row.
        rater_b: Second rater's category for the same rows.
        n_resamples: Number of resamples (at least 1).
        seed: Seed of ``numpy.random.default_rng``; the same seed gives the same interval.
        confidence: Confidence level.

    Raises:
        ValueError: Bad ratings (as :func:`casework.agreement.cohen_kappa`), ``n_resamples`` < 1,
            or ``confidence`` not in (0, 1).

    Example:
        >>> a = ["escalate"] * 18 + ["clarify"] * 42
        >>> b = ["escalate"] * 33 + ["clarify"] * 27
        >>> ci = bootstrap_kappa(a, b, n_resamples=1000, seed=1)
        >>> ci.low < 0.519 < ci.high
        True
    """
    normal_quantile(confidence)  # validates confidence
    if n_resamples < 1:
        raise ValueError(f"n_resamples: must be at least 1. Got {n_resamples!r}.")
    confusion_matrix(rater_a, rater_b)  # validates the ratings
    n = len(rater_a)
    if n == 0:
        return BootstrapCI(None, None, confidence, n_resamples, n_resamples, seed)
    order = category_order(rater_a, rater_b)
    q = len(order)
    a = encode(rater_a, order)
    b = encode(rater_b, order)
    cell = a * q + b
    rng = np.random.default_rng(seed)
    # Below 2**32 numpy draws bounded integers from 32 bits whatever the dtype: int32 gives the
    # same indices as int64 at half the memory (tests/agreement/test_bootstrap_draws.py).
    draw = np.int32 if n < 2**31 else np.int64
    kappas: list[npt.NDArray[np.float64]] = []
    undefined = 0
    done = 0
    while done < n_resamples:
        size = min(_CHUNK, n_resamples - done, max(1, _DRAWS // n))
        idx = rng.integers(0, n, size=(size, n), dtype=draw)
        flat = np.empty((size, q * q), dtype=np.int64)
        for r in range(size):  # one resample at a time stays in cache: 3x one bincount of all
            flat[r] = np.bincount(cell[idx[r]], minlength=q * q)
        tables = flat.reshape(size, q, q).astype(np.float64) / n
        p_o = np.trace(tables, axis1=1, axis2=2)
        p_e = (tables.sum(axis=2) * tables.sum(axis=1)).sum(axis=1)
        defined = p_e < 1 - 1e-12
        undefined += int((~defined).sum())
        kappas.append((p_o[defined] - p_e[defined]) / (1 - p_e[defined]))
        done += size
    values = np.concatenate(kappas)
    if values.size == 0:
        return BootstrapCI(None, None, confidence, n_resamples, undefined, seed)
    tail = (1 - confidence) / 2
    low, high = np.quantile(values, [tail, 1 - tail])
    return BootstrapCI(float(low), float(high), confidence, n_resamples, undefined, seed)
