"""The review page: one generic item model, one template per kind (leakage pairs, trajectories…).

Everything comes from :mod:`casework.review` (:func:`sync_leakage`, :func:`list_tasks`,
:func:`get_task`, :func:`decide_task`), the functions `casework review` uses; the decisions
offered are the kind's (:func:`casework.review.review_kind`); a kind without a template of its
own shows its payload. A disagreement is listed, shown and decided only for adjudicators (the
queue's rules then apply: never one who labelled the case). Of two reviewers deciding one item,
the second gets a 409 page saying who decided it first. A ``trajectory`` item has its own form
(first failing step, category, severity, fault) and access rules
(:mod:`casework.web._trajectory`); deciding one opens the person's next trajectory item.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Form, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from casework.errors import CaseworkError, DecisionConflict, UsageError
from casework.review import (
    DISAGREEMENT,
    ReviewTask,
    decide_task,
    get_task,
    list_tasks,
    review_kind,
    sync_leakage,
)
from casework.runner.sim_audit import TRAJECTORY
from casework.web._hints import hint_text, next_steps
from casework.web._render import highlighted, render
from casework.web._routes import route, viewer
from casework.web._served import ServedClock, refuse_spent, spend_now
from casework.web._trajectory import decision_of, next_item, page_context, refusal

router = APIRouter()
ROLE = ("reviewer",)
#: Kinds that also take a role of their own: a disagreement is an adjudicator's decision.
KIND_ROLES = {DISAGREEMENT: "adjudicator"}
Text = Annotated[str, Form()]
_TEMPLATES = Path(__file__).parent / "templates" / "review"


def _subject(task_id: int) -> str:
    """What a review form's served-at token is about."""
    return json.dumps(["review", task_id])


def _template(kind: str) -> str:
    own = _TEMPLATES / f"kind-{kind}.html"
    return f"review/kind-{kind}.html" if own.is_file() else "review/kind-generic.html"


def _refused(request: Request, task: ReviewTask) -> str | None:
    """Why the viewer may not see ``task`` (``None``: they may)."""
    who = viewer(request)
    role = KIND_ROLES.get(task.kind)
    if who is None or (role is not None and role not in who.roles):
        return f"a {task.kind} item takes the {role} role"
    return refusal(who, task) if task.kind == TRAJECTORY else None


def _list_page(request: Request, status: int = 200, **extra: Any) -> Response:
    project = request.app.state.project
    tasks = [t for t in list_tasks(project) if _refused(request, t) is None]
    open_tasks = [t for t in tasks if t.status == "open"]
    settled = sorted(
        (t for t in tasks if t.status != "open"), key=lambda t: t.decided_at or t.created_at
    )[-20:][::-1]
    return render(
        request,
        "review/list.html",
        status=status,
        title="Review",
        open_tasks=open_tasks,
        settled=settled,
        datasets=project.dataset_names(),
        **extra,
    )


@route(router, "GET", "/review", roles=ROLE, nav="Review")
def list_page(request: Request) -> Response:
    """Open review items of every kind, recent decisions, and the leakage sync button."""
    query = request.query_params
    decided, synced = query.get("decided", ""), query.get("synced", "").split(".")
    if decided.isdigit():
        return _list_page(request, flash=f"Decided item {decided}.")
    if len(synced) == 2 and all(n.isdigit() for n in synced):
        return _list_page(
            request, flash=f"Synced: {synced[0]} new leakage pair(s), {synced[1]} withdrawn."
        )
    return _list_page(request)


@route(router, "POST", "/review/sync", roles=ROLE)
def sync(request: Request) -> Response:
    """Build ``leakage-pair`` items from every dataset's open leakage flags."""
    project = request.app.state.project
    created = withdrawn = 0
    try:
        for dataset in project.dataset_names():
            report = sync_leakage(project, dataset)
            created, withdrawn = created + len(report.created), withdrawn + len(report.withdrawn)
    except CaseworkError as exc:
        return _list_page(
            request, status=422, error=exc.render(hint=hint_text), next_steps=next_steps(exc)
        )
    return RedirectResponse(f"/review?synced={created}.{withdrawn}", status_code=303)


