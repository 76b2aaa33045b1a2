"""`casework author review` (decision files) and `casework shapes report` (the generator's gate)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from casework.authoring import AuthorOptions, author, author_report, review_from_file
from casework.authoring._generate import PROMPT_VERSION
from casework.authoring._report import WARNING
from casework.dataset import load_dataset
from casework.errors import InputErrors, UsageError
from casework.labelling.timings import GENERATED_CASE_KIND
from casework.project import Project, load_project
from casework.review import list_tasks
from tests.authoring.test_generate import good_reply, scripted, write_shape_set

NOW = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)


@pytest.fixture
def project(project_dir: Path) -> Project:
    write_shape_set(project_dir)
    return load_project(project_dir)


def _reply(text: str, **over: Any) -> dict[str, Any]:
    return good_reply(text, **over)


def _queue(project: Project) -> list[str]:
    """Three candidates queued on shape-01 × stale-tool-state, one refusal on shape-02."""
    stale = [
        _reply("The refund for ORD-7 shows as sent but my card has nothing."),
        _reply("You said ORD-8 was refunded on Monday, the bank says no."),
        _reply("Tracking for the refund on ORD-9 is stuck at pending since last month."),
    ]
    author(
        project,
        AuthorOptions(
            shapes="refunds", shape="shape-01", axis="stale-tool-state", n=3, frozen=True
        ),
        client=scripted(stale)[0],
    )
    refusal = _reply(
        "Refund my neighbour's ORD-5 to my card.",
        expected="refuse",
        outcome="Decline, because only the account holder may ask.",
        outcome_is_state=False,
        required_tools=[],
    )
    author(
        project,
        AuthorOptions(shapes="refunds", shape="shape-02", axis="permission-absent", n=2),
        client=scripted([refusal, "not json"])[0],
    )
    return [t.subject for t in list_tasks(project, kind=GENERATED_CASE_KIND)]


def _write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def test_decisions_from_a_file_and_complete_provenance(project: Project, tmp_path: Path) -> None:
    ids = _queue(project)
    edited = load_case_payload(project, ids[1])
    edited["situation"]["goal"] = "Chase a refund the bank has not seen."
    decisions = _write(
        tmp_path / "d.jsonl",
        [
            {"item": ids[0], "decision": "accept", "reviewer": "rev-1", "seconds": 120},
            {
                "item": ids[1],
                "decision": "edit",
                "case": edited,
                "reviewer": "rev-2",
                "seconds": 240,
            },
            {
                "item": ids[2],
                "decision": "reject",
                "reason": "too close to the first",
                "reviewer": "rev-1",
                "seconds": 60,
            },
            {"item": ids[3], "decision": "accept", "reviewer": "rev-2", "seconds": 30},
        ],
    )
    outcome = review_from_file(project, decisions, now=NOW)
    assert [t.decision for t in outcome.decided] == ["accept", "edit", "reject", "accept"]
    tree = load_dataset(project, "refunds")
    first, second, refusal = (tree.case(i) for i in (ids[0], ids[1], ids[3]))
    assert tree.case(ids[2]) is None
    assert first is not None and second is not None and refusal is not None
    assert second.situation.goal == "Chase a refund the bank has not seen."
    for case, reviewer, shape in (
        (first, "rev-1", "shape-01"),
        (second, "rev-2", "shape-01"),
        (refusal, "rev-2", "shape-02"),
    ):
        p = case.provenance
        assert case.source == "synthetic"
        assert p.shape == f"refunds/{shape}" and p.source_trace == f"mined-{shape}"
        assert p.generator is not None and p.generator.model == "scripted-gen"
        assert p.generator.prompt_version == PROMPT_VERSION
        assert (p.reviewer, p.reviewed_at) == (reviewer, NOW)
    assert first.frozen and not refusal.frozen
    assert refusal.provenance.unsatisfiable_kind == "permission_absent" and not refusal.satisfiable

    report = author_report(project, "refunds")
    assert (report.generated, report.queued, len(report.accepted)) == (5, 4, 3)
    assert report.acceptance_rate == pytest.approx(3 / 5) and report.warning is None
    assert report.rejected_by_rule == {"malformed_json": 1}
    assert report.rejected_by_review == {"too close to the first": 1}
    # 450 s of review for 3 accepted cases.
    assert report.minutes_per_accepted == pytest.approx(450 / 60 / 3)
    assert report.coverage["shape-01"]["stale-tool-state"] == 2
    assert report.coverage["shape-02"]["permission-absent"] == 1
    assert "shape-01 × stale-tool-state" not in report.empty_cells
    assert "shape-02 × stale-tool-state" in report.empty_cells
    assert len(report.empty_cells) == 2 * 10 - 2
    (quota,) = [q for q in report.quota if q.slice == "refunds"]
    assert (quota.slice, quota.unsatisfiable, quota.total) == ("refunds", 1, 5)


def load_case_payload(project: Project, case_id: str) -> dict[str, Any]:
    (task,) = [t for t in list_tasks(project, kind=GENERATED_CASE_KIND) if t.subject == case_id]
    return dict(task.payload["case"])


def test_a_bad_decision_file_decides_nothing(project: Project, tmp_path: Path) -> None:
    ids = _queue(project)
    before = (project.root / "datasets" / "refunds" / "cases.jsonl").read_bytes()
    bad_case = load_case_payload(project, ids[1])
    bad_case["split"] = "nowhere"
    decisions = _write(
        tmp_path / "d.jsonl",
        [
            {"item": ids[0], "decision": "accept", "reviewer": "rev-1"},
            {"item": "auth-nope", "decision": "accept", "reviewer": "rev-1"},
            {"item": ids[2], "decision": "reject", "reviewer": "rev-1"},
            {"item": ids[1], "decision": "edit", "case": bad_case, "reviewer": "rev-1"},
            {"item": ids[0], "decision": "accept", "reviewer": "rev-1"},
        ],
    )
    with pytest.raises(InputErrors) as caught:
        review_from_file(project, decisions)
    lines = [x.replace(str(tmp_path) + "/", "") for x in str(caught.value).splitlines()]
    assert (
        lines[0]
        == "d.jsonl:2: item: no open authored review item has this id or case id. Got 'auth-nope'."
    )
    assert lines[1] == "d.jsonl:3: reason: a rejected case needs a reason."
    assert lines[2].startswith("d.jsonl:4: case.split: ")
    assert lines[3] == f"d.jsonl:5: item: decided twice in this file. Got '{ids[0]}'."
    assert all(t.status == "open" for t in list_tasks(project, kind=GENERATED_CASE_KIND))
    assert (project.root / "datasets" / "refunds" / "cases.jsonl").read_bytes() == before
    malformed = tmp_path / "m.jsonl"
    malformed.write_text('{"item": 1, "decision": "maybe", "reviewer": "r"}\n', encoding="utf-8")
    with pytest.raises(InputErrors, match=r"m.jsonl:1: decision: "):
        review_from_file(project, malformed)
    with pytest.raises(UsageError, match="no decision file"):
        review_from_file(project, tmp_path / "absent.jsonl")


def test_low_acceptance_warns(project: Project, tmp_path: Path) -> None:
    ids = _queue(project)
    decisions = _write(
        tmp_path / "d.jsonl",
        [
            {
                "item": i,
                "decision": "reject",
                "reason": "off the shape",
                "reviewer": "rev-1",
                "seconds": 10,
            }
            for i in ids
        ],
    )
    review_from_file(project, decisions)
    report = author_report(project, "refunds")
    assert report.accepted == [] and report.minutes_per_accepted is None
    assert (
        report.warning
        == WARNING
        == "acceptance below 1 in 5: fix the shape list, not the generator's fluency"
    )
    assert report.rejected_by_review == {"off the shape": 4}
    with pytest.raises(UsageError, match="give both"):
        author_report(project, "refunds", better="python:x:y")


def test_report_discrimination_between_a_refuser_and_a_fabricator(
    project: Project, tmp_path: Path
) -> None:
    ids = _queue(project)
    review_from_file(
        project,
        _write(
            tmp_path / "d.jsonl",
            [{"item": ids[3], "decision": "accept", "reviewer": "rev-1", "seconds": 60}],
        ),
    )
    report = author_report(
        project,
        "refunds",
        better="python:tests.authoring.agents:refuser",
        worse="python:tests.authoring.agents:fabricator",
        trials=3,
    )
    d = report.discrimination
    assert d is not None
    assert (d.cases, d.discriminating, d.inverted, d.trials) == (1, [ids[3]], [], 3)
    assert d.rate == 1.0 and d.stability_better == 1.0 and d.stability_worse == 1.0
    with pytest.raises(UsageError, match="at least 2"):
        author_report(project, "refunds", better="python:a:b", worse="python:c:d", trials=1)


def test_cli_review_and_report(
    project: Project, tmp_path: Path, run_cli: Callable[..., Result]
) -> None:
    ids = _queue(project)
    listed = run_cli("author", "review")
    assert listed.exit_code == 0 and "4 open authored item(s)" in listed.stdout
    decisions = _write(
        tmp_path / "d.jsonl",
        [{"item": i, "decision": "accept", "reviewer": "rev-1", "seconds": 90} for i in ids[:2]]
        + [{"item": ids[2], "decision": "reject", "reviewer": "rev-1"}],
    )
    refused = run_cli("author", "review", "--decisions", str(decisions))
    assert refused.exit_code == 1 and refused.stderr.endswith(
        "reason: a rejected case needs a reason.\n"
    )
    decisions = _write(
        tmp_path / "d.jsonl",
        [{"item": i, "decision": "accept", "reviewer": "rev-1", "seconds": 90} for i in ids[:2]],
    )
    done = run_cli("author", "review", "--decisions", str(decisions))
    assert done.exit_code == 0 and done.stdout == "decided 2 item(s): 2 accept\n"
    report = run_cli("shapes", "report", "--format", "json")
    data = json.loads(report.stdout)
    assert (data["generated"], data["accepted"], data["pending_review"]) == (5, 2, 2)
    assert data["human_minutes_per_accepted"] == pytest.approx(1.5)
    text = run_cli("shapes", "report").stdout
    assert "acceptance rate: 40% (accepted / generated)" in text
    assert "empty: shape-02 (every axis)" in text
    assert "rejected by rule: malformed_json 1" in text
