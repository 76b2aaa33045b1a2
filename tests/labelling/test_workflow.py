"""The labelling workflow against a real workbench (SQLite, and PostgreSQL when configured)."""

from __future__ import annotations

import csv
import json
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import pytest

from casework.agreement import agreement_report
from casework.dataset import load_dataset, release, select_cases
from casework.errors import InputErrors, UsageError, WorkbenchError
from casework.labelling import (
    assign_labels,
    export_sheets,
    import_sheets,
    labelling_status,
    list_disagreements,
    release_labels,
)
from casework.labelling.guidelines import bump_guideline
from casework.labelling.policy import keeps_second_label
from casework.labelling.store import Work, load_work
from casework.project import Project
from casework.schema import Case
from casework.workbench import open_workbench
from tests.factories import write_lines
from tests.labelling.builders import answer_csv, answer_jsonl, draft, read_jsonl

LABELLERS = ("lab-14", "lab-22", "lab-31")
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
RESOLVE = {
    "outcome": "resolve",
    "required": ["get_order", "issue_refund"],
    "answer_facts": ["Refund issued"],
}


def work(project: Project) -> Work:
    wb = open_workbench(project)
    try:
        with wb.session() as session:
            return load_work(session, "refunds")
    finally:
        wb.close()


def roles(project: Project) -> dict[tuple[str, str], str]:
    return {
        (s.assignment.case_id, s.assignment.labeller): s.assignment.role
        for s in work(project).assignments
    }


def fill_all(
    project: Project, folder: Path, answer: Any, *, kind: str = "labels", csv_for: str = "lab-22"
) -> list[Path]:
    """Answer every exported sheet: ``answer(case_id, labeller, role)`` gives the answer (or None)."""
    held = roles(project)
    sheets = []
    for jsonl in sorted(folder.glob(f"*.{kind}.jsonl")):
        labeller = jsonl.name.split(".")[1]
        answers = {}
        for line in read_jsonl(jsonl):
            given = answer(line["case_id"], labeller, held[(line["case_id"], labeller)])
            if given is not None:
                answers[line["case_id"]] = given
        if labeller == csv_for:
            target = jsonl.with_suffix(".csv")
            answer_csv(target, answers)
        else:
            target = jsonl
            answer_jsonl(target, answers)
        sheets.append(target)
    return sheets


