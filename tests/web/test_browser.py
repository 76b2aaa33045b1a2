"""A real browser (Debian's chromium, headless, via Playwright) labels two cases keyboard-only."""

from __future__ import annotations

import os
from pathlib import Path

from fastapi import FastAPI
from sqlalchemy import select

from casework.web import add_user
from casework.workbench import WebLabelViewRow, Workbench
from casework.workbench.models_labelling import RawLabelRow
from tests.web.chromium import BROWSER_MARKS
from tests.web.helpers import person
from tests.web.live import live_server
from tests.web.pages import label_all

SCREENSHOTS = Path(__file__).parents[2] / "docs" / "screenshots"

pytestmark = BROWSER_MARKS


def test_a_labeller_labels_two_cases_with_the_keyboard(
    app: FastAPI, wb: Workbench, browser_page: object
) -> None:
    from playwright.sync_api import Page, expect

    page = browser_page
    assert isinstance(page, Page)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    token = add_user(wb, "lab-1", ["labeller"])
    with live_server(app) as base:
        page.goto(f"{base}/signin/{token}")
        # Autofocus is applied at a rendering update that can come after the load event (a cold or
        # busy browser): wait for the focus, then Enter signs in as the page says.
        expect(page.get_by_role("button", name="Sign in")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page).to_have_url(f"{base}/label")
        expect(page.locator("h1")).to_contain_text("d-1")
        expect(page.locator("#progress")).to_contain_text("0 done / 5 assigned")
        # The page puts the focus on the outcome once its DOM is loaded: keys pressed before that
        # would be taken back by it (a busy machine), so wait for it as a person sees the focus.
        page.wait_for_load_state("domcontentloaded")
        expect(page.locator("#label-form input[name=outcome]").first).to_be_focused()
        # Case 1: outcome with a key, two required tools and a fact, all from the keyboard.
        page.keyboard.press("1")
        page.keyboard.press("Tab")
        page.keyboard.press("Space")  # required: get_order
        page.keyboard.press("Tab")
        page.keyboard.press("Space")  # required: issue_refund
        for _ in range(5):
            page.keyboard.press("Tab")  # past the rest of the tools, to the first fact line
        page.keyboard.type("refund for the broken mug")
        page.keyboard.press("Control+Enter")
        expect(page.locator("#progress")).to_contain_text("1 done / 5 assigned")
        expect(page.locator(".flash")).to_have_text("Saved d-1.")
        expect(page.locator("h1")).to_contain_text("d-3")  # d-2 is stale, not queued
        if os.environ.get("CASEWORK_SCREENSHOTS") == "1":
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "label-queue.png"), full_page=False)
        # Case 2: escalate, submitted with Enter on the focused submit button.
        page.keyboard.press("4")
        page.locator("#submit-label").focus()  # as Tab would reach it
        page.keyboard.press("Enter")
        expect(page.locator("#progress")).to_contain_text("2 done / 5 assigned")
        expect(page.locator(".flash")).to_have_text("Saved d-3.")
        assert page.evaluate("document.querySelectorAll('script:not([src])').length") == 0
    with wb.session() as session:
        rows = session.scalars(select(RawLabelRow).order_by(RawLabelRow.case_id)).all()
        views = session.scalars(select(WebLabelViewRow).order_by(WebLabelViewRow.case_id)).all()
    got = [(r.case_id, r.outcome, r.answer_facts) for r in rows]
    assert got == [("d-1", "resolve", ["refund for the broken mug"]), ("d-3", "escalate", [])]
    assert rows[0].required == {"get_order": True, "issue_refund": True, "escalate_to_human": False}
    assert all(r.seconds_on_screen is not None and r.seconds_on_screen > 0 for r in rows)
    assert all(v.client_seconds is not None for v in views)
    assert problems == []


def test_an_adjudicator_decides_with_the_keyboard(
    app: FastAPI, wb: Workbench, browser_page: object
) -> None:
    from playwright.sync_api import Page, expect

    page = browser_page
    assert isinstance(page, Page)
    problems: list[str] = []
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    label_all(person(app, wb, "lab-1", "labeller"), person(app, wb, "lab-2", "labeller"))
    token = add_user(wb, "adj-1", ["adjudicator"])
    with live_server(app) as base:
        page.goto(f"{base}/signin/{token}")
        expect(page.get_by_role("button", name="Sign in")).to_be_focused()
        page.keyboard.press("Enter")
        expect(page).to_have_url(f"{base}/")
        page.goto(f"{base}/adjudicate")
        expect(page.locator("h1")).to_contain_text("d-1")
        expect(page.locator("fieldset.choice legend")).to_contain_text("A B M W")  # documented
        write = page.locator("details.write")
        expect(write).not_to_have_attribute("open", "")
        page.keyboard.press("w")  # write the final label: opens its fields
        expect(page.get_by_label("Write the final label (below)")).to_be_checked()
        expect(write).to_have_attribute("open", "")
        page.keyboard.press("m")
        expect(page.get_by_label("Merge (as ticked above)")).to_be_checked()
        page.locator("textarea[name=gap_note]").fill("b")  # keys typed into a note stay text
        page.locator("textarea[name=gap_note]").press("a")
        expect(page.get_by_label("Merge (as ticked above)")).to_be_checked()
        page.locator("#label-a").click()  # out of the note
        page.keyboard.press("b")
        expect(page.get_by_label("Pick B")).to_be_checked()
        page.keyboard.press("Control+Enter")
        expect(page.locator(".flash")).to_have_text("Decided d-1.")
        expect(page.locator("h1")).to_contain_text("u-1")
        assert problems == []
    with wb.session() as session:
        row = session.scalars(
            select(RawLabelRow).where(
                RawLabelRow.role == "adjudicator", RawLabelRow.case_id == "d-1"
            )
        ).one()
    assert row.outcome == "resolve"  # side B of d-1 is lab-1's label (tests/web/test_pages.py)
