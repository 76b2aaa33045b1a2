"""The labeller queue: blind view, labels stored as sheet labels, revise, skip, hostile content."""

from __future__ import annotations

import hashlib
import hmac
import re
import time
from datetime import UTC, datetime
from typing import Any

import pytest
from fastapi import FastAPI
from sqlalchemy import select

from casework.labelling import (
    WebAnswer,
    assign_labels,
    labelling_status,
    list_disagreements,
    release_labels,
    submit_label,
)
from casework.project import Project
from casework.workbench import WebLabelViewRow, Workbench
from casework.workbench.models import Meta
from casework.workbench.models_labelling import AssignmentRow, RawLabelRow
from tests.web.helpers import HOSTILE, MARKERS, Person, form_value, person

CASE_RE = re.compile(r'hx-post="/label/([^/"]+)/([^/"]+)"')


def current(html: str) -> tuple[str, str]:
    match = CASE_RE.search(html)
    assert match, html[:500]
    return match.group(1), match.group(2)


def answer(html: str, **fields: Any) -> dict[str, Any]:
    data = {
        "guideline_version": form_value(html, "guideline_version"),
        "served": form_value(html, "served"),
        "visible_seconds": "4.5",
        "outcome": "resolve",
    }
    data.update(fields)
    return data


def label_next(lab: Person, **fields: Any) -> Any:
    page = lab.client.get("/label").text
    dataset, case_id = current(page)
    return lab.htmx(f"/label/{dataset}/{case_id}", answer(page, **fields)), case_id


def test_queue_shows_the_blind_view_and_the_guideline(app: FastAPI, wb: Workbench) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    page = lab.client.get("/label")
    assert page.status_code == 200
    assert current(page.text) == ("refunds", "d-1")
    html = page.text
    assert "My mug from order ORD-d-1 arrived broken." in html
    assert "get a refund for a broken mug" in html  # goal
    assert "Refund a damaged item when the order is within 30 days." in html  # guideline
    assert "refunds-g7" in html
    for tool in ("get_order", "issue_refund", "escalate_to_human"):
        assert f'name="required" value="{tool}"' in html
        assert f'name="forbidden" value="{tool}"' in html
    assert "Tool fixtures" in html and "Injected adversity" in html and "ORD-d-1" in html
    assert re.search(r"<strong>0</strong> done / <strong>\d+</strong> assigned", html)


def test_a_web_label_is_a_sheet_label(app: FastAPI, wb: Workbench, project: Project) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    response, case_id = label_next(
        lab,
        required=["get_order", "issue_refund"],
        forbidden=["escalate_to_human"],
        fact=["refund issued", " ", "apology"],
        note="clear case",
    )
    assert response.status_code == 200
    assert f"Saved {case_id}." in response.text
    assert current(response.text)[1] != case_id  # the next case swapped in
    assert "<html" not in response.text  # a fragment, not a page
    assert "<strong>1</strong> done" in response.text
    status = labelling_status(project, "refunds")
    loads = {load.labeller: load for load in status.labellers}
    assert loads["lab-1"].done == 1
    with wb.session() as session:
        row = session.scalars(select(RawLabelRow).where(RawLabelRow.case_id == case_id)).one()
        view = session.scalars(select(WebLabelViewRow)).one()
    assert (row.labeller, row.outcome, row.source) == ("lab-1", "resolve", "web")
    assert row.required == {"get_order": True, "issue_refund": True, "escalate_to_human": False}
    assert row.forbidden["escalate_to_human"] is True
    assert row.answer_facts == ["refund issued", "apology"]
    assert row.guideline_version == "refunds-g7"
    assert row.seconds_on_screen is not None and 0 <= row.seconds_on_screen < 60
    assert view.client_seconds == 4.5 and view.note == "clear case"
    assert set(view.fields_shown) >= {"goal", "turns", "tools", "guideline"}
    assert "oracle" not in view.fields_shown and "provenance" not in view.fields_shown


