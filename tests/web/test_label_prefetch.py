"""The label page's prefetch: the next case comes without a served-at token; showing it brings one."""

from __future__ import annotations

import re

from fastapi import FastAPI
from sqlalchemy import select

from casework.workbench import Workbench
from casework.workbench.models_labelling import RawLabelRow
from tests.web.helpers import MARKERS, form_value, person
from tests.web.test_label import answer, current

# ms.nonce.mac, as casework.web._served.ServedClock.token makes it.
TOKEN_RE = re.compile(r"\d{10,15}\.[0-9a-f]{16}\.[0-9a-f]{32}")
ITEM_RE = re.compile(r'data-item="([^"]+)"')
SLOT_RE = re.compile(r'<div id="case-slot" data-item="([^"]+)" data-served="([^"]+)"></div>')


def _unescape(attr: str) -> str:
    return attr.replace("&#34;", '"').replace("&quot;", '"').replace("&amp;", "&")


def test_the_prefetched_case_carries_no_served_token(app: FastAPI, wb: Workbench) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    page = lab.client.get("/label").text
    dataset, case_id = current(page)
    assert f'data-next="/label/{dataset}/{case_id}/next"' in page
    ahead = lab.client.get(f"/label/{dataset}/{case_id}/next", headers={"HX-Request": "true"})
    assert ahead.status_code == 200
    assert ahead.headers["cache-control"] == "no-store"
    following = current(ahead.text)
    assert following != (dataset, case_id)
    assert form_value(ahead.text, "served") == ""
    assert TOKEN_RE.search(ahead.text) is None
    assert TOKEN_RE.search(page) is not None  # the shown page has one: the pattern matches
    # The same blind view as the page: nothing hidden from labellers comes ahead of time.
    assert not [m for m in MARKERS.values() if m in ahead.text]
    # Its form cannot be submitted as it came: no token, no time.
    refused = lab.htmx(f"/label/{following[0]}/{following[1]}", answer(ahead.text))
    assert refused.status_code == 400
    with wb.session() as session:
        assert session.scalars(select(RawLabelRow)).all() == []


def test_a_submit_naming_the_prefetched_case_gets_its_token_and_no_case(
    app: FastAPI, wb: Workbench
) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    page = lab.client.get("/label").text
    dataset, case_id = current(page)
    ahead = lab.client.get(f"/label/{dataset}/{case_id}/next").text
    item = _unescape(ITEM_RE.findall(ahead)[0])
    saved = lab.htmx(f"/label/{dataset}/{case_id}", answer(page, prefetched=item))
    assert saved.status_code == 200 and f"Saved {case_id}." in saved.text
    slot = SLOT_RE.search(saved.text)
    assert slot is not None, saved.text[:800]
    assert _unescape(slot.group(1)) == item
    assert 'name="served"' not in saved.text  # the case is the page's prefetched one
    # The slot's token times the prefetched case, once.
    following = current(ahead)
    shown = answer(ahead, served=slot.group(2))
    first = lab.htmx(f"/label/{following[0]}/{following[1]}", shown)
    assert first.status_code == 200 and f"Saved {following[1]}." in first.text
    again = lab.htmx(f"/label/{following[0]}/{following[1]}", {**shown, "outcome": "clarify"})
    assert again.status_code == 409
    # A token for one case does not time another.
    moved = lab.htmx(f"/label/{dataset}/{case_id}", {**shown, "outcome": "clarify"})
    assert moved.status_code == 400


def test_a_stale_prefetch_gets_the_whole_next_case(app: FastAPI, wb: Workbench) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    page = lab.client.get("/label").text
    dataset, case_id = current(page)
    stale = '["refunds", "no-such-case", "refunds-g7"]'
    saved = lab.htmx(f"/label/{dataset}/{case_id}", answer(page, prefetched=stale))
    assert saved.status_code == 200
    assert 'id="case-slot"' not in saved.text
    assert TOKEN_RE.search(form_value(saved.text, "served"))


def test_nothing_after_the_last_case(app: FastAPI, wb: Workbench) -> None:
    lab = person(app, wb, "lab-1", "labeller")
    while True:
        page = lab.client.get("/label").text
        dataset, case_id = current(page)
        ahead = lab.client.get(f"/label/{dataset}/{case_id}/next")
        if ahead.status_code == 204:
            break
        assert ahead.status_code == 200
        assert lab.htmx(f"/label/{dataset}/{case_id}", answer(page)).status_code == 200
    assert ahead.text == ""
