"""The labeller queue: the next held case's blind view, the label form, skip and revise.

Everything about cases comes from :mod:`casework.labelling` (the functions the sheets use);
this module adds only the web's own rows: what was shown and for how long, notes, skips.

The page prefetches the case that comes after the one on screen (``GET …/next``: the case and
its form, with no served-at token). A submit names the item it prefetched; when that is the
next item, the answer holds only progress and a fresh token for it (``#case-slot``), and the
page shows the prefetched case with that token: its time on screen starts when it is shown,
never when it was fetched.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any, TypeVar

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response
from markdown_it import MarkdownIt
from markupsafe import Markup
from sqlalchemy import bindparam, select
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session

from casework.errors import CaseworkError, UsageError
from casework.labelling import (
    BlindCase,
    CaseNotHeld,
    HeldCase,
    LabelConflict,
    LabellerQueue,
    States,
    WebAnswer,
    blind_case,
    labeller_queue,
    submit_label,
)
from casework.schema import OUTCOMES
from casework.web._accounts import Viewer
from casework.web._render import is_htmx, render
from casework.web._routes import route, viewer
from casework.web._served import ServedClock, spend
from casework.workbench import WebLabelViewRow, WebSkipRow

router = APIRouter()
ROLE = ("labeller",)
T = TypeVar("T")
_ATTEMPTS = 4
_SQLITE_WRITER = threading.Lock()


def _who(request: Request) -> Viewer:
    found = viewer(request)
    if found is None:  # require_role ran first; kept for the type checker
        raise HTTPException(401, "sign in with the link you were given")
    return found


def _subject(dataset: str, case_id: str) -> str:
    """What a label form's served-at token is about."""
    return json.dumps(["label", dataset, case_id])


# Built once (SQLAlchemy then reuses their compiled form): these run on every page and submit.
_SKIPS_OF = select(WebSkipRow).where(WebSkipRow.labeller == bindparam("labeller"))
_VIEW_OF = select(WebLabelViewRow).where(
    WebLabelViewRow.dataset == bindparam("dataset"),
    WebLabelViewRow.case_id == bindparam("case_id"),
    WebLabelViewRow.labeller == bindparam("labeller"),
    WebLabelViewRow.guideline_version == bindparam("version"),
)


def _skips(session: Session, labeller: str) -> dict[tuple[str, str, str], WebSkipRow]:
    rows = session.scalars(_SKIPS_OF, {"labeller": labeller}).all()
    return {(r.dataset, r.case_id, r.guideline_version): r for r in rows}


def _item_key(held: HeldCase) -> str:
    """What names a prefetched item: it is shown only while the next item is this one."""
    return json.dumps([held.dataset, held.case_id, held.guideline_version])


def _next(
    queue: LabellerQueue,
    skips: dict[tuple[str, str, str], WebSkipRow],
    excluding: tuple[str, str] | None = None,
) -> HeldCase | None:
    """The next open case: unskipped ones in queue order, then skipped ones, oldest skip first.

    ``excluding`` leaves one case out: the one on screen, when asking what comes after it.
    """

    def order(item: HeldCase) -> tuple[bool, str]:
        skip = skips.get((item.dataset, item.case_id, item.guideline_version))
        return (skip is not None, skip.skipped_at.isoformat() if skip else "")

    items = [i for i in queue.open_items() if (i.dataset, i.case_id) != excluding]
    open_items = sorted(items, key=order)
    return open_items[0] if open_items else None


# The guideline is people's text from the repository: markdown-it's "js-default" preset escapes
# raw HTML (a <script> in the file shows as text) and refuses javascript: links.
_MARKDOWN = MarkdownIt("js-default", {"typographer": False}).enable("table")