def test_labels_agree_or_disagree_like_sheet_labels(
    app: FastAPI, wb: Workbench, project: Project
) -> None:
    one, two = person(app, wb, "lab-1", "labeller"), person(app, wb, "lab-2", "labeller")
    _, case_id = label_next(one, outcome="resolve")
    page = two.client.get(f"/label/refunds/{case_id}").text
    two.htmx(f"/label/refunds/{case_id}", answer(page, outcome="escalate"))
    assert [d.case_id for d in list_disagreements(project, "refunds")] == [case_id]


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"outcome": "maybe"}, "outcome: choose one of"),
        ({"outcome": ""}, "outcome: choose one of"),
        ({"required": ["delete_everything"]}, "required: not a declared tool"),
        ({"required": ["get_order"], "forbidden": ["get_order"]}, "both required and forbidden"),
        ({"guideline_version": "refunds-g6"}, "guideline_version: the guideline"),
    ],
)
def test_bad_answers_are_refused_with_the_field(
    app: FastAPI, wb: Workbench, fields: dict[str, Any], message: str
) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    response, case_id = label_next(lab, **fields)
    assert response.status_code == 422
    assert message in response.text
    assert current(response.text)[1] == case_id  # the same case, to fix
    with wb.session() as session:
        assert session.scalars(select(RawLabelRow)).all() == []


def test_a_forged_served_time_is_refused(app: FastAPI, wb: Workbench) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    response, _ = label_next(lab, served="1.deadbeef")
    assert response.status_code == 400


def _seconds(wb: Workbench, case_id: str) -> float | None:
    with wb.session() as session:
        row = session.scalars(select(RawLabelRow).where(RawLabelRow.case_id == case_id)).one()
        return row.seconds_on_screen


def test_a_served_time_signed_with_the_csrf_token_is_refused(app: FastAPI, wb: Workbench) -> None:
    """The CSRF token is on every page: a served time keyed by it can be forged by anyone."""
    lab = person(app, wb, "lab-1", "labeller")
    page = lab.client.get("/label").text
    dataset, case_id = current(page)
    two_hours_ago = int(time.time() * 1000) - 7_200_000
    message = f"{dataset}\0{case_id}\0{two_hours_ago}".encode()
    mac = hmac.new(lab.csrf.encode(), message, hashlib.sha256).hexdigest()[:32]
    for forged in (f"{two_hours_ago}.{mac}", f"{two_hours_ago}.00ff00ff00ff00ff.{mac}"):
        response = lab.htmx(f"/label/{dataset}/{case_id}", answer(page, served=forged))
        assert response.status_code == 400
        assert "not one this server served you for this item" in response.text
    with wb.session() as session:
        assert session.scalars(select(RawLabelRow)).all() == []
    # The secret lives in the workbench, never on a page.
    with wb.session() as session:
        secret = session.get(Meta, "sheet_signing_key")
    assert secret is not None and secret.value not in page


def test_a_served_time_counts_once(app: FastAPI, wb: Workbench) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    page = lab.client.get("/label").text
    dataset, case_id = current(page)
    first = lab.htmx(f"/label/{dataset}/{case_id}", answer(page))
    assert first.status_code == 200 and f"Saved {case_id}." in first.text
    stored = _seconds(wb, case_id)
    # The same form again (a revision replaying the spent token) would count its time twice.
    again = lab.htmx(f"/label/{dataset}/{case_id}", answer(page, outcome="clarify"))
    assert again.status_code == 409 and "submitted already" in again.text
    assert _seconds(wb, case_id) == stored
    # A token served for one case does not time another.
    other = current(first.text)
    moved = lab.htmx(f"/label/{other[0]}/{other[1]}", answer(page))
    assert moved.status_code == 400
    # A fresh page revises, and its own time adds up.
    fresh = lab.client.get(f"/label/{dataset}/{case_id}").text
    revised = lab.htmx(f"/label/{dataset}/{case_id}", answer(fresh, outcome="clarify"))
    assert revised.status_code == 200 and "Revised" in revised.text