def test_full_flow(lab_project: Project, tmp_path: Path) -> None:
    project = lab_project
    first = assign_labels(project, "refunds", LABELLERS, now=NOW)
    assert {a.case_id for a in first.assignments} == {"d-1", "d-2", "d-3", "d-4", "u-1", "s-1"}
    assert len(first.assignments) == 12 and first.skipped == ()
    assert {c.slice: c.calibrated for c in first.calibration.values()} == {
        "refunds": False,
        "status": False,
    }

    out = tmp_path / "sheets"
    exported = export_sheets(project, "refunds", out)
    assert sorted(f.labeller for f in exported.files) == list(LABELLERS)
    assert sum(f.rows for f in exported.files) == 12

    def blind(case_id: str, labeller: str, role: str) -> dict[str, Any]:
        if case_id == "d-2" and role == "second":
            return {"outcome": "escalate", "required": ["escalate_to_human"]}
        return RESOLVE

    sheets = fill_all(project, out, blind)
    imported = import_sheets(project, sheets, now=NOW)
    assert imported.total == 12 and imported.unanswered == 0

    status = labelling_status(project, "refunds")
    assert status.totals == {"contested": 1, "ready": 5, "done": 2}
    [contested] = list_disagreements(project, "refunds")
    assert (contested.case_id, contested.differs, contested.adjudicator) == (
        "d-2",
        ("outcome", "required_tools"),
        None,
    )

    second = assign_labels(project, "refunds", LABELLERS, now=NOW)
    [adjudication] = second.assignments
    assert adjudication.role == "adjudicator"
    assert adjudication.labeller not in {r.labeller for r in contested.labels}
    assert second.waiting == 5

    adj_dir = tmp_path / "adjudication"
    adj = export_sheets(project, "refunds", adj_dir, kind="adjudication")
    [sheet] = adj.files
    [line] = read_jsonl(sheet.jsonl)
    assert line["labels"] == [
        {
            "name": "A",
            "outcome": "resolve",
            "required_tools": ["get_order", "issue_refund"],
            "forbidden_tools": [],
            "answer_facts": ["Refund issued"],
        },
        {
            "name": "B",
            "outcome": "escalate",
            "required_tools": ["escalate_to_human"],
            "forbidden_tools": [],
            "answer_facts": [],
        },
    ]
    assert line["differs"] == ["outcome", "required_tools"]
    assert not any(lab in json.dumps(line) for lab in LABELLERS if lab != adjudication.labeller)
    answer_jsonl(
        sheet.jsonl,
        {
            "d-2": {
                "outcome": "escalate",
                "required": ["get_order", "escalate_to_human"],
                "forbidden": ["issue_refund"],
            }
        },
    )
    assert import_sheets(project, [sheet.jsonl], kind="adjudication", now=NOW).total == 1

    result = release_labels(project, "refunds", "first labels", now=NOW)
    assert result.record is not None and result.record.number == 2
    assert result.record.changes == [
        "labelled 5 cases",
        "1 case decided by adjudication",
        "added 11 raw labels to labels.jsonl",
    ]
    assert [(h.case_id, h.reason) for h in result.held] == [
        ("u-1", "an unsatisfiable case cannot have outcome 'resolve'")
    ]
    data = load_dataset(project, "refunds")
    assert data.version is not None and data.version.number == 2
    d2 = data.case("d-2")
    assert d2 is not None and d2.label is not None
    assert d2.label.adjudicated and d2.label.labellers[-1] == adjudication.labeller
    assert (d2.label.outcome, [t.name for t in d2.label.forbidden_tools]) == (
        "escalate",
        ["issue_refund"],
    )
    assert len(d2.label.labellers) == 3
    assert len(data.labels) == 11 and all(r.case_id != "u-1" for r in data.labels)
    assert data.case("u-1").label is None  # type: ignore[union-attr]
    # Agreement is recomputable from the released files alone.
    report = agreement_report(data.cases, data.labels)
    refunds = next(s for s in report.slices if s.slice == "refunds")
    assert (refunds.rows, refunds.disagreeing_case_ids) == (4, ("d-2",))
    # Nothing left to release: a second release is a no-op.
    assert release_labels(project, "refunds", "again").record is None

    bump_guideline(
        project, "refunds", "Damaged items over 30 days go to a person", today=date(2026, 12, 1)
    )
    stale = [c.id for c in select_cases(data.cases, labelled_under="refunds-g7")]
    assert stale == ["d-1", "d-2", "d-3", "d-4", "r-1", "r-2"]
    with pytest.raises(UsageError) as current:
        assign_labels(project, "refunds", LABELLERS, relabel_under="status-g1")
    assert str(current.value) == (
        "relabel_under: status-g1 is the current guideline of slice 'status'. "
        "Bump the guideline first."
    )
    relabel = assign_labels(project, "refunds", LABELLERS, relabel_under="refunds-g7", now=NOW)
    assert relabel.relabel == 6
    assert {a.case_id for a in relabel.assignments} == set(stale)
    assert {a.role for a in relabel.assignments} == {"first", "second"}  # g8 calibrates afresh
    old_holders = {
        r.case_id: {x.labeller for x in data.labels if x.case_id == r.case_id} for r in data.labels
    }
    for case_id in ("d-1", "d-3"):
        fresh = [a.labeller for a in relabel.assignments if a.case_id == case_id]
        assert set(fresh) - old_holders[case_id], "someone new relabels each row"

    relabel_dir = tmp_path / "relabel"
    relabel_sheets = export_sheets(project, "refunds", relabel_dir)
    for f in relabel_sheets.files:
        assert all(line["guideline_version"] == "refunds-g8" for line in read_jsonl(f.jsonl))
    escalate = {
        "outcome": "escalate",
        "required": ["get_order", "escalate_to_human"],
        "forbidden": ["issue_refund"],
    }
    filled = fill_all(project, relabel_dir, lambda case_id, labeller, role: escalate)
    assert import_sheets(project, filled, now=NOW).total == 12
    third = release_labels(project, "refunds", "relabel under refunds-g8", now=NOW)
    assert third.record is not None and third.record.number == 3
    assert third.record.changes == ["relabelled 6 cases", "added 12 raw labels to labels.jsonl"]
    assert third.record.guideline_versions == ["refunds-g8", "status-g1"]
    after = load_dataset(project, "refunds")
    assert select_cases(after.cases, labelled_under="refunds-g7") == []
    assert {r.guideline_version for r in after.labels} == {"refunds-g7", "refunds-g8", "status-g1"}
    r1 = after.case("r-1")
    assert r1 is not None and r1.label is not None and r1.label.outcome == "escalate"


