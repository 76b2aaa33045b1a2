"""The adjudication queue: order by slice kappa, names hidden, decisions equal to sheet imports, gaps."""

from __future__ import annotations

import importlib
import json
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from sklearn.metrics import cohen_kappa_score

from casework.cli import cli
from casework.cli._moved import note_text
from casework.dataset import load_dataset, release
from casework.errors import DecisionConflict, UsageError, WorkbenchError
from casework.labelling import (
    FinalLabel,
    adjudicate,
    adjudication_queue,
    assign_labels,
    export_sheets,
    import_sheets,
    labelling_status,
    list_gaps,
    release_labels,
)
from casework.labelling.store import load_work
from casework.project import Project, load_project
from casework.schema import LabelRecord
from casework.workbench import open_workbench
from tests.factories import write_lines
from tests.labelling.builders import answer_jsonl, draft, make_project, read_jsonl, workbench_url
from tests.output_schema import printed

__all__ = ["workbench_url"]

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
LABELLERS = ("lab-14", "lab-22", "lab-31")
# (case, slice, first label, second label): kappa 7/11 on refunds, 1/2 on status.
ROWS = [
    ("a-1", "refunds", "resolve", "escalate"),
    ("a-2", "refunds", "clarify", "clarify"),
    ("a-3", "refunds", "resolve", "resolve"),
    ("a-4", "refunds", "escalate", "escalate"),
    ("b-1", "status", "resolve", "resolve"),
    ("b-2", "status", "resolve", "resolve"),
    ("b-3", "status", "escalate", "escalate"),
    ("b-4", "status", "resolve", "escalate"),
]
VERSIONS = {"refunds": "refunds-g7", "status": "status-g1"}


def _label(case_id: str, slice_name: str, who: str, role: str, outcome: str) -> LabelRecord:
    return LabelRecord(
        case_id=case_id,
        labeller=who,
        role=role,
        overlap_reason="calibration" if role == "second" else None,
        outcome=outcome,
        guideline_version=VERSIONS[slice_name],
        labelled_at=NOW + timedelta(minutes=1 if role == "second" else 0),
    )


@pytest.fixture
def kappa_project(tmp_path: Path, workbench_url: str, monkeypatch: pytest.MonkeyPatch) -> Project:
    """Two slices of released raw labels with two disagreements and no adjudicator yet."""
    root = make_project(tmp_path / "proj")
    write_lines(
        root / "datasets" / "refunds" / "cases.jsonl",
        [draft(case_id, slice=slice_name) for case_id, slice_name, _, _ in ROWS],
    )
    monkeypatch.chdir(root)
    project = load_project(root)
    labels = [
        record
        for case_id, slice_name, first, second in ROWS
        for record in (
            _label(case_id, slice_name, "lab-alice", "first", first),
            _label(case_id, slice_name, "lab-bob", "second", second),
        )
    ]
    release(project, "refunds", load_dataset(project, "refunds").cases, "labels", labels=labels)
    return project


def test_queue_orders_lowest_kappa_slice_first(kappa_project: Project) -> None:
    queue = adjudication_queue(kappa_project, "refunds")
    assert [(e.case_id, e.slice) for e in queue.entries] == [("b-4", "status"), ("a-1", "refunds")]
    for entry in queue.entries:
        first = [f for _, s, f, _ in ROWS if s == entry.slice]
        second = [b for _, s, _, b in ROWS if s == entry.slice]
        assert entry.slice_kappa == pytest.approx(cohen_kappa_score(first, second))
        assert entry.slice_rows == 4
    assert [e.slice_kappa for e in queue.entries] == pytest.approx([0.5, 7 / 11])
    b4 = queue.entries[0]
    assert [(s.name, s.outcome) for s in b4.labels] == [("A", "resolve"), ("B", "escalate")]
    assert b4.differs == ("outcome",) and not b4.assigned
    assert b4.situation["turns"][0]["content"] == "My mug from order ORD-b-4 arrived broken."


def test_names_are_hidden_unless_revealed(kappa_project: Project) -> None:
    hidden = json.dumps(adjudication_queue(kappa_project, "refunds").as_json())
    assert "lab-alice" not in hidden and "lab-bob" not in hidden
    cli_out = CliRunner().invoke(cli, ["adjudicate", "queue", "refunds", "--format", "json"])
    assert cli_out.exit_code == 0, cli_out.output
    shown = printed("adjudication-queue", cli_out.stdout)
    assert [e["case_id"] for e in shown["entries"]] == ["b-4", "a-1"]
    assert all("names" not in e for e in shown["entries"])
    assert "lab-alice" not in cli_out.stdout and "lab-bob" not in cli_out.stdout
    revealed = adjudication_queue(kappa_project, "refunds", reveal_names=True)
    assert revealed.entries[0].names == {"A": "lab-alice", "B": "lab-bob"}
    assert "lab-alice" in json.dumps(revealed.as_json())