def test_a_refused_submit_keeps_its_served_time(app: FastAPI, wb: Workbench) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    page = lab.client.get("/label").text
    dataset, case_id = current(page)
    served = form_value(page, "served")
    refused = lab.htmx(f"/label/{dataset}/{case_id}", answer(page, outcome=""))
    assert refused.status_code == 422
    assert form_value(refused.text, "served") == served  # not spent, and still counting
    stored = lab.htmx(f"/label/{dataset}/{case_id}", answer(refused.text))
    assert stored.status_code == 200 and f"Saved {case_id}." in stored.text


def test_revise_until_adjudicated(app: FastAPI, wb: Workbench, project: Project) -> None:
    one, two = person(app, wb, "lab-1", "labeller"), person(app, wb, "lab-2", "labeller")
    _, case_id = label_next(one, outcome="resolve")
    page = one.client.get(f"/label/refunds/{case_id}").text
    assert "Revise label" in page and 'value="resolve" data-key="1" checked' in page
    revised = one.htmx(f"/label/refunds/{case_id}", answer(page, outcome="clarify"))
    assert "Revised" in revised.text
    with wb.session() as session:
        rows = session.scalars(select(RawLabelRow)).all()
    assert [(r.outcome, r.labeller) for r in rows] == [("clarify", "lab-1")]
    # A disagreement goes to an adjudicator: from then on the label stays as it is.
    page = two.client.get(f"/label/refunds/{case_id}").text
    two.htmx(f"/label/refunds/{case_id}", answer(page, outcome="refuse"))
    assign_labels(project, "refunds", ["lab-1", "lab-2", "lab-3"])
    page = one.client.get(f"/label/refunds/{case_id}").text
    assert "can no longer be revised" in page
    refused = one.htmx(f"/label/refunds/{case_id}", answer(page, outcome="resolve"))
    assert refused.status_code == 422 and "can no longer be revised" in refused.text


def test_released_labels_are_not_revised(app: FastAPI, wb: Workbench, project: Project) -> None:
    one, two = person(app, wb, "lab-1", "labeller"), person(app, wb, "lab-2", "labeller")
    _, case_id = label_next(one, outcome="resolve")
    page = two.client.get(f"/label/refunds/{case_id}").text
    two.htmx(f"/label/refunds/{case_id}", answer(page, outcome="resolve"))
    release_labels(project, "refunds", "web labels")
    page = one.client.get(f"/label/refunds/{case_id}").text
    response = one.htmx(f"/label/refunds/{case_id}", answer(page, outcome="clarify"))
    assert response.status_code == 422


def test_skip_needs_a_reason_and_goes_to_the_end(app: FastAPI, wb: Workbench) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    first = current(lab.client.get("/label").text)[1]
    refused = lab.htmx(f"/label/refunds/{first}/skip", {"reason": "  "})
    assert refused.status_code == 422 and "reason: say why" in refused.text
    skipped = lab.htmx(f"/label/refunds/{first}/skip", {"reason": "unclear order"})
    assert skipped.status_code == 200 and f"Skipped {first}." in skipped.text
    assert current(skipped.text)[1] != first
    # Label everything else: the skipped case comes back last.
    seen = []
    while True:
        page = lab.client.get("/label").text
        if "Nothing left" in page:
            break
        dataset, case_id = current(page)
        seen.append(case_id)
        lab.htmx(f"/label/{dataset}/{case_id}", answer(page))
    assert seen[-1] == first and seen.count(first) == 1


def test_plain_form_posts_work_without_htmx(app: FastAPI, wb: Workbench) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    page = lab.client.get("/label").text
    dataset, case_id = current(page)
    response = lab.post(f"/label/{dataset}/{case_id}", answer(page))
    assert response.status_code == 303 and response.headers["location"] == "/label"


def test_hostile_case_text_renders_inert(app: FastAPI, wb: Workbench) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    html = lab.client.get("/label/refunds/d-1").text
    assert HOSTILE not in html
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    # Only the package's own scripts, none inline.
    scripts = re.findall(r"<script[^>]*>", html)
    assert scripts == [
        '<script src="/static/htmx.min.js" defer>',
        '<script src="/static/app.js" defer>',
    ]
    assert " on" not in "".join(re.findall(r"<[a-z]+\s[^>]*>", html)).replace(" one", "")


