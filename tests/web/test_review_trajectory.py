"""The trajectory review page over HTTP: what a reviewer sees, who may see it, how it decides.

On the bundled bookings example run by its sloppy agent (tests/web/trajectories.py): the page
shows a trial's steps, tool calls, state diff and simulated user, never its verdict before the
decision; frozen cases' trials only to admins; a review only to its reviewer; an adjudication
only to adjudicators who reviewed neither side.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from casework.dataset import load_dataset
from casework.project import Project
from casework.review import get_task, list_tasks
from casework.review._task import ReviewTask
from casework.runner.store import load_run
from casework.web import create_app
from tests.web.helpers import Person, form_value, person
from tests.web.trajectories import FROZEN, bookings_with_run, fresh_copy, queue_trials

FAIL = {"step": "1", "category": "no-verification", "severity": "major", "fault": "agent"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("trajectory") / "bookings"
    return root, bookings_with_run(root)


@pytest.fixture
def bookings(built: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    return fresh_copy(built[0], tmp_path / "bookings", monkeypatch)


@pytest.fixture
def run_id(built: tuple[Path, str]) -> str:
    return built[1]


@pytest.fixture
def web(bookings: Project) -> Iterator[FastAPI]:
    application = create_app(bookings)
    yield application
    application.state.workbench.close()


def _who(app: FastAPI, name: str, *roles: str) -> Person:
    return person(app, app.state.workbench, name, *roles)


def _decide(who: Person, task_id: int, form: dict[str, str]) -> Any:
    page = who.client.get(f"/review/{task_id}")
    assert page.status_code == 200, page.text
    return who.post(f"/review/{task_id}", {"served": form_value(page.text, "served"), **form})


def _of(tasks: list[ReviewTask], reviewer: str, case_id: str | None = None) -> ReviewTask:
    return next(
        t
        for t in tasks
        if t.payload.get("reviewer") == reviewer
        and (case_id is None or t.payload["case_id"] == case_id)
    )


def test_a_reviewer_sees_the_steps_and_no_verdict_until_deciding(
    web: FastAPI, bookings: Project, run_id: str
) -> None:
    tasks = queue_trials(bookings, run_id, 8, ["ana", "ben"], overlap=0)
    ana = _who(web, "ana", "reviewer")
    item = _of(tasks, "ana", "bk-conversation")
    trial = next(
        t
        for t in load_run(bookings, run_id).trials
        if (t.case_id, t.trial) == (item.payload["case_id"], item.payload["trial"])
    )
    case = next(c for c in load_dataset(bookings, "bookings").cases if c.id == "bk-conversation")
    page = ana.client.get(f"/review/{item.id}")
    assert page.status_code == 200
    html = page.text
    # every step, numbered from 0; each tool call's name, arguments and result; the state diff
    steps = item.payload["steps"]
    assert re.findall(r'<li class="step [a-z_]+" id="step-(\d+)"', html) == [
        str(i) for i in range(len(steps))
    ]
    call = next(s for s in steps if s["role"] == "tool_call")
    assert f'<code class="call-name">{call["name"]}</code>' in html
    assert all(f"&#34;{k}&#34;" in html for k in call["arguments"])  # keys, escaped
    assert '<table class="state-diff queue">' in html and "/bookings/" in html
    assert "known_info" in html and "traveller-stand-in" in html  # scenario, simulator
    # grouped categories of the shipped taxonomy, severities and faults with their keys
    assert '<optgroup label="task verification">' in html
    assert 'value="simulated_user" data-key="u"' in html and 'data-key="p"> <kbd>P</kbd>' in html
    # never the verdict, its evidence, the label or the oracle before the decision
    assert "verdict" not in html.lower()
    for check in trial.verdict.checks:
        assert check.evidence not in html
    assert case.label is not None
    for fact in case.label.answer_facts:
        assert fact not in html
    assert '"oracle"' not in html and "required_tools" not in html
    # another reviewer's item is not theirs to see; a labeller reaches no review page
    ben = _who(web, "ben", "reviewer")
    assert ben.client.get(f"/review/{item.id}").status_code == 403
    assert f"/review/{item.id}" not in ben.client.get("/review").text
    assert _who(web, "lab", "labeller").client.get(f"/review/{item.id}").status_code == 403
    # deciding opens ana's next item; her decided item now shows the verdict
    done = _decide(ana, item.id, {**FAIL, "reason": "booked without checking"})
    assert done.status_code == 303
    nxt = _of([t for t in tasks if t.id != item.id], "ana")
    assert done.headers["location"] == f"/review/{nxt.id}?decided={item.id}"
    flash = ana.client.get(done.headers["location"]).text
    assert f"Decided item {item.id}." in flash and "verdict" not in flash.lower()
    stored = get_task(bookings, item.id)
    assert (stored.decision, stored.reviewer, stored.reason) == (
        "fail",
        "ana",
        "booked without checking",
    )
    assert stored.data == {
        "step": 1,
        "category": "no-verification",
        "severity": "major",
        "fault": "agent",
        "taxonomy": "mast-1",
    }
    after = ana.client.get(f"/review/{item.id}").text
    shown = {True: "pass", False: "fail", None: "undetermined"}[trial.verdict.passed]
    assert f'<p class="verdict">{shown}</p>' in after
    assert "<dt>fault</dt><dd>agent</dd>" in after


def test_a_frozen_case_s_trial_is_shown_only_to_an_admin(
    web: FastAPI, bookings: Project, run_id: str
) -> None:
    tasks = queue_trials(bookings, run_id, 10, ["ana"], overlap=0, include_frozen=True)
    frozen = [t for t in tasks if t.payload["case_id"] == FROZEN]
    assert frozen and all(t.payload["frozen"] for t in frozen)
    ana = _who(web, "ana", "reviewer")
    refused = ana.client.get(f"/review/{frozen[0].id}")
    assert refused.status_code == 403 and "shown only to admins" in refused.text
    listed = ana.client.get("/review").text
    assert FROZEN not in listed
    assert all(f'/review/{t.id}"' in listed for t in tasks if t not in frozen)
    # nor may she decide it: the write is refused before anything is stored
    assert ana.post(f"/review/{frozen[0].id}", {"step": "none"}).status_code == 403
    assert get_task(bookings, frozen[0].id).status == "open"
    root = _who(web, "root", "admin", "reviewer")
    assert root.client.get(f"/review/{frozen[0].id}").status_code == 200
    assert FROZEN in root.client.get("/review").text


def test_an_adjudication_shows_both_reviews_and_neither_reviewer_may_decide_it(
    web: FastAPI, bookings: Project, run_id: str
) -> None:
    tasks = queue_trials(bookings, run_id, 1, ["ana", "ben"], overlap=1)
    ana, ben = _who(web, "ana", "reviewer"), _who(web, "ben", "reviewer")
    assert _decide(ana, _of(tasks, "ana").id, {"step": "none"}).status_code == 303
    assert _decide(ben, _of(tasks, "ben").id, FAIL).status_code == 303
    [adj] = [t for t in list_tasks(bookings, kind="trajectory") if t.status == "open"]
    assert adj.payload["role"] == "adjudicate"
    for reviewer in (ana, ben):
        assert reviewer.client.get(f"/review/{adj.id}").status_code == 403
        assert reviewer.post(f"/review/{adj.id}", {"step": "none"}).status_code == 403
    both = _who(web, "bea", "reviewer", "adjudicator")  # a reviewer who is not an adjudicator:
    plain = _who(web, "cal", "reviewer")
    assert plain.client.get(f"/review/{adj.id}").status_code == 403
    page = both.client.get(f"/review/{adj.id}").text
    rows = re.findall(r'<tr class="review"><td>(\w+)</td><td class="review-step">(\w+)</td>', page)
    assert rows == [("ana", "none"), ("ben", "1")]
    done = _decide(both, adj.id, {**FAIL, "fault": "simulated_user"})
    assert done.status_code == 303 and done.headers["location"] == f"/review?decided={adj.id}"
    settled = get_task(bookings, adj.id)
    assert (settled.decision, settled.reviewer) == ("fail", "bea")
    assert settled.data is not None and settled.data["fault"] == "simulated_user"


def test_a_refused_form_keeps_its_values_and_says_why(
    web: FastAPI, bookings: Project, run_id: str
) -> None:
    tasks = queue_trials(bookings, run_id, 1, ["ana"], overlap=0)
    ana = _who(web, "ana", "reviewer")
    page = ana.client.get(f"/review/{tasks[0].id}").text
    served = form_value(page, "served")
    no_step = ana.post(f"/review/{tasks[0].id}", {"served": served, "category": "no-verification"})
    assert no_step.status_code == 422
    assert "step: choose the first failing step, or none." in no_step.text
    assert '<option value="no-verification" title=' in no_step.text
    assert re.search(r'value="no-verification" title="[^"]*" selected', no_step.text)
    no_category = ana.post(f"/review/{tasks[0].id}", {"served": served, **FAIL, "category": ""})
    assert no_category.status_code == 422
    assert "category: one of the taxonomy&#39;s" in no_category.text
    assert re.search(r'name="step" value="1" form="trajectory-form" checked', no_category.text)
    for bad, says in (("x", "the index of a step. Got &#39;x&#39;."), ("99", "step: the index")):
        refused = ana.post(f"/review/{tasks[0].id}", {"served": served, **FAIL, "step": bad})
        assert refused.status_code == 422 and says in refused.text
    assert get_task(bookings, tasks[0].id).status == "open"
