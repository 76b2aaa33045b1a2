"""A real browser (Debian's chromium via Playwright) prefetches the next case; its clock starts on show."""

from __future__ import annotations

import time

from fastapi import FastAPI
from sqlalchemy import select

from casework.web import add_user
from casework.workbench import Workbench
from casework.workbench.models_labelling import RawLabelRow
from tests.web.chromium import BROWSER_MARKS
from tests.web.live import live_server

#: Between the prefetch of case 2 and its showing: a clock started at the prefetch counts it.
HELD_BACK = 4.0

pytestmark = BROWSER_MARKS


def test_the_next_case_is_prefetched_and_timed_from_when_it_is_shown(
    app: FastAPI, wb: Workbench, browser_page: object
) -> None:
    from playwright.sync_api import Page, Request, Response, expect

    page = browser_page
    assert isinstance(page, Page)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    events: list[tuple[float, str, str, str]] = []  # (time, "request"/"response", method, path)
    bodies: dict[str, str] = {}

    def on_request(r: Request) -> None:
        events.append((time.monotonic(), "request", r.method, r.url.split("/", 3)[3]))

    def on_response(r: Response) -> None:
        path = r.url.split("/", 3)[3]
        events.append((time.monotonic(), "response", r.request.method, path))
        if r.request.method == "POST" and path.startswith("label/"):
            bodies[path] = r.text()

    navigations: list[str] = []
    page.on("request", on_request)
    page.on("response", on_response)
    page.on("framenavigated", lambda f: navigations.append(f.url) if f == page.main_frame else None)
    token = add_user(wb, "lab-1", ["labeller"])
    with live_server(app) as base:
        page.goto(f"{base}/signin/{token}")
        expect(page.get_by_role("button", name="Sign in")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page).to_have_url(f"{base}/label")
        expect(page.locator("h1")).to_contain_text("d-1")
        page.wait_for_load_state("domcontentloaded")
        expect(page.locator("#label-form input[name=outcome]").first).to_be_focused()
        ahead = ("response", "GET", "label/refunds/d-1/next")
        deadline = time.monotonic() + 20
        while not any(e[1:] == ahead for e in events):
            assert time.monotonic() < deadline, events
            page.wait_for_timeout(50)
        prefetched_at = next(t for t, *rest in events if tuple(rest) == ahead)
        shown_pages = len(navigations)
        page.wait_for_timeout(HELD_BACK * 1000)  # case 2 is held, not shown
        page.keyboard.press("1")
        page.keyboard.press("Control+Enter")
        expect(page.locator(".flash")).to_have_text("Saved d-1.")
        expect(page.locator("h1")).to_contain_text("d-3")  # d-2 is stale, not queued
        expect(page.locator("#progress")).to_contain_text("1 done / 5 assigned")
        # Every keyboard path holds on the prefetched case: focus on the outcome, keys, submit.
        expect(page.locator("#label-form input[name=outcome]").first).to_be_focused()
        submitted_at = next(
            t for t, *rest in events if tuple(rest) == ("request", "POST", "label/refunds/d-1")
        )
        assert prefetched_at < submitted_at
        # The submit's answer held the token, not the case: d-3 came from the prefetch.
        answer = bodies["label/refunds/d-1"]
        assert 'id="case-slot"' in answer and "d-3" in answer and "<h1>" not in answer
        after = [path for t, kind, method, path in events if t > submitted_at and kind == "request"]
        assert "label" not in after and "label/refunds/d-3" not in after, after
        assert len(navigations) == shown_pages  # no page load: the case was swapped in
        page.wait_for_timeout(1000)
        page.keyboard.press("4")
        page.keyboard.press("Control+Enter")
        expect(page.locator(".flash")).to_have_text("Saved d-3.")
        assert page.evaluate("document.querySelectorAll('script:not([src])').length") == 0
    with wb.session() as session:
        rows = {r.case_id: r for r in session.scalars(select(RawLabelRow)).all()}
    assert (rows["d-1"].outcome, rows["d-3"].outcome) == ("resolve", "escalate")
    first, second = rows["d-1"].seconds_on_screen, rows["d-3"].seconds_on_screen
    assert first is not None and first >= HELD_BACK
    # Counted from the show (about 1 s), not from the prefetch (which would add HELD_BACK).
    assert second is not None and 1.0 <= second < HELD_BACK, (first, second)
    assert problems == []
