"""The web review page shows disagreement items to adjudicators only, blind, decided by the queue."""

from __future__ import annotations

from fastapi import FastAPI
from sqlalchemy import select

from casework.project import Project
from casework.review import DISAGREEMENT, list_tasks
from casework.review._queue import sync_disagreements
from casework.workbench import Workbench
from casework.workbench.models_labelling import RawLabelRow
from tests.web.conftest import app, project, wb, web_snapshots, workbench_url
from tests.web.helpers import form_value, person
from tests.web.pages import label_all

__all__ = ["app", "project", "wb", "web_snapshots", "workbench_url"]


def test_a_disagreement_is_an_adjudicators_and_blind(
    app: FastAPI, wb: Workbench, project: Project
) -> None:
    lab1, lab2 = person(app, wb, "lab-1", "labeller"), person(app, wb, "lab-2", "labeller")
    rev = person(app, wb, "rev-1", "reviewer")
    adj = person(app, wb, "adj-9", "reviewer", "adjudicator")
    both = person(app, wb, "lab-x", "reviewer", "adjudicator")
    label_all(lab1, lab2)
    sync_disagreements(project, "refunds")
    tasks = list_tasks(project, kind=DISAGREEMENT)
    assert len(tasks) == 2  # the labellers disagree on d-1 and u-1
    task = tasks[0]
    listed = rev.client.get("/review")
    assert listed.status_code == 200 and f"/review/{task.id}" not in listed.text
    assert rev.client.get(f"/review/{task.id}").status_code == 403
    page = adj.client.get(f"/review/{task.id}")
    assert page.status_code == 200, page.text
    assert f"/review/{task.id}" in adj.client.get("/review").text
    assert "lab-1" not in page.text and "lab-2" not in page.text  # names hidden
    assert "final_reply" not in page.text and "trajectory" not in page.text  # no agent output
    decided = adj.post(
        f"/review/{task.id}", {"decision": "B", "served": form_value(page.text, "served")}
    )
    assert decided.status_code == 303, decided.text
    with wb.session() as session:
        rows = session.scalars(
            select(RawLabelRow).where(
                RawLabelRow.role == "adjudicator", RawLabelRow.case_id == task.subject
            )
        ).all()
        assert [r.labeller for r in rows] == ["adj-9"]
    # a merge needs fields the generic page cannot send: refused with the reason, not a crash
    other = tasks[1]
    shown = both.client.get(f"/review/{other.id}")
    refused = both.post(
        f"/review/{other.id}", {"decision": "merge", "served": form_value(shown.text, "served")}
    )
    assert refused.status_code == 422
    assert "a merge, and only a merge" in refused.text
