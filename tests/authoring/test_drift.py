"""Drift: the planted new and vanished shapes are found; a same-distribution week is no drift."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportions_ztest

from casework.errors import ConfigError, UsageError
from casework.project import Project
from casework.shapes import (
    BuildOptions,
    DriftOptions,
    DriftReport,
    build_shapes,
    drift,
    load_shapes,
)
from casework.shapes._stats import holm, two_proportion_z
from tests.authoring.conftest import ENV, new_project, truth_by_case


@pytest.fixture(scope="module")
def saved(
    tmp_path_factory: pytest.TempPathFactory, weeks: dict[str, tuple[Path, dict[str, str]]]
) -> Project:
    project = new_project(tmp_path_factory.mktemp("d") / "proj")
    build_shapes(project, [weeks["w1"][0]], "refunds", BuildOptions(environ=ENV))
    return project


def _majority(project: Project, truth: dict[str, str], case_ids: list[str]) -> tuple[str, float]:
    by_case = truth_by_case(project, truth)
    top, n = Counter(by_case[c] for c in case_ids).most_common(1)[0]
    return top, n / len(case_ids)


def test_week_two_shows_the_new_and_the_vanished_shape(
    saved: Project, weeks: dict[str, tuple[Path, dict[str, str]]]
) -> None:
    report = drift(saved, [weeks["w2"][0]], "refunds", DriftOptions(environ=ENV))
    assert report.drifted
    assert len(report.appeared) == 1
    shape, purity = _majority(saved, weeks["w2"][1], report.appeared[0].case_ids)
    assert shape == "price_match_request" and purity >= 0.95
    planted = sum(1 for v in weeks["w2"][1].values() if v == "price_match_request")
    assert report.appeared[0].size >= 0.9 * planted
    assert len(report.vanished) == 1
    gone = load_shapes(saved, "refunds").shape(report.vanished[0].shape_id)
    assert _majority(saved, weeks["w1"][1], gone.members)[0] == "cancel_after_dispatch"
    assert report.changed == []


def test_a_week_like_the_first_is_no_drift(
    saved: Project, weeks: dict[str, tuple[Path, dict[str, str]]]
) -> None:
    report = drift(saved, [weeks["w1b"][0]], "refunds", DriftOptions(environ=ENV))
    assert not report.drifted, (report.appeared, report.vanished, report.changed)
    assert report.assigned >= 0.97 * report.failing
    assert all(s.new_count > 0 for s in report.shares)


def test_share_tests_are_holm_corrected(
    saved: Project, weeks: dict[str, tuple[Path, dict[str, str]]]
) -> None:
    report: DriftReport = drift(saved, [weeks["w2"][0]], "refunds", DriftOptions(environ=ENV))
    expected = multipletests([s.p for s in report.shares], method="holm")[1]
    assert [s.p_holm for s in report.shares] == pytest.approx(list(expected))
    for s in report.shares:
        _, p = proportions_ztest(
            [s.new_count, s.old_count], [report.failing, round(s.old_count / s.old_share)]
        )
        assert s.p == pytest.approx(p, rel=1e-9, abs=1e-300)


def test_unknown_shape_set_is_a_usage_error(
    saved: Project, weeks: dict[str, tuple[Path, dict[str, str]]]
) -> None:
    with pytest.raises(UsageError, match="no shape set 'nope'") as info:
        drift(saved, [weeks["w2"][0]], "nope", DriftOptions(environ=ENV))
    assert info.value.param == "against"


@given(st.integers(0, 500), st.integers(1, 500), st.integers(0, 500), st.integers(1, 500))
def test_two_proportion_z_matches_statsmodels(x1: int, n1: int, x2: int, n2: int) -> None:
    x1, x2 = min(x1, n1), min(x2, n2)
    z, p = two_proportion_z(x1, n1, x2, n2)
    pooled = (x1 + x2) / (n1 + n2)
    if pooled in (0.0, 1.0):
        assert (z, p) == (0.0, 1.0)
        return
    want_z, want_p = proportions_ztest([x1, x2], [n1, n2])
    assert z == pytest.approx(want_z, rel=1e-9, abs=1e-12)
    assert p == pytest.approx(want_p, rel=1e-6, abs=1e-300)


# statsmodels' Holm branch ends with a full gc.collect(), which costs 30-200 ms a call in a
# test process holding the suite's objects (100 examples took 20-86 s). The collection frees
# nothing the result depends on, so it is skipped for the call: 100 examples take well under 1 s.
@settings(max_examples=100)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30))
def test_holm_matches_statsmodels(p_values: list[float]) -> None:
    with mock.patch("gc.collect", return_value=0):
        want = list(multipletests(p_values, method="holm")[1])
    assert holm(p_values) == pytest.approx(want)


def test_holm_worked_example() -> None:
    # m = 3: sorted 0.01, 0.02, 0.04 -> 0.03, 0.04, 0.04 (monotone), back in the order given.
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])


def test_drift_under_another_key_is_refused(
    saved: Project, weeks: dict[str, tuple[Path, dict[str, str]]]
) -> None:
    other = {"CASEWORK_PSEUDONYM_KEY": "another-shapes-key-not-secret-98765432"}
    with pytest.raises(ConfigError, match="unrelated pseudonyms"):
        drift(saved, [weeks["w2"][0]], "refunds", DriftOptions(environ=other))