def test_import_rejects_every_bad_line_and_stores_nothing(
    lab_project: Project, tmp_path: Path
) -> None:
    project = lab_project
    assign_labels(project, "refunds", LABELLERS, now=NOW)
    out = tmp_path / "sheets"
    export_sheets(project, "refunds", out, labellers=("lab-14",))
    sheet = out / "refunds.lab-14.labels.jsonl"
    lines = read_jsonl(sheet)
    assert len(lines) >= 3
    first, second, third = lines[0], lines[1], lines[2]
    good = {**first, "outcome": "resolve"}
    bad_lines = [
        good,
        {**second, "case_id": "nope", "outcome": "resolve"},
        {**second, "outcome": "resolve", "required": {**second["required"], "cancel_order": True}},
        {**third, "outcome": "resolve", "guideline_version": "refunds-g6"},
        {**good},
        {**third, "labeller": "lab-99", "outcome": "resolve"},
        {
            **third,
            "labeller": "lab-31",
            "outcome": "refuse",
            "required": {"issue_refund": "yes"},
            "forbidden": {"issue_refund": "yes"},
        },
        {**third, "labeller": "lab-77", "answer_facts": ["Refund issued"]},
        {**third, "dataset": "returns", "outcome": "resolve"},
        {**third, "labeller": "lab-55", "sheet": "adjudication", "outcome": "resolve"},
    ]
    returned = project.root / "returned.jsonl"
    returned.write_text("".join(json.dumps(line) + "\n" for line in bad_lines))
    with pytest.raises(InputErrors) as info:
        import_sheets(project, [returned], now=NOW)
    first_id, third_id = first["case_id"], third["case_id"]
    holds_third = {lab for (case_id, lab) in roles(project) if case_id == third_id}
    # Line 7 names lab-31 on lab-14's sheet: when lab-31 holds that case it is an impersonation.
    lab31_line = (
        [
            "returned.jsonl:7: labeller: this line was not exported for lab-31 (its signature does "
            "not match); everyone returns the sheet exported for them. Got 'lab-31'."
        ]
        if "lab-31" in holds_third
        else [
            f"returned.jsonl:7: labeller: not assigned case '{third_id}' under refunds-g7. Got 'lab-31'."
        ]
    )
    assert str(info.value).splitlines() == [
        "returned.jsonl:2: case_id: no case with this id in dataset 'refunds'. Got 'nope'.",
        "returned.jsonl:3: required.cancel_order: not a declared tool (declared: get_order, issue_refund, escalate_to_human). Got 'cancel_order'.",
        "returned.jsonl:4: guideline_version: must be the current guideline of slice 'refunds', refunds-g7 (export a fresh sheet after a guideline bump). Got 'refunds-g6'.",
        f"returned.jsonl:5: case_id: duplicate submission: lab-14 already answered this case at returned.jsonl:1. Got '{first_id}'.",
        f"returned.jsonl:6: labeller: not assigned case '{third_id}' under refunds-g7. Got 'lab-99'.",
        *lab31_line,
        "returned.jsonl:7: forbidden.issue_refund: a tool cannot be both required and forbidden. Got 'yes'.",
        f"returned.jsonl:8: labeller: not assigned case '{third_id}' under refunds-g7. Got 'lab-77'.",
        "returned.jsonl:8: outcome: field required on an answered line (resolve, clarify, refuse or escalate).",
        "returned.jsonl:9: dataset: no such dataset (datasets: refunds). Got 'returns'.",
        "returned.jsonl:10: sheet: this is an adjudication sheet; import it as adjudication answers. Got 'adjudication'.",
    ]
    assert work(project).labels == ()
    assert not any(s.assignment.done for s in work(project).assignments)
    # The one good line goes in alone, once; the same sheet again is a duplicate submission.
    one = project.root / "one.jsonl"
    one.write_text(json.dumps(good) + "\n")
    assert import_sheets(project, [one], now=NOW).total == 1
    with pytest.raises(InputErrors) as dup:
        import_sheets(project, [one], now=NOW)
    assert str(dup.value) == (
        f"one.jsonl:1: case_id: duplicate submission: lab-14's label for this case is already stored. Got '{first_id}'."
    )


