"""Saturation: the Good–Turing estimate of the share of failing traffic in shapes not seen yet."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Saturation:
    """Good–Turing's unseen share of a clustering.

    Attributes:
        singletons: Conversations alike to no other (clusters of one), ``N1``.
        n: Failing conversations clustered.
        unseen_share: ``N1 / n``: the estimated chance that the next failing conversation
            belongs to a shape not seen yet.
        explanation: One line saying what the figure means for collecting more traces.
    """

    singletons: int
    n: int
    unseen_share: float
    explanation: str


def saturation(cluster_sizes: Sequence[int]) -> Saturation:
    """Good–Turing unseen share from the sizes of every cluster (singletons included).

    The share of probability mass on unseen species is estimated by the share of the sample
    seen exactly once (Good, 1953): ``N1 / n``.
    """
    n = int(sum(cluster_sizes))
    ones = sum(1 for s in cluster_sizes if s == 1)
    share = ones / n if n else 0.0
    percent = f"{100 * share:.1f}%"
    if not n:
        line = "no failing conversation: nothing to estimate."
    elif share >= 0.05:
        line = (
            f"{ones} of {n} failing conversations are alike to no other: about {percent} of "
            "future failing traffic falls in shapes not seen yet, so more traces would find more "
            "shapes."
        )
    else:
        line = (
            f"{ones} of {n} failing conversations are alike to no other: about {percent} of "
            "future failing traffic falls in shapes not seen yet; the shape list is close to "
            "saturated."
        )
    return Saturation(ones, n, share, line)
