from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from casework.errors import ConfigError, InputError, InputErrors, UsageError
from casework.labelling import list_guidelines, read_guideline
from casework.labelling.guidelines import bump_guideline, current_versions
from casework.project import Project, load_project
from tests.labelling.builders import make_project


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    root = make_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    return load_project(root)


def test_read_and_list(project: Project) -> None:
    refunds = read_guideline(project, "refunds")
    assert (refunds.version, refunds.number, refunds.changelog) == ("refunds-g7", 7, ())
    assert [g.version for g in list_guidelines(project)] == ["refunds-g7", "status-g1"]
    assert current_versions(project, ["status", "refunds"]) == {
        "refunds": "refunds-g7",
        "status": "status-g1",
    }


def test_bump_rewrites_only_the_version_and_adds_a_changelog_entry(project: Project) -> None:
    path = project.root / "guidelines" / "refunds.md"
    before = path.read_text()
    bump = bump_guideline(
        project, "refunds", "Partial shipments over 30 days: escalate", today=date(2026, 12, 1)
    )
    assert (bump.old, bump.new) == ("refunds-g7", "refunds-g8")
    after = path.read_text()
    assert after == before.replace("version: refunds-g7", "version: refunds-g8") + (
        "\n## Changelog\n\n"
        "- refunds-g8 (2026-12-01): Partial shipments over 30 days: escalate (was refunds-g7)\n"
    )
    bump_guideline(project, "refunds", "Gift cards are never refunded", today=date(2026, 12, 9))
    again = read_guideline(project, "refunds")
    assert again.version == "refunds-g9"
    assert again.changelog == (
        "refunds-g9 (2026-12-09): Gift cards are never refunded (was refunds-g8)",
        "refunds-g8 (2026-12-01): Partial shipments over 30 days: escalate (was refunds-g7)",
    )
    assert "owner: support-ops" in again.text


def test_bump_refuses_bad_input_and_writes_nothing(project: Project) -> None:
    path = project.root / "guidelines" / "refunds.md"
    before = path.read_text()
    with pytest.raises(UsageError):
        bump_guideline(project, "refunds", "  ")
    with pytest.raises(UsageError):
        bump_guideline(project, "refunds", "one\ntwo")
    assert path.read_text() == before
    with pytest.raises(ConfigError) as missing:
        bump_guideline(project, "returns", "why")
    assert str(missing.value) == (
        "guidelines/returns.md: no guideline for slice 'returns'. Every slice needs one before "
        "labelling: a Markdown file starting with '---', 'version: returns-g1', '---'."
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "# Refunds\n",
            "guidelines/refunds.md:1: version: a guideline starts with front matter: a '---' line, "
            "'version: <slice>-g1', a '---' line. Got '# Refunds'.",
        ),
        (
            "---\nversion: v7\n---\n",
            "guidelines/refunds.md:2: version: must be 'refunds-gN' with N = 1, 2, …. Got 'v7'.",
        ),
        (
            "---\nowner: me\n---\n",
            "guidelines/refunds.md:1: version: front matter needs 'version: refunds-g1'.",
        ),
        (
            "---\nversion: refunds-g1\n",
            "guidelines/refunds.md:1: front matter is not closed by a '---' line.",
        ),
    ],
)
def test_bad_front_matter(project: Project, text: str, message: str) -> None:
    (project.root / "guidelines" / "refunds.md").write_text(text)
    with pytest.raises(InputError) as info:
        read_guideline(project, "refunds")
    assert str(info.value) == message


def test_current_versions_reports_every_slice_without_a_guideline(project: Project) -> None:
    (project.root / "guidelines" / "status.md").unlink()
    with pytest.raises(InputErrors) as info:
        current_versions(project, ["refunds", "status", "account"])
    assert str(info.value).splitlines() == [
        "guidelines/account.md: no guideline for slice 'account'. Every slice needs one before "
        "labelling: a Markdown file starting with '---', 'version: account-g1', '---'.",
        "guidelines/status.md: no guideline for slice 'status'. Every slice needs one before "
        "labelling: a Markdown file starting with '---', 'version: status-g1', '---'.",
    ]