def test_calibrated_slice_switches_to_one_labeller_plus_audit(
    lab_project: Project, tmp_path: Path
) -> None:
    project = lab_project
    assign_labels(project, "refunds", LABELLERS, now=NOW)
    out = tmp_path / "sheets"
    export_sheets(project, "refunds", out)
    outcomes = {
        "d-1": "resolve",
        "d-2": "escalate",
        "d-3": "refuse",
        "d-4": "clarify",
        "u-1": "refuse",
        "s-1": "clarify",
    }
    sheets = fill_all(project, out, lambda case_id, labeller, role: {"outcome": outcomes[case_id]})
    import_sheets(project, sheets, now=NOW)
    release_labels(project, "refunds", "calibration labels", now=NOW)
    data = load_dataset(project, "refunds")
    extra = [draft(f"n-{i:02d}") for i in range(40)]
    write_lines(
        project.dataset_dir("refunds") / "cases.jsonl",
        [c.model_dump(mode="json", by_alias=True, exclude_defaults=True) for c in data.cases]
        + extra,
    )
    release(project, "refunds", load_dataset(project, "refunds").cases, "new drafts")
    report = assign_labels(project, "refunds", LABELLERS, now=NOW)
    cal = report.calibration["refunds"]
    assert (cal.rows, cal.kappa, cal.calibrated) == (5, 1.0, True)
    seconds = {a.case_id for a in report.assignments if a.role == "second"}
    assert all(a.overlap_reason == "audit" for a in report.assignments if a.role == "second")
    assert seconds == {
        f"n-{i:02d}" for i in range(40) if keeps_second_label(f"n-{i:02d}", "test-salt", 0.2)
    }
    assert sum(a.role == "first" for a in report.assignments) == 40
    assert 0 < len(seconds) < 40


def test_guideline_bump_mid_labelling_requeues_open_work(
    lab_project: Project, tmp_path: Path
) -> None:
    project = lab_project
    assign_labels(project, "refunds", LABELLERS, now=NOW)
    out = tmp_path / "sheets"
    export_sheets(project, "refunds", out)
    bump_guideline(project, "refunds", "new rule")
    stale = export_sheets(project, "refunds", tmp_path / "again")
    assert stale.outdated == 10 and {f.labeller for f in stale.files} <= set(LABELLERS)
    assert labelling_status(project, "refunds").totals["outdated"] == 5
    sheets = fill_all(project, out, lambda case_id, labeller, role: RESOLVE)
    with pytest.raises(InputErrors) as info:
        import_sheets(project, sheets, now=NOW)
    assert "must be the current guideline of slice 'refunds', refunds-g8" in str(info.value)
    moved = assign_labels(project, "refunds", LABELLERS, now=NOW)
    assert moved.cancelled == 10
    assert {a.case_id for a in moved.assignments} == {"d-1", "d-2", "d-3", "d-4", "u-1"}
    versions = {
        s.assignment.guideline_version for s in work(project).assignments if s.slice == "refunds"
    }
    assert versions == {"refunds-g8"}


def test_dry_run_writes_nothing(lab_project: Project) -> None:
    report = assign_labels(lab_project, "refunds", LABELLERS, dry_run=True, now=NOW)
    assert len(report.assignments) == 12 and report.dry_run
    assert work(lab_project).assignments == ()


def test_release_refuses_unreleased_edits(lab_project: Project) -> None:
    path = lab_project.dataset_dir("refunds") / "cases.jsonl"
    cases = [Case.model_validate_json(line) for line in path.read_text().splitlines()]
    write_lines(
        path, [c.model_dump(mode="json", by_alias=True, exclude_defaults=True) for c in cases[:-1]]
    )
    with pytest.raises(UsageError) as info:
        release_labels(lab_project, "refunds", "labels")
    assert str(info.value) == (
        "datasets/refunds: the working tree differs from the latest release; release those edits "
        "first (release refunds with a message), then release labels."
    )


