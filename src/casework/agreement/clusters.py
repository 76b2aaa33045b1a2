"""Disagreement clusters: case features over-represented among the rows labellers disagree on.

Entry points: :func:`flatten` (JSON leaves as ``path, value``), :func:`featurize` (rows of leaves
to ``key=value`` / ``key>t`` features), :func:`over_represented` (features ranked by a one-sided
Fisher test, with counts and lift).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

__all__ = ["FeatureCluster", "Scalar", "featurize", "flatten", "over_represented"]

Scalar = str | int | float | bool | None
"""A JSON leaf value."""


def _id_like(key: str) -> bool:
    return any(ch.isdigit() for ch in key)


def flatten(value: Any, prefix: str = "") -> list[tuple[str, Scalar]]:
    """The leaves of a JSON value as ``(dotted path, value)`` pairs, with record ids collapsed.

    List positions never enter the path, and neither does an object key holding a digit whose value
    is itself an object or list (``orders.ord_17.age_days`` becomes ``orders.age_days``): such keys
    are record ids, and a feature naming one id would describe a single row.

    Example:
        >>> flatten({"orders": {"ord_1": {"age_days": 45, "partial": True}}, "tags": ["vip"]})
        [('orders.age_days', 45), ('orders.partial', True), ('tags', 'vip')]
    """
    out: list[tuple[str, Scalar]] = []
    if isinstance(value, Mapping):
        for key in sorted(value, key=str):
            child = value[key]
            nested = isinstance(child, Mapping | list | tuple)
            path = prefix if nested and _id_like(str(key)) else _join(prefix, str(key))
            out.extend(flatten(child, path))
    elif isinstance(value, list | tuple):
        for child in value:
            out.extend(flatten(child, prefix))
    elif value is None or isinstance(value, str | int | float | bool):
        out.append((prefix or "value", value))
    else:
        out.append((prefix or "value", str(value)))
    return out


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _is_number(value: Scalar) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(float(value))
    )


def _nice(value: float) -> float:
    return float(f"{value:.2g}")


def _text(value: Scalar) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def featurize(
    rows: Sequence[Mapping[str, Sequence[Scalar]]],
    *,
    max_text: int = 40,
    quantiles: Sequence[float] = (0.25, 0.5, 0.75),
) -> list[frozenset[str]]:
    """Turn each row's leaf values into a set of readable features.

    Strings, booleans and nulls become ``key=value`` (strings longer than ``max_text`` are free
    text and are skipped). Numbers are binned at thresholds shared by all rows: the ``quantiles``
    of the key's values over all rows, rounded to two significant figures; each threshold ``t``
    that splits the values gives ``key>t`` or ``key<=t``. A row holding several values for a key
    (several orders) has every feature any of them has.

    Args:
        rows: For each row, its values per key (e.g. from :func:`flatten`).
        max_text: Longest string kept as a ``key=value`` feature.
        quantiles: Quantiles used as numeric thresholds.

    Example:
        >>> feats = featurize([{"age": [10]}, {"age": [20]}, {"age": [40]}, {"age": [50]}])
        >>> sorted(feats[3])
        ['age>18', 'age>30', 'age>42']
    """
    numbers: dict[str, list[float]] = {}
    for row in rows:
        for key, values in row.items():
            numbers.setdefault(key, []).extend(float(v) for v in values if _is_number(v))  # type: ignore[arg-type]
    thresholds: dict[str, list[float]] = {}
    for key, values in numbers.items():
        if not values:
            continue
        lo, hi = min(values), max(values)
        cuts = sorted({_nice(float(q)) for q in np.quantile(values, list(quantiles))})
        thresholds[key] = [t for t in cuts if lo <= t < hi]
    out = []
    for row in rows:
        features: set[str] = set()
        for key, values in row.items():
            for value in values:
                if _is_number(value):
                    for t in thresholds.get(key, []):
                        op = ">" if float(value) > t else "<="  # type: ignore[arg-type]
                        features.add(f"{key}{op}{t:g}")
                elif not isinstance(value, str) or len(value) <= max_text:
                    features.add(f"{key}={_text(value)}")
        out.append(frozenset(features))
    return out


@dataclass(frozen=True)
class FeatureCluster:
    """A feature over-represented among disagreeing rows.

    Attributes:
        feature: The feature (``orders.age_days>30``).
        in_disagreements: Disagreeing rows with the feature.
        disagreements: Disagreeing rows.
        in_rows: Rows with the feature, agreeing or not.
        rows: Rows.
        lift: ``(in_disagreements / disagreements) / (in_rows / rows)``: how much more common the
            feature is among disagreements than overall.
        p_value: One-sided Fisher exact (hypergeometric) p-value of seeing at least
            ``in_disagreements`` such rows by chance; uncorrected for the number of features tried.
    """

    feature: str
    in_disagreements: int
    disagreements: int
    in_rows: int
    rows: int
    lift: float
    p_value: float

    def describe(self) -> str:
        """One line for people: ``11 of 15 disagreements involve orders.age_days>30 (...)``."""
        return (
            f"{self.in_disagreements} of {self.disagreements} disagreements involve {self.feature} "
            f"({self.in_rows} of {self.rows} rows; lift {self.lift:.1f}, p={self.p_value:.2g})"
        )


def over_represented(
    features: Sequence[frozenset[str]],
    disagree: Sequence[bool],
    *,
    top: int = 5,
    min_support: int = 2,
) -> tuple[FeatureCluster, ...]:
    """Features most over-represented among disagreeing rows, best first.

    A feature is kept when at least ``min_support`` disagreeing rows have it, its lift is above 1
    and some row lacks it. Ranking is by the one-sided Fisher exact test (Fisher 1922), then lift;
    a feature covering exactly the same rows as a better-ranked one is dropped as redundant.

    Raises:
        ValueError: ``features`` and ``disagree`` differ in length.

    Example:
        >>> rows = [frozenset({"old"})] * 4 + [frozenset({"new"})] * 4
        >>> top = over_represented(rows, [True, True, True, False] + [False, False, False, True])
        >>> top[0].describe()
        '3 of 4 disagreements involve old (4 of 8 rows; lift 1.5, p=0.24)'
    """
    if len(features) != len(disagree):
        raise ValueError(
            f"disagree: must have one flag per row ({len(features)}). Got {len(disagree)}."
        )
    n = len(features)
    d = sum(1 for x in disagree if x)
    if d == 0:
        return ()
    cover: dict[str, set[int]] = {}
    for i, feats in enumerate(features):
        for f in feats:
            cover.setdefault(f, set()).add(i)
    found = []
    for feature, covered in cover.items():
        a = sum(1 for i in covered if disagree[i])
        b = len(covered)
        lift = (a / d) / (b / n)
        if a < min_support or b == n or lift <= 1:
            continue
        p_value = float(stats.hypergeom.sf(a - 1, n, b, d))
        found.append((p_value, -lift, -a, feature, frozenset(covered)))
    found.sort()
    out: list[FeatureCluster] = []
    seen: set[frozenset[int]] = set()
    for p_value, neg_lift, neg_a, feature, rows in found:
        if rows in seen:
            continue
        seen.add(rows)
        out.append(FeatureCluster(feature, -neg_a, d, len(rows), n, -neg_lift, p_value))
        if len(out) == top:
            break
    return tuple(out)
