"""The unsatisfiable quota: reported per slice by `casework dataset check`, failing mature slices out of band."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from hypothesis import given
from hypothesis import strategies as st

from casework.errors import InputError
from casework.gate import check_project
from casework.gate._quota import UnsatisfiableShare, unsatisfiable_shares
from casework.project import load_project
from tests.factories import case_dict, write_lines

BAND = (0.2, 0.25)


class Facts:
    def __init__(self, slice_name: str, satisfiable: bool) -> None:
        self.slice = slice_name
        self.satisfiable = satisfiable
        self.split = "dev"


def facts(slice_name: str, unsat: int, total: int) -> list[Facts]:
    return [Facts(slice_name, i >= unsat) for i in range(total)]


@pytest.mark.parametrize(
    ("unsat", "total", "in_band"),
    [(2, 10, True), (1, 4, True), (9, 40, True), (1, 10, False), (3, 10, False), (0, 5, False)],
)
def test_band_is_inclusive_at_both_ends(unsat: int, total: int, in_band: bool) -> None:
    (share,) = unsatisfiable_shares(facts("refunds", unsat, total), BAND, ["refunds"])
    assert (share.unsatisfiable, share.total) == (unsat, total)
    assert share.in_band is in_band and share.fails is (not in_band)


def test_slices_not_marked_mature_never_fail() -> None:
    shares = unsatisfiable_shares(
        facts("young", 0, 10) + facts("refunds", 5, 10), BAND, ["refunds"]
    )
    assert [(s.slice, s.mature, s.fails) for s in shares] == [
        ("refunds", True, True),
        ("young", False, False),
    ]
    assert "not marked mature (thresholds.mature_slices)" in str(shares[1])
    assert "add satisfiable cases" in str(shares[0])
    below = unsatisfiable_shares(facts("refunds", 1, 10), BAND, ["refunds"])[0]
    assert "add refusal, question or escalation cases" in str(below)


def test_a_mature_slice_without_cases_is_listed_and_fails() -> None:
    (share,) = unsatisfiable_shares([], BAND, ["ghost"])
    assert (share.total, share.fails) == (0, True)


@given(st.integers(0, 60), st.integers(1, 60))
def test_in_band_agrees_with_exact_arithmetic(unsat: int, extra: int) -> None:
    total = unsat + extra
    (share,) = unsatisfiable_shares(facts("s", unsat, total), BAND, ["s"])
    assert share.in_band == (20 * total <= 100 * unsat <= 25 * total)


def _project(root: Path, unsat: int, total: int, config: str) -> None:
    cases = [
        case_dict(
            f"c-{i}",
            satisfiable=i >= unsat,
            label={"outcome": "refuse" if i < unsat else "resolve"},
        )
        for i in range(total)
    ]
    write_lines(root / "datasets" / "refunds" / "cases.jsonl", cases)
    (root / "casework.toml").write_text(config, encoding="utf-8")


MATURE = 'name = "t"\n[thresholds]\nmature_slices = ["refunds"]\n'


@pytest.mark.parametrize(
    ("unsat", "config", "ok"),
    [
        (2, MATURE, True),  # in band: 20%
        (1, MATURE, False),  # below: 10%
        (4, MATURE, False),  # above: 40%
        (1, 'name = "t"\n', True),  # not mature: reported only
        (4, MATURE + "unsatisfiable_band = [0.3, 0.5]\n", True),  # a configured band
    ],
)
def test_check_fails_a_mature_slice_outside_the_band(
    project_dir: Path, run_cli: Callable[..., Result], unsat: int, config: str, ok: bool
) -> None:
    _project(project_dir, unsat, 10, config)
    report = check_project(load_project(project_dir), "refunds")
    assert report.ok is ok
    quota = [f for f in report.findings if f.check == "unsatisfiable_quota"]
    assert len(quota) == (0 if ok else 1)
    assert ("unsatisfiable_quota" in report.checks) is ("mature_slices" in config)
    assert report.notes == [
        f"unsatisfiable: {s}"
        for s in [
            UnsatisfiableShare(
                "refunds",
                unsat,
                10,
                "mature_slices" in config,
                (0.3, 0.5) if "0.3" in config else BAND,
            )
        ]
    ]
    out = run_cli("dataset", "check", "refunds")
    assert out.exit_code == (0 if ok else 1)
    assert f"unsatisfiable: slice 'refunds': {unsat} of 10 cases are unsatisfiable" in out.stdout
    if not ok:
        assert "error: unsatisfiable_quota: refunds: " in out.stderr


def test_a_bad_band_is_a_located_config_error(project_dir: Path) -> None:
    (project_dir / "casework.toml").write_text(
        'name = "t"\n[thresholds]\nunsatisfiable_band = [0.3, 0.2]\n', encoding="utf-8"
    )
    with pytest.raises(InputError) as caught:
        load_project(project_dir)
    assert str(caught.value) == (
        "casework.toml:3: thresholds.unsatisfiable_band: must be [low, high] with "
        "0 <= low <= high <= 1. Got [0.3, 0.2]."
    )
