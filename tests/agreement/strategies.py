"""Hypothesis strategies for random reliability data (units by raters, with missing ratings)."""

from __future__ import annotations

import importlib
from typing import Any

from hypothesis import strategies as st

pd: Any = importlib.import_module("pandas")  # no type stubs for pandas in this environment


@st.composite
def raw_ratings(
    draw: st.DrawFn, *, missing: bool = True, min_raters: int = 2, max_raters: int = 5
) -> list[list[int | None]]:
    """Units by raters, values 0..k-1, ``None`` for missing; every unit has at least one rating."""
    k = draw(st.integers(2, 4))
    raters = draw(st.integers(min_raters, max_raters))
    value = st.integers(0, k - 1)
    cell = st.one_of(st.none(), value) if missing else value
    rows = draw(st.lists(st.lists(cell, min_size=raters, max_size=raters), min_size=3, max_size=30))
    return [row for row in rows if any(v is not None for v in row)]


def frame(rows: list[list[int | None]]) -> Any:
    """The rows as the units-by-raters data frame irrCAC expects (NaN for missing)."""
    width = len(rows[0]) if rows else 0
    return pd.DataFrame(
        [[float("nan") if v is None else float(v) for v in row] for row in rows],
        columns=[f"r{i}" for i in range(width)],
    )
