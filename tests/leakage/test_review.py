from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from casework.dataset import load_dataset, read_versions, release
from casework.errors import InputErrors, UsageError
from casework.leakage import decide, list_flags, resolve, scan_dataset
from casework.leakage.review import unresolved_flags
from casework.leakage.scan import find_split_pairs, shared_shingles
from casework.project import Project, load_project
from tests.leakage.corpora import project_rows, write_project

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
PLANTED = {("d-copy", "h-copy"), ("d-near", "h-near"), ("h-base", "s-near"), ("d-short", "h-short")}


def pairs_of(project: Project) -> set[tuple[str, str]]:
    return {(f.left_id, f.right_id) for f in unresolved_flags(project, "support")}


def test_scan_finds_the_planted_pairs_with_both_methods(leak_project: Project) -> None:
    cases = load_dataset(leak_project, "support").cases
    exact = find_split_pairs(cases, 0.8, method="exact")
    lsh = find_split_pairs(cases, 0.8, method="lsh")
    assert {(p.left_id, p.right_id) for p in exact.pairs} == PLANTED
    assert [(p.left_id, p.right_id, p.jaccard) for p in lsh.pairs] == [
        (p.left_id, p.right_id, p.jaccard) for p in exact.pairs
    ]
    assert exact.method == "exact" and exact.params is None
    assert lsh.params is not None and lsh.params.recall(0.8) >= 0.99
    copy = next(p for p in exact.pairs if p.left_id == "d-copy")
    assert copy.jaccard == 1.0 and copy.left_split == "dev" and copy.right_split == "holdout"


def test_shared_shingles_in_order() -> None:
    shown, count = shared_shingles("where is my refund now", "tell me where is my refund", 3)
    assert shown == ["where is my", "is my refund"]
    assert count == 2


def test_scan_records_flags_and_review_resolves_them(leak_project: Project) -> None:
    report = scan_dataset(leak_project, "support", now=NOW)
    assert report.new == 4 and report.reopened == 0 and report.gone == 0
    assert pairs_of(leak_project) == PLANTED
    by_pair = {(f.left_id, f.right_id): f for f in report.flags}
    near = by_pair[("d-near", "h-near")]
    assert near.shared_count > 10 and near.shared[0] == "hello there where"

    # Scanning again changes nothing.
    again = scan_dataset(leak_project, "support", now=NOW)
    assert (again.new, again.reopened, again.gone) == (0, 0, 0)

    decide(leak_project, "support", near.id, "move", move_id="h-near", reviewer="r1", now=NOW)
    decide(
        leak_project, "support", by_pair[("d-copy", "h-copy")].id, "move", move_id="h-copy", now=NOW
    )
    decide(leak_project, "support", by_pair[("h-base", "s-near")].id, "keep", now=NOW)
    decide(leak_project, "support", by_pair[("d-short", "h-short")].id, "template", now=NOW)
    # Decided but not applied: still unresolved for the gate.
    assert len(unresolved_flags(leak_project, "support")) == 4

    result = resolve(leak_project, "support", now=NOW)
    assert result.moved == ["h-copy", "h-near"]
    assert (result.kept, result.templates) == (1, 1)
    assert result.version is not None and result.version.number == 2
    assert result.version.changes == [
        "leakage: moved 2 rows from holdout to dev (near-duplicates across splits): h-copy, h-near",
        "leakage: kept 1 near-duplicate pair as they are",
        "leakage: marked 1 pair template-like",
    ]
    ds = load_dataset(leak_project, "support")
    assert ds.version is not None and ds.version.number == 2
    splits = {c.id: c.split for c in ds.cases}
    assert splits["h-near"] == "dev" and splits["h-copy"] == "dev" and splits["h-base"] == "holdout"
    assert unresolved_flags(leak_project, "support") == []

    # Kept and template-like pairs stay suppressed while both rows are unchanged.
    later = scan_dataset(leak_project, "support", now=NOW)
    assert later.flags == [] and later.new == 0
    assert {(f.left_id, f.right_id) for f in later.suppressed} == {
        ("h-base", "s-near"),
        ("d-short", "h-short"),
    }
    assert [f.status for f in list_flags(leak_project, "support", everything=True)] == [
        "resolved"
    ] * 4


