"""Relabel by rule: a bump's selector, its preview, and `--relabel-under` sending back only its rows."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from casework.cli import cli
from casework.errors import UsageError
from casework.labelling.assign import assign_labels
from casework.labelling.guidelines import bump_guideline, read_guideline
from casework.labelling.relabel_rule import (
    RelabelRule,
    compile_selector,
    rules_of,
    rules_since,
    touched_by,
)
from casework.labelling.sheets import sheet_line
from casework.project import Project, load_project
from casework.schema import Case

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "refunds"
RULE = (
    "situation.fixtures[?tool=='get_order'].response[] "
    "| [?status=='partially_shipped' && age_days > `30`]"
)
WHY = "older than 30 days and partially shipped: escalate"


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    """A scratch copy of the bundled example (as committed), with no workbench."""
    root = tmp_path / "refunds"
    shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns(".casework", "runs", "build"))
    monkeypatch.chdir(root)
    return load_project(root)


def _cli(project: Project, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--project", str(project.root), *args])


def test_a_bad_selector_is_a_located_usage_error_and_nothing_is_written(example: Project) -> None:
    path = example.root / "guidelines" / "refunds.md"
    before = path.read_bytes()
    bad = "situation.fixtures[?tool=='get_order'"
    result = _cli(
        example, "label", "guideline", "bump", "refunds", "-m", WHY, "--relabel-where", bad
    )
    assert result.exit_code == 2, result.output
    assert "--relabel-where: column 38: not a JMESPath expression" in result.output
    assert f"Got '{bad}'." in result.output
    assert "Traceback" not in result.output
    assert path.read_bytes() == before
    with pytest.raises(UsageError, match="one line"):
        compile_selector("a\nb")


def test_dry_run_previews_count_and_sample_and_writes_nothing(example: Project) -> None:
    path = example.root / "guidelines" / "refunds.md"
    before = path.read_bytes()
    args = ("label", "guideline", "bump", "refunds", "-m", WHY, "--relabel-where", RULE)
    result = _cli(example, *args, "--dry-run")
    assert result.exit_code == 0, result.output
    assert "refunds: the rule selects 28 of 105 rows labelled under refunds-g7" in result.output
    assert "e.g. refunds-002, refunds-004, refunds-009," in result.output
    assert "… and 18 more" in result.output
    assert path.read_bytes() == before


def test_the_selector_is_stored_with_the_new_version(example: Project) -> None:
    bump_guideline(example, "refunds", WHY, relabel_where=RULE)
    guideline = read_guideline(example, "refunds")
    assert guideline.version == "refunds-g8"
    assert rules_of(guideline.text) == {8: RULE}
    assert "only the rows relabel_where_g8 selects go back" in guideline.changelog[0]
    assert rules_since(guideline.text, "refunds", "refunds-g7", "refunds-g8") == (
        RelabelRule("refunds-g8", RULE),
    )
    # refunds-g7 came without a selector: rows labelled under refunds-g6 all go back.
    assert rules_since(guideline.text, "refunds", "refunds-g6", "refunds-g8") is None


def test_relabel_under_sends_back_only_the_rows_the_rule_touches(example: Project) -> None:
    labellers = ("lab-03", "lab-07", "lab-02")
    bump_guideline(example, "refunds", WHY, relabel_where=RULE)
    report = assign_labels(example, "refunds", labellers, relabel_under="refunds-g7", dry_run=True)
    assert (report.relabel, report.relabel_labelled) == (28, 105)
    assert report.relabel_rules == (RelabelRule("refunds-g8", RULE),)
    sent = {a.case_id for a in report.assignments}
    assert "refunds-002" in sent and len(report.relabel_sample) == 10
    result = _cli(
        example, "label", "assign", "refunds", "--relabel-under", "refunds-g7",
        "--labellers", ",".join(labellers), "--dry-run",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "28 of 105 cases labelled under the old guideline are touched by the rule" in (
        " ".join(result.output.split())
    )


def test_a_bump_without_a_selector_still_sends_back_every_row(example: Project) -> None:
    bump_guideline(example, "refunds", WHY)
    report = assign_labels(
        example, "refunds", ("lab-03", "lab-07"), relabel_under="refunds-g7", dry_run=True
    )
    assert (report.relabel, report.relabel_labelled, report.relabel_rules) == (105, 105, ())


def _case(outcome: str = "clarify") -> Case:
    return Case.model_validate(
        {
            "id": "r-1",
            "slice": "refunds",
            "split": "dev",
            "source": "hand",
            "situation": {
                "goal": "g",
                "turns": [{"role": "user", "content": "where is my refund?"}],
                "fixtures": [
                    {
                        "tool": "get_order",
                        "response": {"status": "partially_shipped", "age_days": 31},
                    }
                ],
            },
            "label": {"outcome": outcome, "guideline_version": "refunds-g7"},
            "oracle": {"class": "human"},
        }
    )


def test_selection_follows_jmespath_truth() -> None:
    case = _case()
    assert touched_by(case, (RelabelRule("refunds-g8", RULE),))
    assert not touched_by(case, (RelabelRule("refunds-g8", RULE.replace("30", "31")),))
    # 0 is true in JMESPath; an empty list is not.
    assert touched_by(case, (RelabelRule("refunds-g8", "`0`"),))
    assert not touched_by(case, (RelabelRule("refunds-g8", "situation.fixtures[?tool=='x']"),))


def test_labellers_never_see_a_selector_that_reads_the_old_label() -> None:
    case = _case()
    reads = RelabelRule("refunds-g8", "label.outcome == 'clarify'")
    plain = RelabelRule("refunds-g8", RULE)
    assert reads.reads_label and not plain.reads_label
    line = sheet_line(
        "label", "refunds", "lab-1", case, "refunds-g8", {}, sent_back_by=(reads, plain)
    )
    assert line["sent_back_by"] == [
        {"guideline_version": "refunds-g8", "rule": None},
        {"guideline_version": "refunds-g8", "rule": RULE},
    ]
    assert "clarify" not in str(line)
    assert "sent_back_by" not in sheet_line("label", "refunds", "lab-1", case, "refunds-g8", {})