def guideline_html(text: str) -> Markup:
    """A guideline file as HTML: front matter dropped, raw HTML escaped, never run.

    The HTML comes from markdown-it with raw HTML off, so the Markup wrapper adds no trust.
    """
    lines = text.splitlines()
    if lines and lines[0].strip() == "---":
        closing = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if closing is not None:
            lines = lines[closing + 1 :]
    tokens = _MARKDOWN.parse("\n".join(lines))
    for token in tokens:
        # Its headings sit under the page's own h1 and h2: # becomes h3, ## h4, and so on.
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1:]) + 2)}"
    return Markup(_MARKDOWN.renderer.render(tokens, _MARKDOWN.options, {}))


def _fixture_rows(situation: dict[str, Any]) -> list[dict[str, str]]:
    """Fixtures as table rows: tool, what the call must match, and the response or error."""
    rows = []
    for fixture in situation.get("fixtures") or []:
        error = fixture.get("error")
        shown = {"error": error} if error else fixture.get("response")
        rows.append(
            {
                "tool": str(fixture.get("tool", "")),
                "match": json.dumps(fixture.get("match") or {}, ensure_ascii=False, sort_keys=True),
                "response": json.dumps(shown, indent=1, ensure_ascii=False, sort_keys=True),
            }
        )
    return rows


def _case_context(case: BlindCase, served: str) -> dict[str, Any]:
    """The context of ``label/_case.html``; ``served`` is empty on a prefetched case."""
    situation = case.line["situation"]
    own = case.own
    return {
        "case": case,
        "item_key": _item_key(case.held),
        "situation": situation,
        "guideline_html": guideline_html(case.guideline_text),
        "fixture_rows": _fixture_rows(situation),
        "sent_back_by": case.line.get("sent_back_by") or [],
        "pretty": {
            k: json.dumps(situation[k], indent=2, ensure_ascii=False, sort_keys=True)
            for k in ("state", "injected")
            if situation.get(k)
        },
        "served": served,
        "outcomes": OUTCOMES,
        "chosen": own.outcome if own else None,
        "required": {t.name for t in own.required_tools} if own else set(),
        "forbidden": {t.name for t in own.forbidden_tools} if own else set(),
        "facts": list(own.answer_facts) if own else [],
    }


def _work(
    request: Request,
    session: Session,
    who: Viewer,
    target: tuple[str, str] | None = None,
    served: str | None = None,
    prefetched: str = "",
    **extra: Any,
) -> dict[str, Any]:
    """The context of the work area: progress, the case (next, or ``target``), done list.

    ``served`` keeps the served-at token of a refused submit on the form shown again, so the
    time the labeller spent before fixing it still counts. ``prefetched`` names the item the
    page holds already (:func:`_item_key`): when it is the next one, the context holds only a
    ``slot`` with its key and a token made now, when it is about to be shown.
    """
    project = request.app.state.project
    states: States = {}
    queue = labeller_queue(project, session, who.name, states=states)
    skips = _skips(session, who.name)
    if target is None:
        held = _next(queue, skips)
    else:
        held = next((i for i in queue.items if (i.dataset, i.case_id) == target), None)
        if held is None:
            raise CaseNotHeld(f"{who.name} holds no case '{target[1]}' of '{target[0]}'.")
    context: dict[str, Any] = {"queue": queue, "case": None, "skipped": skips, **extra}
    if held is None:
        return context
    clock: ServedClock = request.app.state.served
    kept = served if target == (held.dataset, held.case_id) else None
    token = kept or clock.token(who, _subject(held.dataset, held.case_id))
    if prefetched and prefetched == _item_key(held):
        context["slot"] = {"item": prefetched, "served": token}
        return context
    case = blind_case(project, session, who.name, held.dataset, held.case_id, states=states)
    context.update(_case_context(case, token))
    return context


def _page(request: Request, status: int = 200, **context: Any) -> Response:
    template = "label/_work.html" if is_htmx(request) else "label/queue.html"
    return render(request, template, status=status, title="Label", **context)


