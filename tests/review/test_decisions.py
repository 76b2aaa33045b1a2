"""`casework review decide --decisions FILE`: items of any kind decided in bulk, all or nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from casework.dataset import load_dataset
from casework.errors import InputErrors
from casework.project import Project, load_project
from casework.review import (
    DISAGREEMENT,
    LEAKAGE_PAIR,
    ReviewTask,
    decide_from_file,
    decide_task,
    list_tasks,
)
from casework.review._decisions import read_decisions
from casework.review._queue import sync_disagreements
from casework.schema import Case
from tests.leakage.corpora import case_row
from tests.review.test_disagreement import NOW, adjudications, contested
from tests.review.test_queue import DECISIONS, _flags, _project, ok, run, scanned

EXAMPLES = Path(__file__).parents[2] / "examples" / "refunds" / "demo"


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def _decided(project: Project) -> list[tuple[Any, ...]]:
    return sorted(
        (t.kind, t.subject, t.decision, t.reviewer, t.reason, t.data, t.seconds_on_screen)
        for t in list_tasks(project, status="decided")
    )


def _queue_pairs_and_cases(root: Path, tmp_path: Path) -> dict[str, ReviewTask]:
    """Open leakage-pair items (by pair) and two generated-case items (by case id)."""
    scanned(root)
    ok(run(root, "review", "sync", "support"))
    drafts = [case_row(f"g-{i}", "dev", text) for i, text in enumerate(("parcel", "blender"), 1)]
    cases_file = _write(tmp_path / f"{root.name}-generated.jsonl", drafts)
    ok(run(root, "review", "add-cases", "support", str(cases_file), "--source", "gen-v1"))
    out: dict[str, ReviewTask] = {}
    for t in list_tasks(load_project(root), status="open"):
        if t.kind == LEAKAGE_PAIR:
            out[t.payload["left"]["case_id"] + "~" + t.payload["right"]["case_id"]] = t
        else:
            out[t.subject] = t
    return out


def _lines() -> list[dict[str, Any]]:
    edited = case_row("g-2", "dev", "the blender I bought is broken")
    pairs = [
        {"item": f"{left}~{right}", "decision": decision, "reason": "seen"}
        for (left, right), (_, decision) in DECISIONS.items()
    ]
    return [
        *pairs,
        {"item": "g-1", "decision": "accept"},
        {"item": "g-2", "decision": "edit", "case": edited},
    ]


def test_bulk_decisions_equal_one_by_one_decisions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    one, bulk = _project(tmp_path / "one"), _project(tmp_path / "bulk")
    one_items, bulk_items = (
        _queue_pairs_and_cases(one, tmp_path),
        _queue_pairs_and_cases(bulk, tmp_path),
    )
    lines = _lines()
    for line in lines:
        decide_task(
            load_project(one),
            one_items[line["item"]].id,
            line["decision"],
            reviewer="rev-1",
            reason=line.get("reason"),
            seconds=12.5,
            data={"case": line["case"]} if "case" in line else None,
        )
    file_lines = [
        {**line, "item": bulk_items[line["item"]].id, "reviewer": "rev-1", "seconds": 12.5}
        for line in lines
    ]
    decisions = _write(bulk / "decisions.jsonl", file_lines)
    done = ok(run(bulk, "review", "decide", "--decisions", str(decisions)))
    assert done.stdout.splitlines() == [
        "decided 6 item(s): 1 generated-case accept, 1 generated-case edit, "
        "1 leakage-pair keep, 1 leakage-pair move-left, 1 leakage-pair move-right, "
        "1 leakage-pair template",
        "apply decided work: casework dataset apply support -m MSG",
    ]
    assert _decided(load_project(bulk)) == _decided(load_project(one))
    assert len(_decided(load_project(bulk))) == 6
    assert _flags(bulk) == _flags(one)
    assert (bulk / "datasets/support/cases.jsonl").read_bytes() == (
        one / "datasets/support/cases.jsonl"
    ).read_bytes()
    assert load_dataset(load_project(bulk), "support").case("g-2") == Case.model_validate(
        case_row("g-2", "dev", "the blender I bought is broken")
    )


def test_bulk_disagreements_equal_one_by_one_and_store_what_adjudicate_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    one, bulk = contested(tmp_path / "one"), contested(tmp_path / "bulk")
    label = {"outcome": "clarify", "required_tools": [], "forbidden_tools": [], "answer_facts": []}
    for project in (one, bulk):
        sync_disagreements(project, "refunds")
    ids = {t.subject: t.id for t in list_tasks(one, kind=DISAGREEMENT)}
    decide_task(
        one, ids["b-4"], "merge", reviewer="adj-1", data={"fields": {"outcome": "B"}}, now=NOW
    )
    decide_task(
        one, ids["a-1"], "write", reviewer="adj-1", data={"label": label, "gap_note": "g"}, now=NOW
    )
    lines = [
        {"item": "b-4", "decision": "merge", "fields": {"outcome": "B"}, "reviewer": "adj-1"},
        {"item": "a-1", "decision": "write", "label": label, "gap_note": "g", "reviewer": "adj-1"},
    ]
    decided = decide_from_file(bulk, _write(tmp_path / "d.jsonl", lines), now=NOW)
    assert [(t.subject, t.decision) for t in decided] == [("b-4", "merge"), ("a-1", "write")]
    assert adjudications(bulk) == adjudications(one) and len(adjudications(bulk)) == 2
    assert _decided(bulk) == _decided(one)


def test_a_bad_line_refuses_every_line_located(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    project = contested(tmp_path / "proj")
    monkeypatch.chdir(project.root)
    sync_disagreements(project, "refunds")
    ids = {t.subject: t.id for t in list_tasks(project, kind=DISAGREEMENT)}
    decisions = _write(
        project.root / "d.jsonl",
        [
            {"item": ids["a-1"], "decision": "A", "reviewer": "adj-1"},
            {"item": "b-4", "decision": "B", "reviewer": "lab-alice"},
            {"item": 999, "decision": "A", "reviewer": "adj-1"},
            {"item": "a-1", "decision": "B", "reviewer": "adj-1"},
            {"item": "b-4", "decision": "merge", "reviewer": "adj-2"},
        ],
    )
    with pytest.raises(InputErrors) as caught:
        decide_from_file(project, decisions)
    assert str(caught.value).splitlines() == [
        "d.jsonl:2: reviewer: lab-alice labelled case 'b-4'; an adjudicator labelled neither side.",
        "d.jsonl:3: item: no open review item has this id or case id. Got 999.",
        "d.jsonl:4: item: decided twice in this file. Got 'a-1'.",
        "d.jsonl:5: item: decided twice in this file. Got 'b-4'.",
    ]
    refused = run(project.root, "review", "decide", "--decisions", str(decisions))
    assert refused.exit_code == 1
    assert refused.stderr.splitlines()[0].startswith("d.jsonl:2: reviewer: lab-alice labelled")
    assert all(t.status == "open" for t in list_tasks(project))
    assert adjudications(project) == []

    malformed = _write(
        project.root / "m.jsonl", [{"item": 1, "decision": "maybe", "reviewer": "r"}]
    )
    with pytest.raises(InputErrors) as bad:
        decide_from_file(project, malformed)
    assert str(bad.value).startswith(
        "m.jsonl:1: decision: must be a decision of some review kind (A, B, accept, "
    )
    both = run(project.root, "review", "decide", "1", "A", "--decisions", str(decisions))
    assert both.exit_code == 2
    assert "--decisions decides from the file alone: give no ID or options." in both.stderr
    neither = run(project.root, "review", "decide", "1", "A")
    assert neither.exit_code == 2 and "give ID and --reviewer" in neither.stderr


def test_the_author_decisions_format_works_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("CASEWORK_DB_URL", raising=False)
    for name in ("author_decisions.jsonl", "author_decisions_2.jsonl"):
        read = read_decisions(EXAMPLES / name, name)
        assert len(read.lines) == len((EXAMPLES / name).read_text().splitlines()) > 0
        assert {line.decision for line in read.lines} <= {"accept", "edit", "reject"}
    root = _project(tmp_path / "proj")
    _queue_pairs_and_cases(root, tmp_path)
    # The keys and order of a line of examples/refunds/demo/author_decisions.jsonl.
    edited = case_row("g-2", "dev", "the blender I bought is broken")
    lines = [
        {
            "decision": "reject",
            "item": "g-1",
            "reason": "too vague",
            "reviewer": "rev-02",
            "seconds": 95,
        },
        {"case": edited, "decision": "edit", "item": "g-2", "reviewer": "rev-05", "seconds": 140},
    ]
    decisions = _write(root / "author_decisions.jsonl", lines)
    done = ok(run(root, "review", "decide", "--decisions", str(decisions)))
    assert done.stdout.startswith(
        "decided 2 item(s): 1 generated-case edit, 1 generated-case reject\n"
    )
    tree = load_dataset(load_project(root), "support")
    assert tree.case("g-1") is None and tree.case("g-2") == Case.model_validate(edited)
    generated = list_tasks(load_project(root), kind="generated-case")
    assert {(t.subject, t.reason, t.reviewer, t.seconds_on_screen) for t in generated} == {
        ("g-1", "too vague", "rev-02", 95.0),
        ("g-2", None, "rev-05", 140.0),
    }