def test_changed_row_reopens_a_template_like_pair(leak_project: Project) -> None:
    report = scan_dataset(leak_project, "support", now=NOW)
    short = next(f for f in report.flags if f.left_id == "d-short")
    for f in report.flags:
        decide(leak_project, "support", f.id, "template" if f is short else "keep", now=NOW)
    resolve(leak_project, "support", now=NOW)
    ds = load_dataset(leak_project, "support")
    edited = [
        c.model_copy(
            update={
                "situation": c.situation.model_copy(
                    update={
                        "turns": [
                            c.situation.turns[0].model_copy(
                                update={"content": "cancel my order please!"}
                            )
                        ]
                    }
                )
            }
        )
        if c.id == "h-short"
        else c
        for c in ds.cases
    ]
    release(leak_project, "support", edited, "punctuation")
    rescan = scan_dataset(leak_project, "support", now=NOW)
    assert rescan.reopened == 1
    assert [(f.left_id, f.right_id, f.status) for f in rescan.flags] == [
        ("d-short", "h-short", "open")
    ]
    assert len(rescan.suppressed) == 3


def test_flags_go_when_the_pair_disappears(leak_project: Project) -> None:
    scan_dataset(leak_project, "support", now=NOW)
    ds = load_dataset(leak_project, "support")
    release(leak_project, "support", [c for c in ds.cases if c.id != "h-near"], "drop a row")
    rescan = scan_dataset(leak_project, "support", now=NOW)
    assert rescan.gone == 1
    assert ("d-near", "h-near") not in pairs_of(leak_project)


def test_decision_errors(leak_project: Project) -> None:
    report = scan_dataset(leak_project, "support", now=NOW)
    near = next(f for f in report.flags if f.left_id == "d-near")
    with pytest.raises(UsageError) as exc:
        decide(leak_project, "support", near.id, "move", move_id="d-near")
    assert str(exc.value) == f"flag {near.id}: d-near is already in dev; move the other row."
    with pytest.raises(UsageError) as exc:
        decide(leak_project, "support", near.id, "move", move_id="bg-01")
    assert (
        str(exc.value)
        == f"flag {near.id}: `move` must name one row of the pair (d-near or h-near). Got 'bg-01'."
    )
    with pytest.raises(UsageError) as exc:
        decide(leak_project, "support", 999, "keep")
    assert (
        str(exc.value) == "flag 999: no such flag in dataset 'support'. "
        "Next: `casework review list --kind leakage-pair --dataset support`."
    )
    with pytest.raises(UsageError) as exc:
        decide(leak_project, "support", near.id, "delete")  # type: ignore[arg-type]
    assert str(exc.value) == "decision: must be one of move, keep, template. Got 'delete'."
    with pytest.raises(UsageError) as exc:
        resolve(leak_project, "support")
    assert (
        str(exc.value) == "support: no decided flags to resolve. "
        "Next: `casework review list --kind leakage-pair --dataset support`."
    )


def test_resolve_refuses_unreleased_changes(leak_project: Project) -> None:
    report = scan_dataset(leak_project, "support", now=NOW)
    decide(leak_project, "support", report.flags[0].id, "keep")
    path = leak_project.dataset_dir("support") / "cases.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(lines[1:]) + "\n", encoding="utf-8")
    before = read_versions(leak_project.dataset_dir("support"), "v")
    with pytest.raises(UsageError) as exc:
        resolve(leak_project, "support")
    assert "the working tree holds unreleased changes" in str(exc.value)
    assert read_versions(leak_project.dataset_dir("support"), "v") == before
    assert json.loads(lines[1])["id"] in path.read_text(encoding="utf-8")