def _label_everything_as(lab: Person, outcome: str, fact: str) -> list[Any]:
    responses = []
    while True:
        page = lab.client.get("/label")
        responses.append(page)
        if "Nothing left" in page.text:
            return responses
        dataset, case_id = current(page.text)
        responses.append(
            lab.htmx(f"/label/{dataset}/{case_id}", answer(page.text, outcome=outcome, fact=[fact]))
        )


def test_labeller_responses_never_hold_what_is_hidden(
    app: FastAPI, wb: Workbench, project: Project
) -> None:
    one, two = person(app, wb, "lab-1", "labeller"), person(app, wb, "lab-2", "labeller")
    _label_everything_as(two, "escalate", MARKERS["other_label"])
    assign_labels(project, "refunds", ["lab-1", "lab-2", "lab-3"])  # nothing for lab-3 yet
    responses = _label_everything_as(one, "resolve", "my own fact")
    # Disagreements now exist; lab-3 adjudicates and is also a labeller.
    assign_labels(project, "refunds", ["lab-1", "lab-2", "lab-3"])
    three = person(app, wb, "lab-3", "labeller", "adjudicator")
    cases = ["d-1", "d-2", "d-3", "d-4", "u-1", "s-1", "r-1", "r-2", "nope", "..%2F..%2Fetc"]
    for who in (one, three):
        responses += [who.client.get(url) for url in ("/", "/label")]
        for case_id in cases:
            responses.append(who.client.get(f"/label/refunds/{case_id}"))
            responses.append(who.htmx(f"/label/refunds/{case_id}", {"outcome": "resolve"}))
            responses.append(who.htmx(f"/label/refunds/{case_id}/skip", {"reason": "x"}))
        responses.append(who.client.get("/label/other-dataset/d-1"))
    statuses = {r.status_code for r in responses}
    assert statuses <= {200, 400, 404, 422}
    for response in responses:
        for place, marker in MARKERS.items():
            assert marker.encode() not in response.content, (place, response.url)
    # lab-3 holds the disagreements only as adjudicator: the labeller page shows none of them.
    with wb.session() as session:
        held = session.scalars(
            select(AssignmentRow.role).where(AssignmentRow.labeller == "lab-3")
        ).all()
    assert held and set(held) == {"adjudicator"}
    assert three.client.get("/label/refunds/d-1").status_code == 404
    assert "Nothing left" in three.client.get("/label").text


def test_a_labeller_cannot_store_a_label_for_a_case_they_do_not_hold(
    app: FastAPI, wb: Workbench, project: Project
) -> None:
    outsider = person(app, wb, "lab-9", "labeller")
    lab = person(app, wb, "lab-1", "labeller")
    page = lab.client.get("/label").text
    dataset, case_id = current(page)
    stolen = answer(page)  # a served token of someone else's session does not verify either
    assert outsider.htmx(f"/label/{dataset}/{case_id}", stolen).status_code in (400, 404)
    with wb.session() as session:
        assert session.scalars(select(RawLabelRow)).all() == []
    # The library refuses the same way the page does.
    from casework.labelling import CaseNotHeld

    with wb.session() as session, pytest.raises(CaseNotHeld):
        submit_label(
            project,
            session,
            "lab-9",
            dataset,
            case_id,
            WebAnswer("resolve"),
            guideline_version="refunds-g7",
            seconds_on_screen=None,
            now=datetime.now(UTC),
        )


def test_a_refused_skip_of_a_case_not_held_shows_the_labellers_own_page(
    app: FastAPI, wb: Workbench
) -> None:
    outsider = person(app, wb, "lab-9", "labeller")  # holds no case of the assignment
    response = outsider.htmx("/label/refunds/d-1/skip", {"reason": " "})
    assert response.status_code == 422
    assert "say why you skip" in response.text
    assert "/label/refunds/d-1" not in response.text  # not the case asked for: not theirs
