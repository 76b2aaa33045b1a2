"""Shapes from planted traces: recovery (ARI), saturation, the file format and its versions."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score

from casework.errors import InputError
from casework.project import Project, load_project
from casework.shapes import BuildOptions, ShapeBuild, build_shapes, load_shapes, shape_set_names
from casework.shapes._names import offline_name, one_sentence
from casework.shapes._saturation import saturation
from casework.shapes._store import shapes_file
from tests.authoring.conftest import ENV, new_project, truth_by_case

NOW = datetime(2026, 12, 9, 12, 0, tzinfo=UTC)
#: Floor of the adjusted Rand index against the planted labels. On this week (seed 11, 594
#: failing), merging the two largest planted shapes scores 0.83 and splitting the largest in half
#: 0.93, so 0.95 fails either; merging the two smallest scores 0.99, which ARI cannot see: the
#: count of shapes and the one-planted-shape-per-shape test below catch that (docs/authoring.md).
ARI_FLOOR = 0.95


@pytest.fixture(scope="module")
def built(
    tmp_path_factory: pytest.TempPathFactory, weeks: dict[str, tuple[Path, dict[str, str]]]
) -> tuple[Project, ShapeBuild]:
    project = new_project(tmp_path_factory.mktemp("p") / "proj")
    result = build_shapes(project, [weeks["w1"][0]], "refunds", BuildOptions(environ=ENV, now=NOW))
    return project, result


def _copy_of(built: tuple[Project, ShapeBuild], root: Path) -> Project:
    """A copy of the built project (its week 1 build as version 1), for a test that changes it.

    The same tree as a new project built from week 1 with the same options, without building
    again (3 CPU s a build under coverage); the module's project itself is left as it is.
    """
    shutil.copytree(built[0].root, root, symlinks=True)
    return load_project(root)


def _labels(
    project: Project, build: ShapeBuild, truth: dict[str, str]
) -> tuple[list[str], list[str]]:
    """Planted and found label of every failing conversation (no shape: a label of its own)."""
    by_case = truth_by_case(project, truth)
    found = {m: s.id for s in build.shapes for m in s.members}
    failing = [c for c, shape in by_case.items() if shape != "success"]
    return [by_case[c] for c in failing], [found.get(c, f"alone-{c}") for c in failing]


def test_planted_shapes_are_recovered(
    built: tuple[Project, ShapeBuild], weeks: dict[str, tuple[Path, dict[str, str]]]
) -> None:
    project, build = built
    planted, found = _labels(project, build, weeks["w1"][1])
    assert build.failing == len(planted)
    assert adjusted_rand_score(planted, found) >= ARI_FLOOR
    # One shape per planted shape (15); the one-off failures are in none.
    assert len(build.shapes) == 15
    tails = sum(1 for p in planted if p.startswith("tail-"))
    assert build.saturation.singletons == tails
    assert build.saturation.unseen_share == pytest.approx(tails / build.failing)


def test_every_shape_is_one_planted_shape(
    built: tuple[Project, ShapeBuild], weeks: dict[str, tuple[Path, dict[str, str]]]
) -> None:
    project, build = built
    by_case = truth_by_case(project, weeks["w1"][1])
    seen = []
    for shape in build.shapes:
        counts = Counter(by_case[m] for m in shape.members)
        top, n = counts.most_common(1)[0]
        assert n / shape.size >= 0.95, (shape.id, counts)
        seen.append(top)
    assert len(set(seen)) == len(seen)


def test_file_holds_members_representatives_and_a_version(
    built: tuple[Project, ShapeBuild],
) -> None:
    project, build = built
    path = shapes_file(project, "refunds")
    saved = load_shapes(project, "refunds")
    assert shape_set_names(project) == ["refunds"]
    assert saved.version.hash == hashlib.sha256(path.read_bytes()).hexdigest()
    assert saved.version.number == 1 and saved.version.as_of == NOW.date()
    assert saved.version.embedder == "tfidf"
    assert saved.version.key_fingerprint == build.key_fingerprint
    assert saved.version.method["algorithm"] == "agglomerative"
    assert [s.model_dump() for s in saved.shapes] == [s.model_dump() for s in build.shapes]
    assert sum(s.size for s in saved.shapes) == saved.version.shaped
    for shape in saved.shapes:
        assert shape.size == len(shape.members) == len(set(shape.members))
        assert shape.representatives[0].distance == min(e.distance for e in shape.representatives)
        assert shape.representatives[0].case_id in shape.members
        assert {e.case_id for e in shape.exemplars} <= set(shape.members)
        assert shape.situation["turns"]
        assert one_sentence(shape.name) == shape.name and shape.named_by == "offline"
    # Scrubbed: no customer's raw name, email or order number is in the file.
    text = path.read_text(encoding="utf-8")
    assert "@example.com" not in text and "ORD-" not in text and "CUS-" not in text


def test_rebuild_is_unchanged_and_names_are_deterministic(
    tmp_path: Path,
    built: tuple[Project, ShapeBuild],
    weeks: dict[str, tuple[Path, dict[str, str]]],
) -> None:
    project, build = built
    again = build_shapes(project, [weeks["w1"][0]], "refunds", BuildOptions(environ=ENV, now=NOW))
    assert not again.changed and again.version.number == 1
    other = new_project(tmp_path / "other")
    fresh = build_shapes(other, [weeks["w1"][0]], "refunds", BuildOptions(environ=ENV, now=NOW))
    assert [s.name for s in fresh.shapes] == [s.name for s in build.shapes]
    assert fresh.version.hash == build.version.hash


def test_a_changed_build_appends_a_version(
    tmp_path: Path,
    built: tuple[Project, ShapeBuild],
    weeks: dict[str, tuple[Path, dict[str, str]]],
) -> None:
    project = _copy_of(built, tmp_path / "p")
    assert [v.number for v in load_shapes(project, "refunds").versions] == [1]
    second = build_shapes(
        project, [weeks["w1"][0], weeks["w2"][0]], "refunds", BuildOptions(environ=ENV, now=NOW)
    )
    assert second.changed and second.version.number == 2
    assert [v.number for v in load_shapes(project, "refunds").versions] == [1, 2]


def test_as_of_leaves_out_later_conversations(
    tmp_path: Path, weeks: dict[str, tuple[Path, dict[str, str]]]
) -> None:
    project = new_project(tmp_path / "p")
    # Week 1's traces start 2025-12-01, one a minute: as of that day only the first 1440.
    result = build_shapes(
        project,
        [weeks["w1"][0]],
        "early",
        BuildOptions(environ=ENV, now=NOW, as_of=date(2025, 12, 1)),
    )
    assert result.after_as_of == 1500 - 1440
    assert result.conversations == 1500


def test_hand_edited_file_is_refused(tmp_path: Path, built: tuple[Project, ShapeBuild]) -> None:
    project = _copy_of(built, tmp_path / "p")
    load_shapes(project, "refunds")  # read as written
    path = shapes_file(project, "refunds")
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="changed by hand"):
        load_shapes(project, "refunds")


def test_saturation_worked_example() -> None:
    # Clusters of 5, 3, 2 and four singletons: n = 14, N1 = 4, unseen share 4/14.
    sat = saturation([5, 3, 1, 1, 2, 1, 1])
    assert (sat.singletons, sat.n) == (4, 14)
    assert sat.unseen_share == pytest.approx(4 / 14)
    assert "more traces would find more shapes" in sat.explanation
    close = saturation([50, 49, 1])
    assert close.unseen_share == pytest.approx(0.01)
    assert "close to saturated" in close.explanation


@given(st.lists(st.integers(min_value=1, max_value=50), min_size=1, max_size=40))
def test_saturation_is_singletons_over_n(sizes: list[int]) -> None:
    sat = saturation(sizes)
    assert sat.n == sum(sizes)
    assert sat.unseen_share == sizes.count(1) / sum(sizes)
    assert 0 <= sat.unseen_share <= 1


def test_offline_name_is_one_sentence() -> None:
    name = offline_name(
        ["tracking", "unknown"], "Hi. The tracking number for order_0123456789ab is dead!"
    )
    assert name == (
        "Failing conversations about tracking, unknown, such as "
        '"The tracking number for order is dead".'
    )
    assert one_sentence(name) == name
    assert one_sentence("First. Second.") is None
    assert one_sentence("  no full stop ") == "no full stop."
    assert one_sentence("") is None


def test_json_lines_are_canonical(built: tuple[Project, ShapeBuild]) -> None:
    project, _ = built
    for line in shapes_file(project, "refunds").read_text(encoding="utf-8").splitlines():
        assert json.loads(line)["id"].startswith("shape-")