def test_threshold_is_validated(leak_project: Project) -> None:
    with pytest.raises(UsageError) as exc:
        scan_dataset(leak_project, "support", threshold=1.5)
    assert str(exc.value) == "threshold: must be in (0, 1]. Got 1.5."


def test_resolve_releases_a_never_released_dataset(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "fresh"
    write_project(root, project_rows())
    monkeypatch.chdir(root)
    project = load_project(root)
    report = scan_dataset(project, "support", now=NOW)
    near = next(f for f in report.flags if f.left_id == "d-near")
    decide(project, "support", near.id, "move", move_id="h-near", now=NOW)
    result = resolve(project, "support", now=NOW)
    assert result.version is not None and result.version.number == 1
    assert result.version.changes == [
        f"first release: {len(project_rows())} cases",
        "leakage: moved 1 row from holdout to dev (near-duplicates across splits): h-near",
    ]


@pytest.mark.postgres
def test_review_flow_on_postgresql(leak_project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    url = os.environ.get("CASEWORK_TEST_PG_URL")
    if not url:
        pytest.skip("CASEWORK_TEST_PG_URL is not set (CI sets it to a live PostgreSQL server)")
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("DROP SCHEMA public CASCADE"))
        conn.execute(text("CREATE SCHEMA public"))
    engine.dispose()
    monkeypatch.setenv("CASEWORK_DB_URL", url)
    report = scan_dataset(leak_project, "support", now=NOW)
    assert {(f.left_id, f.right_id) for f in report.flags} == PLANTED
    for f in report.flags:
        if f.left_id == "d-near":
            decide(leak_project, "support", f.id, "move", move_id="h-near", now=NOW)
        else:
            decide(leak_project, "support", f.id, "template", now=NOW)
    assert resolve(leak_project, "support", now=NOW).moved == ["h-near"]
    again = scan_dataset(leak_project, "support", now=NOW)
    assert again.flags == [] and len(again.suppressed) == 3


def test_the_review_file_is_canonical_and_stable(leak_project: Project) -> None:
    path = leak_project.dataset_dir("support") / "leakage.jsonl"
    scan_dataset(leak_project, "support", now=NOW)
    first = path.read_bytes()
    records = [json.loads(line) for line in first.decode("utf-8").splitlines()]
    assert [r["id"] for r in records] == [1, 2, 3, 4]
    assert all(next(iter(r)) == "schema_version" for r in records)
    scan_dataset(leak_project, "support", now=datetime(2027, 1, 1, tzinfo=UTC))
    assert path.read_bytes() == first  # a rescan that changes nothing rewrites nothing a diff sees


def test_a_bad_review_file_is_reported_by_line(leak_project: Project) -> None:
    scan_dataset(leak_project, "support", now=NOW)
    path = leak_project.dataset_dir("support") / "leakage.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    bad = {**json.loads(lines[1]), "status": "closed"}
    again = {**json.loads(lines[0]), "id": 9}
    path.write_text(
        "\n".join([lines[0], json.dumps(bad), *lines[2:], json.dumps(again)]) + "\n",
        encoding="utf-8",
    )
    with pytest.raises(InputErrors) as exc:
        unresolved_flags(leak_project, "support")
    assert str(exc.value) == (
        "datasets/support/leakage.jsonl:2: status: Input should be 'open', 'decided', 'resolved' "
        "or 'gone'. Got 'closed'."
    )
    path.write_text("\n".join([*lines, json.dumps(again)]) + "\n", encoding="utf-8")
    with pytest.raises(InputErrors) as exc:
        scan_dataset(leak_project, "support", now=NOW)
    pair = f"{again['left_id']} ~ {again['right_id']}"
    assert str(exc.value) == (
        f"datasets/support/leakage.jsonl:5: right_id: the pair is already flagged on line 1. "
        f"Got '{pair}'."
    )
