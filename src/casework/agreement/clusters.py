"""Disagreement clusters: case features over-represented among the rows labellers disagree on.

Entry points: :func:`flatten` (JSON leaves as ``path, value``), :func:`featurize` (rows of leaves
to ``key=value`` / ``key>t`` features), :func:`over_represented` (features ranked by a one-sided
Fisher test, with counts and lift).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "FeatureCluster",
    "Scalar",
    "disagreement_clusters",
    "featurize",
    "flatten",
    "over_represented",
]

Scalar = str | int | float | bool | None
"""A JSON leaf value."""


_ID_LIKE: dict[str, bool] = {}  # keys repeat across rows: test each once
_SCALARS = (str, int, float, bool, type(None))
_SCALAR_TYPES = frozenset(_SCALARS)


def _id_like(key: str) -> bool:
    found = _ID_LIKE.get(key)
    if found is None:
        if len(_ID_LIKE) > 100_000:
            _ID_LIKE.clear()
        found = _ID_LIKE[key] = any(ch.isdigit() for ch in key)
    return found


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
    _walk(value, prefix, lambda path, leaf: out.append((path, leaf)))
    return out


def _walk(value: Any, prefix: str, emit: Callable[[str, Scalar], object]) -> None:
    # Scalars are tested by exact type first: the ABC checks below are slow and rarely needed.
    if type(value) in _SCALAR_TYPES:
        emit(prefix or "value", value)
    elif type(value) is dict or isinstance(value, Mapping):
        for key in sorted(value, key=str):
            child = value[key]
            name = str(key)
            path = f"{prefix}.{name}" if prefix else name
            kind = type(child)
            if kind in _SCALAR_TYPES:
                emit(path or "value", child)
                continue
            nested = kind is dict or kind is list or isinstance(child, Mapping | list | tuple)
            _walk(child, prefix if nested and _id_like(name) else path, emit)
    elif type(value) in (list, tuple) or isinstance(value, list | tuple):
        for child in value:
            _walk(child, prefix, emit)
    elif isinstance(value, _SCALARS):
        emit(prefix or "value", value)
    else:
        emit(prefix or "value", str(value))


def _is_number(value: Scalar) -> bool:
    if not isinstance(value, int | float) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an integer past a float's range: compared as a category
        return False


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
    from scipy import stats  # scipy.stats takes ~0.3 s to import: only when used

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


def _thresholds(
    rows: Sequence[Mapping[str, Sequence[Scalar]]],
    quantiles: Sequence[float],
    weights: Sequence[int] | None = None,
) -> tuple[dict[str, list[float]], set[str]]:
    """The thresholds :func:`featurize` bins numbers at, per key, and every key of any row.

    ``weights[i]`` counts how many rows ``rows[i]`` stands for (default: one each); quantiles,
    minima and maxima depend only on the multiset of values, so the thresholds are the same.
    """
    numbers: dict[str, list[float]] = {}
    times: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        weight = 1 if weights is None else weights[i]
        for key, values in row.items():
            found = [float(v) for v in values if _is_number(v)]  # type: ignore[arg-type]
            numbers.setdefault(key, []).extend(found)
            times.setdefault(key, []).extend([weight] * len(found))
    thresholds: dict[str, list[float]] = {}
    for key, values in numbers.items():
        if not values:
            continue
        found_all = np.repeat(np.array(values, dtype=np.float64), times[key])
        lo, hi = float(found_all.min()), float(found_all.max())
        cuts = sorted({_nice(float(q)) for q in np.quantile(found_all, list(quantiles))})
        thresholds[key] = [t for t in cuts if lo <= t < hi]
    return thresholds, set(numbers)


# Where a feature comes from: (key, ">" or "<=", threshold) or (key, "=", text).
_Source = tuple[str, str, float | str]


def _sources(
    feature: str, thresholds: Mapping[str, Sequence[float]], keys: set[str]
) -> set[_Source]:
    """Every (key, op, argument) that renders as ``feature`` (a key may itself hold ``=`` or ``>``)."""
    found: set[_Source] = set()
    for i, ch in enumerate(feature):
        if ch == "=" and feature[:i] in keys:
            found.add((feature[:i], "=", feature[i + 1 :]))
        for op in (">", "<="):
            if feature.startswith(op, i):
                key, rest = feature[:i], feature[i + len(op) :]
                found.update((key, op, t) for t in thresholds.get(key, ()) if f"{t:g}" == rest)
    return found


def _row_features(
    row: Mapping[str, Sequence[Scalar]], thresholds: Mapping[str, Sequence[float]], max_text: int
) -> set[str]:
    """One row's :func:`featurize` features."""
    features: set[str] = set()
    for key, values in row.items():
        for value in values:
            if _is_number(value):
                for t in thresholds.get(key, []):
                    op = ">" if float(value) > t else "<="  # type: ignore[arg-type]
                    features.add(f"{key}{op}{t:g}")
            elif not isinstance(value, str) or len(value) <= max_text:
                features.add(f"{key}={_text(value)}")
    return features


