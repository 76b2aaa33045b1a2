"""20 labellers submit 200 labels at once against a live server: none lost, none doubled."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from sqlalchemy import func, select

from casework.labelling import assign_labels, labelling_status
from casework.project import load_project
from casework.web import add_user, create_app
from casework.workbench import open_workbench
from casework.workbench.models_labelling import AssignmentRow, RawLabelRow
from tests.labelling.builders import workbench_url
from tests.web.crowd import Tally, crowd_project, label_all
from tests.web.live import live_server

__all__ = ["workbench_url"]

LABELLERS = 20
# A calibrating slice: two labellers per case, 200 labels, ten submits a labeller, all 20 at
# once from the first request to about the last. The races are each labeller's first case, sent
# twice at once, and every submit against the others' writes. A planted fault (a second writer's
# claim taken as won, its IntegrityError left unanswered) fails the PostgreSQL run at this size.
CASES = 100


@pytest.mark.slow
def test_twenty_labellers_at_once(
    tmp_path: Path, workbench_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    project = load_project(crowd_project(tmp_path / "crowd", CASES))
    names = [f"lab-{i:02d}" for i in range(LABELLERS)]
    report = assign_labels(project, "refunds", names)
    assert len(report.assignments) == 2 * CASES
    with open_workbench(project) as wb:
        links = [add_user(wb, name, ["labeller"]) for name in names]
    app = create_app(project)
    tally = Tally()
    try:
        with live_server(app) as base:
            threads = [
                threading.Thread(
                    target=label_all,
                    args=(base, f"{base}/signin/{link}", tally),
                    kwargs={"twice_first": True},  # each also races a second submit of one case
                )
                for link in links
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(timeout=600)
    finally:
        app.state.workbench.close()
    assert tally.errors == []
    assert set(tally.refused) <= {409, 503}
    with open_workbench(project) as wb, wb.session() as session:
        labels = session.execute(
            select(RawLabelRow.case_id, RawLabelRow.labeller, RawLabelRow.guideline_version)
        ).all()
        per_case = dict(
            session.execute(
                select(RawLabelRow.case_id, func.count()).group_by(RawLabelRow.case_id)
            ).all()
        )
        open_left = session.scalar(
            select(func.count()).select_from(AssignmentRow).where(AssignmentRow.done.is_(False))
        )
        held = set(session.execute(select(AssignmentRow.case_id, AssignmentRow.labeller)).all())
    assert len(labels) == 2 * CASES  # none lost
    assert len(set(labels)) == len(labels)  # none doubled
    assert set(per_case.values()) == {2} and len(per_case) == CASES  # no case beyond its quota
    assert {(c, lab) for c, lab, _ in labels} == held  # only by the people holding them
    assert open_left == 0
    status = labelling_status(project, "refunds")
    assert sum(load.done for load in status.labellers) == 2 * CASES