def _task(request: Request, task_id: int) -> ReviewTask:
    try:
        task = get_task(request.app.state.project, task_id)
    except UsageError as exc:
        raise HTTPException(404, "no such review item") from exc
    why = _refused(request, task)
    if why is not None:
        raise HTTPException(403, why)
    return task


def _item_page(
    request: Request,
    task: ReviewTask,
    status: int = 200,
    served: str | None = None,
    **extra: Any,
) -> Response:
    """The item's page; ``served`` keeps a refused decision's token (its time still counts)."""
    who = viewer(request)
    assert who is not None  # require_role ran first
    clock: ServedClock = request.app.state.served
    context: dict[str, Any] = {
        "task": task,
        "decisions": review_kind(task.kind).decisions,
        "served": served or clock.token(who, _subject(task.id)),
        "kind_template": _template(task.kind),
        "payload_json": json.dumps(task.payload, indent=2, ensure_ascii=False, sort_keys=True),
        **extra,
    }
    if task.kind == "leakage-pair":
        context["sides"] = [
            (task.payload[s], highlighted(task.payload[s]["text"], task.payload[s]["highlight"]))
            for s in ("left", "right")
        ]
    if "case" in task.payload:
        case = extra.get("edited") or json.dumps(
            task.payload["case"], indent=2, ensure_ascii=False, sort_keys=True
        )
        context["case_json"] = case
    if task.kind == TRAJECTORY:
        context |= page_context(request.app.state.project, task, extra.get("chosen", {}))
        context["own_form"] = True
    return render(request, "review/item.html", status=status, title=f"Review {task.id}", **context)


@route(router, "GET", "/review/{task_id}", roles=ROLE)
def item_page(request: Request, task_id: int) -> Response:
    """One review item, rendered by its kind's template, with the kind's decisions."""
    decided = request.query_params.get("decided", "")
    if decided.isdigit():
        return _item_page(request, _task(request, task_id), flash=f"Decided item {decided}.")
    return _item_page(request, _task(request, task_id))


def _edited_case(decision: str, case_json: str) -> dict[str, Any] | None:
    if decision != "edit":
        return None
    try:
        case = json.loads(case_json)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"the edited case is not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}).",
            param="case",
        ) from None
    if not isinstance(case, dict):
        raise UsageError("the edited case is a JSON object.", param="case")
    return {"case": case}


@route(router, "POST", "/review/{task_id}", roles=ROLE)
def decide(
    request: Request,
    task_id: int,
    decision: Text = "",
    reason: Text = "",
    case_json: Text = "",
    served: Text = "",
    step: Text = "",
    category: Text = "",
    severity: Text = "",
    fault: Text = "",
) -> Response:
    """Decide the item (the kind checks and applies the decision); the next open item follows."""
    who = viewer(request)
    assert who is not None  # require_role ran first
    task = _task(request, task_id)
    clock: ServedClock = request.app.state.served
    shown = clock.check(who, _subject(task_id), served)
    refuse_spent(request.app.state.workbench, shown)
    chosen = {"step": step, "category": category, "severity": severity, "fault": fault}
    try:
        if task.kind == TRAJECTORY:
            decision, data = decision_of(step, category, severity, fault)
        else:
            data = _edited_case(decision, case_json)
        decide_task(
            request.app.state.project,
            task_id,
            decision,
            reviewer=who.name,
            reason=reason or None,
            seconds=round(shown.seconds, 3),
            data=data,
        )
    except DecisionConflict as exc:
        fresh = _task(request, task_id)
        return _item_page(request, fresh, status=409, conflict=exc.render())
    except CaseworkError as exc:
        return _item_page(
            request,
            task,
            status=422,
            served=served,
            error=exc.render(hint=hint_text),
            next_steps=next_steps(exc),
            edited=case_json or None,
            chosen=chosen,
        )
    spend_now(request.app.state.workbench, shown)
    if task.kind == TRAJECTORY:
        after = next_item(list_tasks(request.app.state.project, kind=TRAJECTORY), who, task_id)
        if after is not None:
            return RedirectResponse(f"/review/{after}?decided={task_id}", status_code=303)
    return RedirectResponse(f"/review?decided={task_id}", status_code=303)