class _Columns:
    """Which rows have each wanted feature, from one pass over all rows' leaves."""

    def __init__(
        self,
        rows: Sequence[Mapping[str, Sequence[Scalar]]],
        wanted: Iterable[tuple[str, str, float | str]],
        max_text: int,
    ) -> None:
        numeric = {key for key, op, _ in wanted if op != "="}
        texts: dict[str, set[str]] = {}
        for key, op, arg in wanted:
            if op == "=":
                texts.setdefault(key, set()).add(str(arg))
        n = len(rows)
        self.low = {key: np.full(n, np.nan) for key in numeric}
        self.high = {key: np.full(n, np.nan) for key in numeric}
        self.postings: dict[tuple[str, str], list[int]] = {}
        for i, row in enumerate(rows):
            for key, values in row.items():
                if key in numeric:
                    found = [float(v) for v in values if _is_number(v)]  # type: ignore[arg-type]
                    if found:
                        self.low[key][i], self.high[key][i] = min(found), max(found)
                if key in texts:
                    self._post(i, key, values, texts[key], max_text)

    def _post(
        self, i: int, key: str, values: Sequence[Scalar], texts: set[str], max_text: int
    ) -> None:
        for value in values:
            if _is_number(value) or (isinstance(value, str) and len(value) > max_text):
                continue
            text = _text(value)
            if text in texts:
                rows = self.postings.setdefault((key, text), [])
                if not rows or rows[-1] != i:
                    rows.append(i)

    def covered(self, sources: Iterable[_Source], n: int) -> np.ndarray[Any, Any]:
        """Which rows have a feature (a row has it when any of its sources holds)."""
        mask = np.zeros(n, dtype=bool)
        for key, op, arg in sources:
            if op == "=":
                mask[self.postings.get((key, str(arg)), [])] = True
            elif op == ">":
                mask |= self.high[key] > arg
            else:
                mask |= self.low[key] <= arg
        return mask


def disagreement_clusters(
    rows: Sequence[Mapping[str, Sequence[Scalar]]],
    flags: Sequence[Sequence[bool]],
    *,
    top: int = 5,
    min_support: int = 2,
    max_text: int = 40,
    quantiles: Sequence[float] = (0.25, 0.5, 0.75),
) -> list[tuple[FeatureCluster, ...]]:
    """``over_represented(featurize(rows), f)`` for each flag list ``f``, at the cost of the flagged rows.

    Features are built only for rows some list flags (the disagreements); a feature is a candidate
    only when ``min_support`` flagged rows have it, and its row count over all rows comes from
    per-key columns (numeric minima and maxima, text postings) built for candidate keys only.
    Rows given as the same object (cases whose features are equal, shared by the caller) are
    scanned once for thresholds and columns, so the work over all rows grows with the distinct
    rows.
    The result equals the composition, ranking and ties included.

    Raises:
        ValueError: A flag list differs in length from ``rows``.
    """
    for flag in flags:
        if len(flag) != len(rows):
            raise ValueError(
                f"disagree: must have one flag per row ({len(rows)}). Got {len(flag)}."
            )
    n = len(rows)
    # Rows that are one object (cases sharing their features) are featurized and scanned once.
    group_of: dict[int, int] = {}
    distinct: list[Mapping[str, Sequence[Scalar]]] = []
    member = np.empty(n, dtype=np.int64)
    for i, row in enumerate(rows):
        g = group_of.setdefault(id(row), len(distinct))
        if g == len(distinct):
            distinct.append(row)
        member[i] = g
    weights = np.bincount(member, minlength=len(distinct)).tolist()
    thresholds, keys = _thresholds(distinct, quantiles, weights)
    flagged = [i for i in range(n) if any(flag[i] for flag in flags)]
    features = {i: _row_features(rows[i], thresholds, max_text) for i in flagged}
    support: Counter[str] = Counter()
    for feats in features.values():
        support.update(feats)
    # Any feature some ranking may need: held by min_support flagged rows (a superset per list).
    sources = {
        f: _sources(f, thresholds, keys) for f, count in support.items() if count >= min_support
    }
    columns = _Columns(distinct, {s for found in sources.values() for s in found}, max_text)
    masks: dict[str, np.ndarray[Any, Any]] = {}

    def covered(feature: str) -> np.ndarray[Any, Any]:
        if feature not in masks:
            masks[feature] = np.packbits(columns.covered(sources[feature], len(distinct))[member])
        return masks[feature]

    return [_ranked(features, flag, covered, n, top=top, min_support=min_support) for flag in flags]


def _ranked(
    features: Mapping[int, set[str]],
    flag: Sequence[bool],
    covered: Callable[[str], np.ndarray[Any, Any]],
    n: int,
    *,
    top: int,
    min_support: int,
) -> tuple[FeatureCluster, ...]:
    from scipy import stats  # scipy.stats takes ~0.3 s to import: only when used

    d = sum(1 for x in flag if x)
    if d == 0:
        return ()
    support: dict[str, int] = {}
    for i, feats in features.items():
        if flag[i]:
            for feature in feats:
                support[feature] = support.get(feature, 0) + 1
    found = []
    counts: dict[str, int] = {}
    for feature, a in support.items():
        if a < min_support:
            continue
        b = counts[feature] = int(np.unpackbits(covered(feature), count=n).sum())
        lift = (a / d) / (b / n)
        if b == n or lift <= 1:
            continue
        p_value = float(stats.hypergeom.sf(a - 1, n, b, d))
        found.append((p_value, -lift, -a, feature))
    found.sort()
    out: list[FeatureCluster] = []
    seen: set[bytes] = set()
    for p_value, neg_lift, neg_a, feature in found:
        rows = covered(feature).tobytes()
        if rows in seen:
            continue
        seen.add(rows)
        out.append(FeatureCluster(feature, -neg_a, d, counts[feature], n, -neg_lift, p_value))
        if len(out) == top:
            break
    return tuple(out)