@route(router, "GET", "/label", roles=ROLE, nav="Label")
def queue_page(request: Request) -> Response:
    """The next case to label, with progress and the guideline."""
    who = _who(request)
    with request.app.state.workbench.reading() as session:
        return _page(request, **_work(request, session, who))


@route(router, "GET", "/label/{dataset}/{case_id}", roles=ROLE)
def case_page(request: Request, dataset: str, case_id: str) -> Response:
    """One held case (to revise a label, or to come back to a skipped case)."""
    who = _who(request)
    with request.app.state.workbench.reading() as session:
        try:
            return _page(request, **_work(request, session, who, (dataset, case_id)))
        except CaseNotHeld as exc:
            raise HTTPException(404, "no such case in your queue") from exc


@route(router, "GET", "/label/{dataset}/{case_id}/next", roles=ROLE)
def prefetch_next(request: Request, dataset: str, case_id: str) -> Response:
    """The case after this one, for the page to hold until this one is submitted.

    It carries no served-at token (its form's ``served`` is empty, and a submit of it is
    refused): the token comes with the submit that shows it. 204 when nothing comes after.
    """
    who = _who(request)
    project = request.app.state.project
    with request.app.state.workbench.reading() as session:
        states: States = {}
        queue = labeller_queue(project, session, who.name, states=states)
        held = _next(queue, _skips(session, who.name), excluding=(dataset, case_id))
        if held is None:
            return Response(status_code=204)
        case = blind_case(project, session, who.name, held.dataset, held.case_id, states=states)
        response = render(request, "label/_case.html", **_case_context(case, ""))
    # A fetched-ahead form is the labeller's own work: no shared cache may keep it.
    response.headers["Cache-Control"] = "no-store"
    return response


def _record_view(
    session: Session,
    who: Viewer,
    case: BlindCase,
    seconds: float,
    client: float | None,
    note: str,
) -> None:
    key = (case.held.dataset, case.held.case_id, who.name, case.held.guideline_version)
    params = {"dataset": key[0], "case_id": key[1], "labeller": key[2], "version": key[3]}
    row = session.scalars(_VIEW_OF, params).one_or_none()
    now = datetime.now(UTC)
    if row is None:
        session.add(
            WebLabelViewRow(
                dataset=key[0],
                case_id=key[1],
                labeller=key[2],
                guideline_version=key[3],
                fields_shown=list(case.fields_shown),
                server_seconds=seconds,
                client_seconds=client,
                note=note,
                revisions=0,
                updated_at=now,
            )
        )
        return
    row.fields_shown = sorted(set(row.fields_shown) | set(case.fields_shown))
    row.server_seconds += seconds
    if client is not None:
        row.client_seconds = (row.client_seconds or 0.0) + client
    row.note, row.revisions, row.updated_at = note, row.revisions + 1, now


def _client_seconds(value: str) -> float | None:
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if 0 <= seconds < 86_400 else None


Fields = Annotated[list[str], Form()]
Text = Annotated[str, Form()]


