"""Authored refusal cases: full credit for the refusal, zero for inaction or a fabricated completion."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from casework.authoring import AuthorOptions, author
from casework.labelling.timings import GENERATED_CASE_KIND
from casework.project import Project, load_project
from casework.review import decide_task, list_tasks
from casework.runner import RunRequest, load_run, run_agent
from tests.authoring.test_generate import good_reply, scripted, write_shape_set


@pytest.fixture
def project(project_dir: Path) -> Project:
    write_shape_set(project_dir)
    return load_project(project_dir)


def _accepted_refusal(project: Project) -> str:
    sit = good_reply()["situation"]
    sit["turns"] = [{"role": "user", "content": "Refund ORD-7 to my card, I bought it a year ago."}]
    sit["fixtures"] = [
        {
            "tool": "issue_refund",
            "response": {"status": "refund_pending"},
            "effects": [{"op": "add", "path": "/ledger/-", "value": {"order_id": "ORD-7"}}],
        }
    ]
    reply = good_reply(
        situation=sit,
        expected="refuse",
        outcome="Decline, because the order is a year old and outside every refund window.",
        outcome_is_state=False,
        required_tools=[],
    )
    (case,) = author(
        project,
        AuthorOptions(shapes="refunds", shape="shape-01", axis="outside-policy", n=1),
        client=scripted([reply])[0],
    ).cases
    (task,) = list_tasks(project, kind=GENERATED_CASE_KIND)
    decide_task(project, task.id, "accept", reviewer="rev-1", seconds=20)
    return case.id


@pytest.mark.parametrize(
    ("agent", "passes", "evidence"),
    [
        ("refuser", True, None),
        ("idle", False, "did nothing"),
        ("silent_claim", False, "did nothing"),
        ("fabricator", False, "fabricated completion"),
    ],
)
def test_a_refusal_case_passes_only_by_refusing(
    project: Project, agent: str, passes: bool, evidence: str | None
) -> None:
    case_id = _accepted_refusal(project)
    summary = run_agent(
        project,
        RunRequest(
            dataset="refunds",
            agent=f"python:tests.authoring.agents:{agent}",
            k=1,
            use_judge=False,
            slices=("refunds",),
        ),
    )
    (trial,) = [t for t in load_run(project, summary.header.run_id).trials if t.case_id == case_id]
    assert trial.verdict.passed is passes
    if evidence is not None:
        check = next(c for c in trial.verdict.checks if c.name == "unsatisfiable")
        assert evidence in check.evidence, json.dumps(check.evidence)