def test_decisions_are_checked_and_a_labeller_cannot_adjudicate(kappa_project: Project) -> None:
    with pytest.raises(UsageError, match="lab-alice labelled case 'b-4'"):
        adjudicate(kappa_project, "refunds", "b-4", adjudicator="lab-alice", choice="A")
    with pytest.raises(UsageError, match=r"the labels differ on outcome: .*missing: outcome"):
        adjudicate(kappa_project, "refunds", "b-4", adjudicator="adj-1", choice="merge", fields={})
    with pytest.raises(UsageError, match="not a declared tool") as undeclared:
        adjudicate(
            kappa_project,
            "refunds",
            "b-4",
            adjudicator="adj-1",
            choice="write",
            label=FinalLabel("resolve", ("teleport",)),
        )
    assert undeclared.value.param == "required"
    merge = CliRunner().invoke(
        cli,
        ["adjudicate", "decide", "refunds", "b-4", "--by", "adj-1", "--merge", "answer_facts=B"],
    )
    assert merge.exit_code == 2
    assert merge.stderr == (
        note_text("adjudicate decide", "review decide")
        + "\n--merge: the labels differ on outcome: say which side each comes from (missing: outcome).\n"
    )
    with pytest.raises(UsageError, match="is ready: there is no disagreement"):
        adjudicate(kappa_project, "refunds", "b-1", adjudicator="adj-1", choice="A")
    done = adjudicate(
        kappa_project, "refunds", "b-4", adjudicator="adj-1", choice="B", seconds=42, now=NOW
    )
    assert done.assigned_now and done.label == FinalLabel("escalate")
    assert [e.case_id for e in adjudication_queue(kappa_project, "refunds").entries] == ["a-1"]
    assert labelling_status(kappa_project, "refunds").totals["ready"] == 8 - 1
    by_cli = CliRunner().invoke(
        cli,
        [
            "adjudicate",
            "decide",
            "refunds",
            "a-1",
            "--by",
            "adj-1",
            "--pick",
            "A",
            "--format",
            "json",
        ],
    )
    assert by_cli.exit_code == 0, by_cli.output
    decided = printed("adjudication-decided", by_cli.stdout)
    assert (decided["case_id"], decided["assigned_now"], decided["gap"]) == ("a-1", True, None)


