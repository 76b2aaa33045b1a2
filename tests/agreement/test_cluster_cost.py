"""Disagreement clusters cost the disagreements, not the cases, and rank exactly as before.

:func:`casework.agreement.clusters.disagreement_clusters` must equal ``over_represented(featurize(rows), f)``
for every flag list (ranking, ties and redundancy included) while building feature sets only for
flagged rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casework.agreement import agreement_report
from casework.agreement import clusters as clusters_module
from casework.agreement.clusters import Scalar, disagreement_clusters, featurize, over_represented
from casework.agreement.report import AgreementSettings
from tests.agreement.builders import seed_dataset

KEYS = ["age", "tier", "a=b", "a", "x>1", "x", "note"]
VALUES: st.SearchStrategy[Scalar] = st.one_of(
    st.integers(-3, 60),
    st.floats(-5, 5, allow_nan=False, width=16),
    st.sampled_from(["gold", "silver", "b>1", "1", "nan", "x" * 50, ""]),
    st.booleans(),
    st.none(),
    st.just(float("nan")),
)
ROW = st.dictionaries(st.sampled_from(KEYS), st.lists(VALUES, min_size=1, max_size=3), max_size=5)


def composed(
    rows: Sequence[Mapping[str, Sequence[Scalar]]], flags: Sequence[Sequence[bool]], **kw: int
) -> list[tuple[clusters_module.FeatureCluster, ...]]:
    features = featurize(rows)
    return [over_represented(features, flag, **kw) for flag in flags]


@settings(max_examples=300, deadline=None)
@given(
    data=st.lists(st.tuples(ROW, st.booleans(), st.booleans()), min_size=0, max_size=40),
    top=st.integers(1, 6),
    min_support=st.integers(1, 3),
)
def test_equals_featurize_then_over_represented(
    data: list[tuple[dict[str, list[Scalar]], bool, bool]], top: int, min_support: int
) -> None:
    rows = [row for row, _, _ in data]
    flags = [[f for _, f, _ in data], [g for _, _, g in data]]
    got = disagreement_clusters(rows, flags, top=top, min_support=min_support)
    assert got == composed(rows, flags, top=top, min_support=min_support)


def test_a_key_holding_an_operator_is_counted_like_featurize_counts_it() -> None:
    # "a=b>1" is both key "a" with text "b>1" and key "a=b" above threshold 1.
    rows: list[dict[str, list[Scalar]]] = [
        {"a": ["b>1"]},
        {"a": ["b>1"]},
        {"a=b": [5]},
        {"a=b": [0]},
        {"a=b": [1]},
        {"a=b": [3]},
        {"z": [1]},
    ]
    flags = [[True, True, False, False, False, False, False]]
    got = disagreement_clusters(rows, flags, min_support=1)
    assert got == composed(rows, flags, min_support=1)


def test_feature_sets_are_built_for_flagged_rows_only(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[Mapping[str, Sequence[Scalar]]] = []
    real = clusters_module._row_features

    def counting(
        row: Mapping[str, Sequence[Scalar]],
        thresholds: Mapping[str, Sequence[float]],
        max_text: int,
    ) -> set[str]:
        built.append(row)
        return real(row, thresholds, max_text)

    monkeypatch.setattr(clusters_module, "_row_features", counting)
    rows: list[dict[str, list[Scalar]]] = [
        {"age": [i % 50], "tier": [str(i % 3)]} for i in range(1000)
    ]
    first = [i % 100 == 0 for i in range(1000)]
    second = [i % 250 == 3 for i in range(1000)]
    disagreement_clusters(rows, [first, second])
    assert len(built) == sum(1 for a, b in zip(first, second, strict=True) if a or b) == 14


def test_the_report_builds_features_for_disagreeing_cases_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls = 0
    real = clusters_module._row_features

    def counting(
        row: Mapping[str, Sequence[Scalar]],
        thresholds: Mapping[str, Sequence[float]],
        max_text: int,
    ) -> set[str]:
        nonlocal calls
        calls += 1
        return real(row, thresholds, max_text)

    monkeypatch.setattr(clusters_module, "_row_features", counting)
    cases, labels = seed_dataset()
    report = agreement_report(
        cases,
        labels,
        dataset="refunds@working",
        tools=["escalate_to_human", "get_order", "issue_refund"],
        settings=AgreementSettings(bootstrap=0),
    )
    disagreeing = sum(
        len(set(s.disagreeing_case_ids) | set(s.tool_disagreement_case_ids)) for s in report.slices
    )
    rows = sum(s.rows for s in report.slices)
    assert calls == disagreeing < rows


def reference_flatten(value: object, prefix: str = "") -> list[tuple[str, Scalar]]:
    """The first, plain recursive :func:`flatten` (the faster one must agree with it)."""
    out: list[tuple[str, Scalar]] = []
    if isinstance(value, Mapping):
        for key in sorted(value, key=str):
            child = value[key]
            nested = isinstance(child, Mapping | list | tuple)
            name = str(key)
            id_like = any(ch.isdigit() for ch in name)
            path = prefix if nested and id_like else (f"{prefix}.{name}" if prefix else name)
            out.extend(reference_flatten(child, path))
    elif isinstance(value, list | tuple):
        for child in value:
            out.extend(reference_flatten(child, prefix))
    elif value is None or isinstance(value, str | int | float | bool):
        out.append((prefix or "value", value))
    else:
        out.append((prefix or "value", str(value)))
    return out


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text("ab1²_", max_size=4), inner, max_size=3)
    ),
    max_leaves=25,
)


@settings(max_examples=500, deadline=None)
@given(JSON)
def test_flatten_equals_the_plain_recursion(value: object) -> None:
    assert clusters_module.flatten(value) == reference_flatten(value)
