"""What the report keeps of each case: the features of :func:`case_features`, shared when equal."""

from __future__ import annotations

import importlib

import pytest

from casework.agreement.report import case_features
from tests.agreement.builders import make_case, seed_dataset

report_module = importlib.import_module("casework.agreement.report")


@pytest.mark.parametrize("decoded", [False, True])
def test_facts_hold_each_cases_features_and_share_equal_ones(decoded: bool) -> None:
    cases, _ = seed_dataset()
    facts = report_module.CaseFacts(decoded=decoded)
    for case in cases:
        facts.add(case)
    assert facts.slices == {c.slice for c in cases}
    for case in cases:
        assert facts.slice_of[case.id] == case.slice
        assert facts.features_of[case.id] == case_features(case)
    distinct = {id(f) for f in facts.features_of.values()}
    assert len(distinct) == len({repr(case_features(c)) for c in cases}) < len(cases)


@pytest.mark.parametrize("decoded", [False, True])
def test_one_one_point_zero_and_true_are_not_shared(decoded: bool) -> None:
    values = [1, 1.0, True, "1", None, -0.0, 0.0]
    cases = [make_case(f"c-{i}", "s", {"x": v}, "resolve") for i, v in enumerate(values)]
    facts = report_module.CaseFacts(decoded=decoded)
    for case in cases:
        facts.add(case)
    for case in cases:
        got = facts.features_of[case.id]["x"]
        assert got == case_features(case)["x"]
        assert [type(v) for v in got] == [type(v) for v in case_features(case)["x"]]
    assert len({id(f) for f in facts.features_of.values()}) == len(values)


def test_merged_parts_equal_one_pass() -> None:
    cases, _ = seed_dataset()
    whole = report_module.CaseFacts(decoded=True)
    parts = [report_module.CaseFacts(decoded=True) for _ in range(3)]
    for i, case in enumerate(cases):
        whole.add(case)
        parts[i * 3 // len(cases)].add(case)
    merged = report_module.CaseFacts(decoded=True)
    for part in parts:
        merged.merge(part)
    assert merged.slice_of == whole.slice_of
    assert merged.features_of == whole.features_of
    assert len({id(f) for f in merged.features_of.values()}) == len(
        {id(f) for f in whole.features_of.values()}
    )
