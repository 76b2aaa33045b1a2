"""Next steps of a library message as the web app shows them: a link where a page does the step."""

from __future__ import annotations

from typing import NamedTuple

from casework.errors import CaseworkError, Hint

__all__ = ["NextStep", "hint_step", "hint_text", "next_steps"]

#: The page that does each action the web app has (the review list holds the sync button).
_PAGES = {"review list": "/review", "review sync": "/review", "review show": "/review"}


class NextStep(NamedTuple):
    """A next step on a page: its words and, where the app has the page, the link to it."""

    text: str
    href: str | None


def _step(hint: Hint) -> NextStep:
    href = _PAGES.get(hint.action)
    if href is None:  # only the command line does it: say so, for whoever runs the project
        return NextStep(f"the project's maintainer runs `{hint.command_line()}`", None)
    return NextStep(f"the {hint.action.split()[0]} page", href)


def hint_step(hint: Hint) -> NextStep:
    """One hint as a next step on a page (a link where the app has the page)."""
    return _step(hint)


def hint_text(hint: Hint) -> str:
    """A hint as words in an error message (the link itself comes from :func:`next_steps`)."""
    return _step(hint).text


def next_steps(exc: CaseworkError) -> list[NextStep]:
    """The error's next steps, each with a link where a page does it."""
    return [_step(h) for h in exc.next_steps]