def test_a_concurrent_writer_is_reported_and_nothing_is_written(
    lab_project: Project, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = lab_project
    assign_labels(project, "refunds", LABELLERS, now=NOW)
    out = tmp_path / "sheets"
    export_sheets(project, "refunds", out, labellers=("lab-14",))
    sheet = out / "refunds.lab-14.labels.jsonl"
    answer_jsonl(sheet, {line["case_id"]: RESOLVE for line in read_jsonl(sheet)})
    import_sheets(project, [sheet], now=NOW)
    stored = work(project)
    # Another importer read the workbench before this one stored its labels.
    import casework.labelling.dataset_state as state_module

    before = Work(
        tuple(s for s in stored.assignments if not s.assignment.done)
        + tuple(
            type(s)(s.id, s.slice, type(s.assignment)(**{**s.assignment.__dict__, "done": False}))
            for s in stored.assignments
            if s.assignment.done
        ),
        (),
    )
    with monkeypatch.context() as patch:
        patch.setattr(state_module, "load_work", lambda session, name: before)
        with pytest.raises(WorkbenchError) as info:
            import_sheets(project, [sheet], now=NOW)
    assert str(info.value) == (
        "label import: someone stored the same assignments or labels at the same time; "
        "nothing was written. Run the command again."
    )
    assert len(work(project).labels) == len(stored.labels)


def _shared_case(project: Project) -> tuple[str, str, str]:
    """A case two labellers hold: (case id, first holder, second holder)."""
    holders: dict[str, list[str]] = {}
    for (case_id, labeller), role in sorted(roles(project).items()):
        if role in ("first", "second"):
            holders.setdefault(case_id, []).append(labeller)
    case_id, (one, other, *_) = next((c, h) for c, h in holders.items() if len(h) >= 2)
    return case_id, one, other


@pytest.mark.parametrize("sheet_format", ["jsonl", "csv"])
def test_a_labeller_cannot_file_a_label_under_another_labellers_name(
    lab_project: Project, tmp_path: Path, sheet_format: str
) -> None:
    project = lab_project
    assign_labels(project, "refunds", LABELLERS, now=NOW)
    case_id, mallory, alice = _shared_case(project)
    out = tmp_path / "sheets"
    export_sheets(project, "refunds", out)
    forged = out / f"refunds.{mallory}.labels.{sheet_format}"
    if sheet_format == "jsonl":
        lines = [
            {**line, "labeller": alice, "outcome": "refuse"}
            for line in read_jsonl(forged)
            if line["case_id"] == case_id
        ]
        forged.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    else:
        with forged.open(encoding="utf-8", newline="") as handle:
            header, *rows = list(csv.reader(handle))
        rows = [r for r in rows if r[header.index("case_id")] == case_id]
        rows[0][header.index("labeller")] = alice
        rows[0][header.index("outcome")] = "refuse"
        with forged.open("w", encoding="utf-8", newline="") as handle:
            csv.writer(handle).writerows([header, *rows])
    with pytest.raises(InputErrors) as info:
        import_sheets(project, [forged], now=NOW)
    line = 1 if sheet_format == "jsonl" else 2
    assert str(info.value) == (
        f"{project.relative(forged)}:{line}: labeller: this line was not exported for {alice} "
        "(its signature does not match); everyone returns the sheet exported for them. "
        f"Got '{alice}'."
    )
    assert work(project).labels == ()
    # Alice's own sheet is not refused as a duplicate: her answer is still hers to give.
    own = out / f"refunds.{alice}.labels.jsonl"
    answer_jsonl(own, {case_id: RESOLVE})
    assert import_sheets(project, [own], now=NOW).stored == {alice: 1}


def test_a_sheet_line_without_its_signature_is_refused(
    lab_project: Project, tmp_path: Path
) -> None:
    project = lab_project
    assign_labels(project, "refunds", LABELLERS, now=NOW)
    out = tmp_path / "sheets"
    export_sheets(project, "refunds", out, labellers=("lab-14",))
    sheet = out / "refunds.lab-14.labels.jsonl"
    [first, *_] = read_jsonl(sheet)
    first.pop("signature")
    sheet.write_text(json.dumps({**first, "outcome": "resolve"}) + "\n", encoding="utf-8")
    with pytest.raises(InputErrors) as info:
        import_sheets(project, [sheet], now=NOW)
    assert str(info.value).endswith(
        ":1: signature: missing; casework signs every line of a sheet for the person it was "
        "exported for (export a fresh sheet and answer on it)."
    )


def test_the_signing_secret_stays_in_the_workbench(lab_project: Project, tmp_path: Path) -> None:
    project = lab_project
    assign_labels(project, "refunds", LABELLERS, now=NOW)
    out = project.root / "sheets"
    export_sheets(project, "refunds", out)
    wb = open_workbench(project)
    try:
        with wb.session() as session:
            from casework.labelling import sheet_key

            key = sheet_key(session, create=False)
    finally:
        wb.close()
    assert key is not None and len(key) == 32
    tracked = [p for p in project.root.rglob("*") if p.is_file() and ".git" not in p.parts]
    for path in tracked:
        assert key.hex().encode() not in path.read_bytes(), path
