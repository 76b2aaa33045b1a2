"""A real browser (Debian's chromium, headless): two reviewers review trials by keyboard only.

On the bundled bookings example run by its sloppy agent, four trials go to both ana and ben.
They agree on two (one within the ±1 step tolerance), both mark none on a third, and disagree on
the fourth (a step against none); an adjudicator decides that one, by keyboard too. The step
kappa `casework review agreement` prints equals the one computed here by hand from p_o and p_e.
With ``CASEWORK_SCREENSHOTS=1`` it writes `docs/screenshots/review-trajectory.png` and
`docs/screenshots/review-trajectory-adjudicate.png`.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from casework.cli import cli
from casework.project import Project
from casework.review import list_tasks
from casework.web import add_user, create_app
from tests.web.chromium import BROWSER_MARKS, CHROMIUM
from tests.web.live import live_server
from tests.web.trajectories import bookings_with_run, fresh_copy, queue_trials

SCREENSHOTS = Path(__file__).parents[2] / "docs" / "screenshots"

pytestmark = BROWSER_MARKS

#: What each reviewer decides, by trial (in the order of the trials' step counts, longest first):
#: a step, its category and fault, or None for "no step failed".
Mark = tuple[int, str, str] | None
PLAN: list[dict[str, Mark]] = [
    {"ana": (3, "step-repetition", "agent"), "ben": (4, "step-repetition", "agent")},  # ±1
    {"ana": (1, "no-verification", "agent"), "ben": (1, "no-verification", "agent")},
    {"ana": None, "ben": None},
    {"ana": (2, "disobey-task", "agent"), "ben": None},  # the disagreement
]
#: Keys of the severities and faults (shown on the page).
SEVERITY_KEY, FAULT_KEY = "o", {"agent": "a", "simulated_user": "u"}


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """The example, run (before the browser starts: Playwright's sync API holds an event loop)."""
    root = tmp_path_factory.mktemp("trajectory") / "bookings"
    return root, bookings_with_run(root)


@pytest.fixture
def browser(built: tuple[Path, str]) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            yield launched
        finally:
            launched.close()


def _page(browser: Any, base: str, token: str, problems: list[str]) -> Any:
    """A person's page, signed in from the keyboard (Enter on the focused button)."""
    from playwright.sync_api import expect

    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(f"{base}/signin/{token}")
    expect(page.get_by_role("button", name="Sign in")).to_be_focused()
    page.keyboard.press("Enter")
    expect(page).not_to_have_url(re.compile(r"/signin/"))
    page.goto(f"{base}/review")
    first = page.locator("a.open-item").first
    expect(first).to_be_focused()  # the list opens on its first item: Enter opens it
    page.keyboard.press("Enter")
    return page


def _shot(page: Any, name: str) -> None:
    if os.environ.get("CASEWORK_SCREENSHOTS") == "1":
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=False)


def _review_with_keys(page: Any, mark: Mark, category_label: str | None = None) -> None:
    """Mark one trial with keys only, then Enter: the page moves on."""
    from playwright.sync_api import expect

    # The page puts the focus on the first step once its DOM is loaded; keys pressed before that
    # would be taken back by it on a busy machine, so wait for it as a person sees the focus.
    expect(page.locator("ol.steps li.step").first).to_be_focused()
    if mark is None:
        page.keyboard.press("n")
        expect(page.locator("#marked-step")).to_have_text("none")
    else:
        step, category, fault = mark
        page.keyboard.press("ArrowDown")
        expect(page.locator("#step-1")).to_be_focused()
        page.keyboard.press("ArrowUp")
        page.keyboard.press(str(step))
        expect(page.locator(f"#step-{step}")).to_be_focused()
        page.keyboard.press("f")
        expect(page.locator("#marked-step")).to_have_text(str(step))
        expect(page.locator(f"#step-{step} input[name=step]")).to_be_checked()
        page.keyboard.press("t")
        select = page.locator("select[name=category]")
        expect(select).to_be_focused()
        page.keyboard.type(category)  # the list's own type-ahead
        expect(select).to_have_value(category)
        page.keyboard.press("Escape")
        expect(page.locator(f"#step-{step}")).to_be_focused()
        page.keyboard.press(SEVERITY_KEY)
        page.keyboard.press(FAULT_KEY[fault])
        expect(page.locator(f"input[name=fault][value={fault}]")).to_be_checked()
        expect(page.locator("input[name=severity][value=major]")).to_be_checked()
    if category_label:
        _shot(page, category_label)
    page.keyboard.press("Enter")
    expect(page.locator(".flash")).to_contain_text("Decided item")