def test_two_adjudicators_at_once_store_one_decision(
    kappa_project: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Opened once first, as a server does: Alembic's first load of the migrations is not
    # thread-safe (the revision check of open_workbench loads them).
    assert len(adjudication_queue(kappa_project, "refunds").entries) == 2
    # The package exports a function of the module's name, so the module is taken by path.
    module = importlib.import_module("casework.labelling.adjudication_queue")
    loaded = module.load_state

    def slow_load(*args: Any, **kwargs: Any) -> Any:  # both read before either writes
        state = loaded(*args, **kwargs)
        time.sleep(0.5)
        return state

    monkeypatch.setattr(module, "load_state", slow_load)
    barrier = threading.Barrier(2)
    won: list[str] = []
    lost: list[Exception] = []

    def decide(person: str, choice: str) -> None:
        barrier.wait()
        try:
            adjudicate(kappa_project, "refunds", "b-4", adjudicator=person, choice=choice)  # type: ignore[arg-type]
            won.append(person)
        except (DecisionConflict, UsageError, WorkbenchError) as exc:
            lost.append(exc)

    threads = [threading.Thread(target=decide, args=a) for a in (("adj-1", "A"), ("adj-2", "B"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert len(won) == 1 and len(lost) == 1, (won, lost)
    assert "case 'b-4'" in str(lost[0])
    with open_workbench(kappa_project) as wb, wb.session() as session:
        work = load_work(session, "refunds")
    adjudicators = [r.labeller for r in work.labels if r.role == "adjudicator"]
    assert adjudicators == won
    assert [e.case_id for e in adjudication_queue(kappa_project, "refunds").entries] == ["a-1"]


def _contested(root: Path) -> tuple[Project, str]:
    """The standard flow up to d-2 contested and assigned to an adjudicator (as in test_workflow)."""
    make_project(root)
    project = load_project(root)
    release(project, "refunds", load_dataset(project, "refunds").cases, "drafts")
    assign_labels(project, "refunds", LABELLERS, now=NOW)
    out = root / "sheets"
    export_sheets(project, "refunds", out)
    resolve = {
        "outcome": "resolve",
        "required": ["get_order", "issue_refund"],
        "answer_facts": ["Refund issued"],
    }
    sheets = []
    for jsonl in sorted(out.glob("*.labels.jsonl")):
        answers = {}
        for line in read_jsonl(jsonl):
            second = line["case_id"] == "d-2" and _role(project, line["case_id"], jsonl) == "second"
            answers[line["case_id"]] = (
                {"outcome": "escalate", "required": ["escalate_to_human"]} if second else resolve
            )
        answer_jsonl(jsonl, answers)
        sheets.append(jsonl)
    import_sheets(project, sheets, now=NOW)
    [adjudication] = assign_labels(project, "refunds", LABELLERS, now=NOW).assignments
    return project, adjudication.labeller


def _role(project: Project, case_id: str, sheet: Path) -> str:
    labeller = sheet.name.split(".")[1]
    with open_workbench(project) as wb, wb.session() as session:
        work = load_work(session, "refunds")
    return next(
        s.assignment.role
        for s in work.assignments
        if (s.assignment.case_id, s.assignment.labeller) == (case_id, labeller)
    )


def _released(project: Project) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    release_labels(project, "refunds", "adjudicated", now=NOW)
    data = load_dataset(project, "refunds")
    d2 = data.case("d-2")
    assert d2 is not None and d2.label is not None
    raw = [r.model_dump(mode="json", exclude={"labelled_at"}) for r in data.labels]
    return d2.label.model_dump(mode="json"), raw


CHOICES: dict[str, tuple[dict[str, Any], list[str]]] = {
    "pick-a": (
        {
            "outcome": "resolve",
            "required": ["get_order", "issue_refund"],
            "answer_facts": ["Refund issued"],
        },
        ["--pick", "A"],
    ),
    "pick-b": ({"outcome": "escalate", "required": ["escalate_to_human"]}, ["--pick", "B"]),
    "merge": (
        {
            "outcome": "escalate",
            "required": ["get_order", "issue_refund"],
            "answer_facts": ["Refund issued"],
        },
        ["--merge", "outcome=B", "--merge", "required_tools=A"],
    ),
    "write": (
        {
            "outcome": "escalate",
            "required": ["get_order", "escalate_to_human"],
            "forbidden": ["issue_refund"],
        },
        [
            "--outcome",
            "escalate",
            "--required",
            "get_order",
            "--required",
            "escalate_to_human",
            "--forbidden",
            "issue_refund",
        ],
    ),
}


@pytest.mark.parametrize("choice", sorted(CHOICES))
def test_queue_decisions_equal_adjudication_sheet_imports(
    choice: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    sheet_answer, options = CHOICES[choice]
    old, adjudicator = _contested(tmp_path / "old")
    monkeypatch.chdir(tmp_path / "old")
    [sheet] = export_sheets(old, "refunds", tmp_path / "adj", kind="adjudication").files
    answer_jsonl(sheet.jsonl, {"d-2": sheet_answer})
    import_sheets(old, [sheet.jsonl], kind="adjudication", now=NOW)

    new, same = _contested(tmp_path / "new")
    assert same == adjudicator
    monkeypatch.chdir(tmp_path / "new")
    decided = CliRunner().invoke(
        cli,
        [
            "adjudicate",
            "decide",
            "refunds",
            "d-2",
            "--by",
            adjudicator,
            *options,
            "--seconds",
            "30",
        ],
    )
    assert decided.exit_code == 0, decided.output
    assert decided.stdout.endswith("apply: casework dataset apply refunds -m MSG\n")
    assert _released(new) == _released(old)


def test_a_guideline_gap_is_listed_and_addressed_by_the_bump(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    project, adjudicator = _contested(tmp_path / "proj")
    monkeypatch.chdir(tmp_path / "proj")
    runner = CliRunner()

    def run(*args: str) -> Result:
        result = runner.invoke(cli, list(args))
        assert result.exit_code == 0, result.output
        return result

    note = "Broken on arrival vs. broken later: the guideline does not say"
    run("adjudicate", "decide", "refunds", "d-2", "--by", adjudicator, "--pick", "B", "--gap", note)
    [gap] = json.loads(
        run("label", "guideline", "gaps", "--slice", "refunds", "--format", "json").stdout
    )
    assert (gap["slice"], gap["guideline_version"], gap["case_id"], gap["note"], gap["open"]) == (
        "refunds",
        "refunds-g7",
        "d-2",
        note,
        True,
    )
    assert gap["author"] == adjudicator
    assert "no guideline gap notes" in run("label", "guideline", "gaps", "--slice", "status").stdout
    bumped = run("label", "guideline", "bump", "refunds", "-m", "Damage on arrival is refunded")
    assert bumped.stdout.startswith("refunds: refunds-g7 -> refunds-g8")
    assert "guideline gap notes addressed by refunds-g8:" in bumped.stdout
    assert f"#{gap['id']} {adjudicator} (refunds/d-2): {note}" in bumped.stdout
    assert list_gaps(project, open_only=True) == []
    [after] = list_gaps(project)
    assert after.addressed_version == "refunds-g8" and not after.open
    assert "no guideline gap notes" in run("label", "guideline", "gaps", "--open").stdout
    again = run("label", "guideline", "bump", "refunds", "-m", "Another rule")
    assert "guideline gap notes addressed" not in again.stdout
