"""The adjudication page: the disagreements queue, both labels side by side, deciding one.

Everything comes from :mod:`casework.labelling` (:func:`adjudication_queue`, :func:`adjudicate`,
:func:`list_gaps`), the functions `casework adjudicate` uses. Labeller names stay hidden unless
the adjudicator asks (``?names=1``); the seconds on screen are the server's figure, from a
served-at token like the labeller page's (:mod:`casework.web._served`), spent by the decision.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Annotated, Any, cast

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from casework.errors import CaseworkError, DecisionConflict
from casework.labelling import (
    MERGE_FIELDS,
    AdjudicationChoice,
    FinalLabel,
    GuidelineGap,
    QueueEntry,
    adjudicate,
    adjudication_queue,
    list_gaps,
)
from casework.schema import OUTCOMES
from casework.web._render import render
from casework.web._routes import route, viewer
from casework.web._served import ServedClock, refuse_spent, spend_now

router = APIRouter()
ROLE = ("adjudicator",)
_CASE_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
Fields = Annotated[list[str], Form()]
Text = Annotated[str, Form()]
_FIELD_TITLES = {
    "outcome": "Outcome",
    "required_tools": "Required tools",
    "forbidden_tools": "Forbidden tools",
    "answer_facts": "Answer facts",
}


@dataclass(frozen=True)
class Item:
    """One queue entry with the dataset it belongs to."""

    dataset: str
    entry: QueueEntry


def _queue(request: Request, person: str, names: bool) -> tuple[list[Item], dict[str, str]]:
    """Every dataset's disagreements ``person`` may decide, lowest-agreement slice first."""
    project = request.app.state.project
    items: list[Item] = []
    tools: dict[str, str] = {}
    for dataset in project.dataset_names():
        queue = adjudication_queue(project, dataset, reveal_names=names, adjudicator=person)
        items += [Item(queue.dataset, e) for e in queue.entries]
        tools.update(dict(queue.tools))
    items.sort(
        key=lambda i: (
            i.entry.slice_kappa is not None,
            i.entry.slice_kappa or 0.0,
            i.dataset,
            i.entry.slice,
            i.entry.case_id,
        )
    )
    return items, tools


def _gaps_by_slice(request: Request) -> dict[str, list[GuidelineGap]]:
    grouped: dict[str, list[GuidelineGap]] = defaultdict(list)
    for gap in list_gaps(request.app.state.project):
        grouped[gap.slice].append(gap)
    return dict(grouped)


def _page(
    request: Request,
    target: tuple[str, str] | None = None,
    status: int = 200,
    served: str | None = None,
    **extra: Any,
) -> Response:
    """The page; ``served`` keeps a refused decision's served-at token (its time still counts)."""
    who = viewer(request)
    if who is None:  # require_role ran first; kept for the type checker
        raise HTTPException(401, "sign in with the link you were given")
    names = request.query_params.get("names") == "1"
    items, tools = _queue(request, who.name, names)
    if target is None:
        current = items[0] if items else None
    else:
        current = next((i for i in items if (i.dataset, i.entry.case_id) == target), None)
        if current is None:
            raise HTTPException(404, "no such disagreement in your queue")
    context: dict[str, Any] = {
        "items": items,
        "current": current,
        "tools": tools,
        "names": names,
        "gaps": _gaps_by_slice(request),
        "fields": [(f, _FIELD_TITLES[f]) for f in MERGE_FIELDS],
        "outcomes": OUTCOMES,
        **extra,
    }
    if current is not None:
        entry = current.entry
        clock: ServedClock = request.app.state.served
        kept = served if target == (current.dataset, entry.case_id) else None
        context["served"] = kept or clock.token(who, _subject(current.dataset, entry.case_id))
        context["pretty"] = {
            k: json.dumps(entry.situation[k], indent=2, ensure_ascii=False, sort_keys=True)
            for k in ("fixtures", "state", "injected")
            if entry.situation.get(k)
        }
    return render(request, "adjudicate/queue.html", status=status, title="Adjudicate", **context)


def _subject(dataset: str, case_id: str) -> str:
    """What an adjudication form's served-at token is about."""
    return json.dumps(["adjudicate", dataset, case_id])


@route(router, "GET", "/adjudicate", roles=ROLE, nav="Adjudicate")
def queue_page(request: Request) -> Response:
    """The first open disagreement (lowest-agreement slice first), the queue and the gap notes."""
    decided = request.query_params.get("decided", "")
    if _CASE_ID.fullmatch(decided):  # only an id goes in the message, never free text
        return _page(request, flash=f"Decided {decided}.")
    return _page(request)


@route(router, "GET", "/adjudicate/{dataset}/{case_id}", roles=ROLE)
def case_page(request: Request, dataset: str, case_id: str) -> Response:
    """One disagreement of the queue."""
    return _page(request, (dataset, case_id))


def _written(outcome: str, required: list[str], forbidden: list[str], facts: str) -> FinalLabel:
    lines = tuple(line.strip() for line in facts.splitlines() if line.strip())
    return FinalLabel(outcome, tuple(required), tuple(forbidden), lines)


@route(router, "POST", "/adjudicate/{dataset}/{case_id}", roles=ROLE)
def decide(
    request: Request,
    dataset: str,
    case_id: str,
    choice: Text = "",
    merge_outcome: Text = "A",
    merge_required_tools: Text = "A",
    merge_forbidden_tools: Text = "A",
    merge_answer_facts: Text = "A",
    outcome: Text = "",
    required: Fields = [],  # noqa: B006  (FastAPI copies defaults per request)
    forbidden: Fields = [],  # noqa: B006
    facts: Text = "",
    gap: Text = "",
    gap_note: Text = "",
    served: Text = "",
) -> Response:
    """Store the final label (pick A, pick B, merge field-wise, or write it), maybe a gap note."""
    who = viewer(request)
    assert who is not None  # require_role ran first
    clock: ServedClock = request.app.state.served
    shown = clock.check(who, _subject(dataset, case_id), served)
    refuse_spent(request.app.state.workbench, shown)
    merge = {
        "outcome": merge_outcome,
        "required_tools": merge_required_tools,
        "forbidden_tools": merge_forbidden_tools,
        "answer_facts": merge_answer_facts,
    }
    target = (dataset, case_id)
    try:
        adjudicate(
            request.app.state.project,
            dataset,
            case_id,
            adjudicator=who.name,
            choice=cast(AdjudicationChoice, choice),  # checked by the library
            fields=merge if choice == "merge" else None,
            label=_written(outcome, required, forbidden, facts) if choice == "write" else None,
            gap_note=gap_note if gap else None,
            seconds=round(shown.seconds, 3),
        )
    except DecisionConflict as exc:
        return _refused(request, None, 409, f"Not stored: {exc.render()}")
    except CaseworkError as exc:
        return _refused(request, target, 422, exc.render(), served)
    spend_now(request.app.state.workbench, shown)
    return RedirectResponse(f"/adjudicate?decided={case_id}", status_code=303)


def _refused(
    request: Request,
    target: tuple[str, str] | None,
    status: int,
    message: str,
    served: str | None = None,
) -> Response:
    try:
        return _page(request, target, status=status, served=served, error=message)
    except HTTPException:  # the case left the queue since the page was served
        case_id = target[1] if target else "the case"
        gone = (
            f"Not stored: {case_id} is no longer open for you (another adjudicator decided "
            f"or took it first). {message}"
        )
        return _page(request, None, status=409, error=gone)
