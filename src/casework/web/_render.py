"""Server-side rendering: one Jinja2 environment (autoescape on), one :func:`render` helper."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup, escape

from casework.web._routes import CSRF_FIELD, nav_links, viewer

_TEMPLATES = Path(__file__).parent / "templates"

# Autoescape everything: case text, fixtures and guidelines are hostile input.
ENV = Environment(
    loader=FileSystemLoader(_TEMPLATES),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def is_htmx(request: Request) -> bool:
    """Whether htmx made the request (it then wants a fragment, not a page)."""
    return request.headers.get("HX-Request") == "true"


def render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    """Render ``template`` with the base context: the viewer, nav links and the CSRF token.

    Every template may use ``who`` (the signed-in :class:`Viewer` or ``None``), ``nav``,
    ``csrf`` (the token, for hidden fields named ``csrf_field``) and ``htmx`` (fragment wanted).
    """
    who = viewer(request)
    base = {
        "who": who,
        "nav": nav_links(who),
        "csrf": who.csrf if who else "",
        "csrf_field": CSRF_FIELD,
        "htmx": is_htmx(request),
        "path": request.url.path,
    }
    html = ENV.get_template(template).render(**base, **context)
    return HTMLResponse(html, status_code=status)


def highlighted(text: str, spans: list[list[int]]) -> Markup:
    """``text`` escaped, with the ``[start, end)`` character spans wrapped in ``<mark>``.

    The text is escaped piece by piece; only the ``<mark>`` tags are markup, so hostile case
    text stays inert. Overlapping or unordered spans are merged; spans outside the text are cut.
    """
    merged: list[list[int]] = []
    for start, end in sorted((max(0, s), min(len(text), e)) for s, e in spans):
        if start >= end:
            continue
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    out: list[str] = []
    at = 0
    for start, end in merged:
        out += [str(escape(text[at:start])), f"<mark>{escape(text[start:end])}</mark>"]
        at = end
    out.append(str(escape(text[at:])))
    return Markup("".join(out))