@route(router, "POST", "/label/{dataset}/{case_id}", roles=ROLE)
def submit(
    request: Request,
    dataset: str,
    case_id: str,
    outcome: Text = "",
    required: Fields = [],  # noqa: B006  (FastAPI copies defaults per request)
    forbidden: Fields = [],  # noqa: B006
    fact: Fields = [],  # noqa: B006
    note: Text = "",
    guideline_version: Text = "",
    served: Text = "",
    visible_seconds: Text = "",
    prefetched: Text = "",
) -> Response:
    """Store (or revise) the label, then show the next case (or a token for the prefetched one)."""
    who = _who(request)
    clock: ServedClock = request.app.state.served
    shown = clock.check(who, _subject(dataset, case_id), served)
    seconds = shown.seconds
    answer = WebAnswer(outcome, required, forbidden, fact)
    wb = request.app.state.workbench
    project = request.app.state.project

    def store() -> bool:
        with wb.session() as session:
            states: States = {}  # this one case's rows, read once for both calls
            case = blind_case(project, session, who.name, dataset, case_id, states=states)
            revised = submit_label(
                project,
                session,
                who.name,
                dataset,
                case_id,
                answer,
                guideline_version=guideline_version,
                seconds_on_screen=round(seconds, 3),
                now=datetime.now(UTC),
                states=states,
            )
            _record_view(
                session, who, case, round(seconds, 3), _client_seconds(visible_seconds), note
            )
            # In this transaction: a refused submit leaves the token unspent, a replay stores
            # nothing. Last, so the write lock is taken no earlier than before.
            spend(session, shown)
            return revised

    try:
        revised = _retrying(store, one_at_a_time=wb.engine.dialect.name == "sqlite")
    except CaseNotHeld as exc:
        raise HTTPException(404, "no such case in your queue") from exc
    except UsageError as exc:
        return _refused(request, who, (dataset, case_id), exc, served=served)
    except (IntegrityError, LabelConflict) as exc:
        raise HTTPException(409, "this label was stored meanwhile (another tab?)") from exc
    except OperationalError as exc:
        raise HTTPException(503, "the database is busy; submit again") from exc
    flash = f"{'Revised' if revised else 'Saved'} {case_id}."
    if not is_htmx(request):
        return RedirectResponse("/label", status_code=303)
    with wb.reading() as session:
        return _page(request, **_work(request, session, who, prefetched=prefetched, flash=flash))


def _retrying(write: Callable[[], T], *, one_at_a_time: bool = False) -> T:
    """Run a write transaction, again after a short pause when the database was busy (SQLite).

    ``one_at_a_time`` (SQLite, which has one writer anyway) queues this worker's writers on a
    lock: they wait their turn instead of polling the busy handler, whose growing sleeps would
    let a waiting submit oversleep by hundreds of milliseconds. Other workers still queue on
    the database's busy timeout.
    """
    for attempt in range(_ATTEMPTS):
        try:
            if one_at_a_time:
                with _SQLITE_WRITER:
                    return write()
            return write()
        except OperationalError:
            if attempt == _ATTEMPTS - 1:
                raise
            time.sleep(0.05 * (attempt + 1) * (1 + random.random()))
    raise AssertionError("unreachable")


def _refused(
    request: Request,
    who: Viewer,
    target: tuple[str, str],
    exc: CaseworkError,
    served: str | None = None,
) -> Response:
    with request.app.state.workbench.reading() as session:
        try:
            context = _work(request, session, who, target, served, error=exc.render())
        except CaseNotHeld:
            context = _work(request, session, who, error=exc.render())
    return _page(request, status=422, **context)


@route(router, "POST", "/label/{dataset}/{case_id}/skip", roles=ROLE)
def skip(request: Request, dataset: str, case_id: str, reason: Text = "") -> Response:
    """Put a case at the end of the queue, with the reason (the assignment stays open)."""
    who = _who(request)
    wb = request.app.state.workbench
    if not reason.strip():
        return _refused(
            request, who, (dataset, case_id), UsageError("say why you skip.", param="reason")
        )
    with wb.session() as session:
        try:
            case = blind_case(request.app.state.project, session, who.name, dataset, case_id)
        except CaseNotHeld as exc:
            raise HTTPException(404, "no such case in your queue") from exc
        key = (dataset, case_id, case.held.guideline_version)
        row = _skips(session, who.name).get(key)
        if row is None:
            row = WebSkipRow(
                dataset=dataset,
                case_id=case_id,
                labeller=who.name,
                guideline_version=key[2],
                reason="",
                skipped_at=datetime.now(UTC),
            )
            session.add(row)
        row.reason, row.skipped_at = reason.strip()[:2000], datetime.now(UTC)
    if not is_htmx(request):
        return RedirectResponse("/label", status_code=303)
    with wb.reading() as session:
        return _page(request, **_work(request, session, who, flash=f"Skipped {case_id}."))
