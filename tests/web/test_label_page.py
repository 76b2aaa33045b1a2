"""The labeller's page at 1280×800 in a real browser: the form without scrolling, the guideline as
safe HTML (Debian's chromium, headless, via Playwright)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI

from casework.project import Project
from casework.web import add_user
from casework.workbench import Workbench
from tests.web.chromium import BROWSER_MARKS, CHROMIUM
from tests.web.live import live_server

SCREENSHOTS = Path(__file__).parents[2] / "docs" / "screenshots"

pytestmark = BROWSER_MARKS


@pytest.fixture
def small_screen() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            yield browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        finally:
            browser.close()


def test_the_form_is_visible_without_scrolling_and_the_guideline_is_safe_html(
    project: Project, app: FastAPI, wb: Workbench, small_screen: object
) -> None:
    from playwright.sync_api import Page, expect

    page = small_screen
    assert isinstance(page, Page)
    guideline = project.root / "guidelines" / "refunds.md"
    guideline.write_text(
        guideline.read_text()
        + "\n## Escalation\n\n- **older than 30 days**: escalate\n\n"
        + "<script>window.ranGuidelineScript = true</script>\n",
        encoding="utf-8",
    )
    token = add_user(wb, "lab-1", ["labeller"])
    with live_server(app) as base:
        page.goto(f"{base}/signin/{token}")
        page.get_by_role("button", name="Sign in").click()
        expect(page).to_have_url(f"{base}/label")
        expect(page.locator("h1")).to_contain_text("d-1")
        box = page.locator("#label-form").bounding_box()
        assert box is not None
        assert box["y"] >= 0 and box["y"] + box["height"] <= 800, box
        assert page.evaluate("window.scrollY") == 0
        text = page.locator(".guideline-text")
        expect(text.locator("strong")).to_have_text("older than 30 days")
        expect(text).to_contain_text("<script>window.ranGuidelineScript = true</script>")
        expect(text).not_to_contain_text("version: refunds-g7")  # front matter is not shown
        assert page.evaluate("window.ranGuidelineScript === undefined")
        assert text.locator("script").count() == 0
        expect(page.locator("details.tools")).not_to_have_attribute("open", "")
        if os.environ.get("CASEWORK_SCREENSHOTS") == "1":
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / "label-page-1280x800.png"), full_page=False)