def _trial(page: Any) -> str:
    subject = page.locator("h1 small").inner_text().split(" · ")[1]
    return str(subject.rpartition("#")[0])


def _by_hand(a: list[str], b: list[str]) -> tuple[float, float, float]:
    """Cohen's kappa from its definition: p_o, p_e from the raters' marginal shares, kappa."""
    n = len(a)
    p_o = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    p_e = sum(ca[c] * cb[c] for c in set(a) | set(b)) / (n * n)
    return p_o, p_e, (p_o - p_e) / (1 - p_e)


def test_two_reviewers_review_trials_by_keyboard_and_an_adjudicator_settles_one(
    built: tuple[Path, str], browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from playwright.sync_api import expect

    template, run_id = built
    project: Project = fresh_copy(template, tmp_path / "bookings", monkeypatch)
    tasks = queue_trials(project, run_id, 4, ["ana", "ben"], overlap=1, seed=5)
    steps = {t.subject.rpartition("#")[0]: len(t.payload["steps"]) for t in tasks}
    trials = sorted(steps, key=lambda k: (-steps[k], k))
    assert len(trials) == 4 and steps[trials[0]] >= 5 and min(steps.values()) >= 3
    plan = dict(zip(trials, PLAN, strict=True))
    app = create_app(project)
    wb = app.state.workbench
    tokens = {n: add_user(wb, n, ["reviewer"]) for n in ("ana", "ben")}
    tokens["cleo"] = add_user(wb, "cleo", ["reviewer", "adjudicator"])
    problems: list[str] = []
    try:
        with live_server(app) as base:
            for name in ("ana", "ben"):
                page = _page(browser, base, tokens[name], problems)
                for done in range(4):
                    trial = _trial(page)
                    shot = "review-trajectory" if (name, done) == ("ana", 0) else None
                    _review_with_keys(page, plan[trial][name], shot)
                    expect(page.locator("body")).not_to_contain_text("verdict")
                expect(page).to_have_url(re.compile(r"/review\?decided=\d+$"))
                expect(page.locator("#progress")).to_contain_text("Decided item")
                assert page.evaluate("document.querySelectorAll('script:not([src])').length") == 0
            # the one disagreement went to an adjudicator, who sees both reviews
            page = _page(browser, base, tokens["cleo"], problems)
            assert _trial(page) == trials[3]
            expect(page.locator("tr.review td.review-step")).to_have_count(2)
            assert sorted(page.locator("tr.review td.review-step").all_inner_texts()) == [
                "2",
                "none",
            ]
            _review_with_keys(page, (2, "disobey-task", "simulated_user"))
            expect(page.locator("#progress")).to_contain_text("0 open review items")
            page.goto(f"{base}/review/{max(t.id for t in list_tasks(project))}")
            _shot(page, "review-trajectory-adjudicated")
    finally:
        wb.close()
    assert problems == []
    stored = list_tasks(project, kind="trajectory")
    assert all(t.status == "decided" for t in stored) and len(stored) == 9
    adj = next(t for t in stored if t.payload["role"] == "adjudicate")
    assert (adj.reviewer, adj.data) == (
        "cleo",
        {
            "step": 2,
            "category": "disobey-task",
            "severity": "major",
            "fault": "simulated_user",
            "taxonomy": "mast-1",
        },
    )
    # step-level kappa: the command's, and by hand (tolerance 1: ben's 4 reads as ana's 3)
    result = CliRunner().invoke(cli, ["review", "agreement", "--format", "json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    ana = [str(m[0]) if m else "none" for m in (plan[t]["ana"] for t in sorted(trials))]
    ben = [str(m[0]) if m else "none" for m in (plan[t]["ben"] for t in sorted(trials))]
    ben = ["3" if (x, y) == ("3", "4") else y for x, y in zip(ana, ben, strict=True)]
    p_o, p_e, kappa = _by_hand(ana, ben)
    assert (p_o, p_e) == (3 / 4, 4 / 16)
    assert figures["pairs"] == 4
    assert figures["step_agreement"] == pytest.approx(p_o)
    assert figures["step_kappa"] == pytest.approx(kappa) == pytest.approx(2 / 3)
    cats_a = [m[1] if m else "none" for m in (plan[t]["ana"] for t in sorted(trials))]
    cats_b = [m[1] if m else "none" for m in (plan[t]["ben"] for t in sorted(trials))]
    assert figures["category_kappa"] == pytest.approx(_by_hand(cats_a, cats_b)[2])
