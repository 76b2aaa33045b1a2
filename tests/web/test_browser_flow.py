"""A real browser (Debian's chromium, headless): label, adjudicate, review, see the dashboard change.

Two labellers label their queue with the keyboard only (disagreeing on two cases), an adjudicator
resolves one disagreement, a reviewer decides a leakage pair, and the dashboard's figures follow
(kappa checked against scikit-learn). With ``CASEWORK_SCREENSHOTS=1`` it writes
`docs/screenshots/{adjudicate,review,dashboard}.png`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from sklearn.metrics import cohen_kappa_score

from casework.leakage.flagfile import read_flags
from casework.project import Project
from casework.schema import OUTCOMES
from casework.web import add_user
from casework.workbench import Workbench
from tests.web.chromium import BROWSER_MARKS, CHROMIUM
from tests.web.live import live_server
from tests.web.pages import ANSWERS, plant_leak

SCREENSHOTS = Path(__file__).parents[2] / "docs" / "screenshots"
QUEUE = ["d-1", "d-3", "d-4", "s-1", "u-1"]  # each labeller's queue, in order

pytestmark = BROWSER_MARKS


@pytest.fixture
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            yield launched
        finally:
            launched.close()


class Session:
    """One person's browser context, signed in through their link."""

    def __init__(self, browser: Any, base: str, token: str, problems: list[str]) -> None:
        from playwright.sync_api import expect

        context = browser.new_context(viewport={"width": 1280, "height": 900})
        self.page = context.new_page()
        self.page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: problems.append(str(e)))
        self.base = base
        self.page.goto(f"{base}/signin/{token}")
        # A click, not Enter on the autofocused button: autofocus is applied at a rendering update
        # that may come after the load event on a cold or busy browser (test_browser.py waits for
        # the focus and checks Enter). Only labelling has to work from the keyboard alone.
        self.page.get_by_role("button", name="Sign in").click()
        expect(self.page).not_to_have_url(re.compile(r"/signin/"))

    def goto(self, path: str) -> Any:
        self.page.goto(f"{self.base}{path}")
        return self.page


def _shot(page: Any, name: str) -> None:
    if os.environ.get("CASEWORK_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def _label_with_keys(page: Any, answers: dict[str, str]) -> None:
    from playwright.sync_api import expect

    for done, case_id in enumerate(QUEUE, start=1):
        expect(page.locator("h1")).to_contain_text(case_id)
        page.keyboard.press(str(OUTCOMES.index(answers[case_id]) + 1))
        page.keyboard.press("Control+Enter")
        expect(page.locator("#progress")).to_contain_text(f"{done} done / 5 assigned")


def _refunds_row(page: Any) -> dict[str, str]:
    row = page.locator('#board-refunds tr[data-slice="refunds"]')
    return {
        key: row.locator(f"td.{key}").inner_text()
        for key in ("kappa", "disagreements", "review-items")
    }


def test_label_adjudicate_review_and_the_dashboard_follows(
    app: FastAPI, wb: Workbench, project: Project, browser: Any
) -> None:
    from playwright.sync_api import expect

    plant_leak(project)
    problems: list[str] = []
    tokens = {
        name: add_user(wb, name, [role])
        for name, role in (
            ("lab-1", "labeller"),
            ("lab-2", "labeller"),
            ("adj-1", "adjudicator"),
            ("rev-1", "reviewer"),
            ("boss", "admin"),
        )
    }
    with live_server(app) as base:
        people = {n: Session(browser, base, t, problems) for n, t in tokens.items()}
        board = people["boss"].goto("/dashboard")
        assert _refunds_row(board) == {"kappa": "—", "disagreements": "0", "review-items": "0"}

        for name in ("lab-1", "lab-2"):
            page = people[name].goto("/label")
            _label_with_keys(page, ANSWERS[name])
            expect(page.locator(".empty")).to_contain_text("Nothing left in your queue")

        refunds = ["d-1", "d-3", "d-4", "u-1"]
        kappa = cohen_kappa_score(
            [ANSWERS["lab-1"][c] for c in refunds], [ANSWERS["lab-2"][c] for c in refunds]
        )
        board = people["boss"].goto("/dashboard")
        assert _refunds_row(board) == {
            "kappa": f"{kappa:.2f}",
            "disagreements": "2",
            "review-items": "0",
        }

        page = people["adj-1"].goto("/adjudicate")
        expect(page.locator("#progress")).to_contain_text("2 open disagreements")
        expect(page.locator("h1")).to_contain_text("d-1")
        expect(page.locator("#label-a")).to_have_text("A")  # names hidden
        _shot(page, "adjudicate")
        page.get_by_label("Pick B").check()
        page.locator("#submit-decision").click()
        expect(page.locator(".flash")).to_have_text("Decided d-1.")
        expect(page.locator("#progress")).to_contain_text("1 open disagreement")

        page = people["rev-1"].goto("/review")
        page.locator("#sync-leakage").click()
        expect(page.locator(".flash")).to_contain_text("1 new leakage pair(s)")
        board = people["boss"].goto("/dashboard")
        assert _refunds_row(board)["review-items"] == "1"
        page.locator("a.open-item").first.click()
        expect(page.locator(".pair-text mark").first).to_contain_text("My mug from order")
        _shot(page, "review")
        page.locator("#decide-keep").click()
        expect(page.locator(".flash")).to_have_text(re.compile(r"Decided item \d+\."))

        board = people["boss"].goto("/dashboard")
        # Kappa is agreement between the labellers: adjudication settles a case, not kappa.
        assert _refunds_row(board) == {
            "kappa": f"{kappa:.2f}",
            "disagreements": "1",
            "review-items": "0",
        }
        expect(board.locator("svg circle.kappa-dot")).to_have_count(1)
        _shot(board, "dashboard")
        for person in people.values():
            assert (
                person.page.evaluate("document.querySelectorAll('script:not([src])').length") == 0
            )
    [flag] = read_flags(project, "refunds")
    assert (flag.decision, flag.reviewer) == ("keep", "rev-1")
    assert problems == []
