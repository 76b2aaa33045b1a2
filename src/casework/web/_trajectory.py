"""The ``trajectory`` review page: who may see an item, what it shows, and its form's decision.

A trial is shown step by step (the payload built by :mod:`casework.review._trajectory`: turns,
tool calls with their arguments and results or errors, the state diff, the simulated user's
scenario and record), never its verdict, label or oracle until the item is decided; then the
trial's verdict is read from its run. Who may see an item (:func:`refusal`):

- a frozen case's trial: admins only (as `review add-trials` draws frozen cases only when asked);
- a review: the reviewer it was given to (and admins), so a second reviewer stays blind to the
  first;
- an adjudication: adjudicators who reviewed neither side (the queue's rule, enforced here before
  the page is shown).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from casework.errors import CaseworkError, UsageError
from casework.project import Project
from casework.review._task import ReviewTask
from casework.review._taxonomy import load_taxonomy
from casework.review._trajectory import FAULTS, SEVERITIES
from casework.runner.sim_audit import ADJUDICATE, TRAJECTORY
from casework.runner.store import load_run
from casework.web._accounts import Viewer

#: Keys of the severities and faults on the page (``static/app.js`` reads them from the form).
SEVERITY_KEYS = {"minor": "i", "major": "o", "critical": "p"}
FAULT_KEYS = {"agent": "a", "simulated_user": "u", "environment": "e", "case": "c"}
NONE = "none"
"""The ``step`` form value of a trial with no failing step."""


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def refusal(who: Viewer, task: ReviewTask) -> str | None:
    """Why ``who`` may not see or decide the trajectory item ``task`` (``None``: they may)."""
    payload = task.payload
    admin = "admin" in who.roles
    if payload.get("frozen") and not admin:
        return "a frozen case's trial is shown only to admins"
    if payload.get("role") == ADJUDICATE:
        if "adjudicator" not in who.roles:
            return "adjudicating a trajectory takes the adjudicator role"
        if who.name in {r.get("reviewer") for r in payload.get("reviews", [])}:
            return "you reviewed this trial; another person adjudicates it"
        return None
    if payload.get("reviewer") != who.name and not admin:
        return "this trial was given to another reviewer"
    return None


@dataclass(frozen=True)
class Choice:
    """One option of the form: its value, what the page calls it, and its key."""

    value: str
    text: str
    key: str


def _step_view(step: Mapping[str, Any]) -> dict[str, Any]:
    view: dict[str, Any] = {"index": step["index"], "role": step["role"]}
    if step["role"] == "tool_call":
        view["name"] = step["name"]
        view["arguments"] = _pretty(step.get("arguments", {}))
        if "error" in step:
            view["error"] = str(step["error"])
        else:
            view["result"] = _pretty(step.get("result"))
    else:
        view["text"] = str(step.get("text", ""))
    return view


def _diff_rows(diff: Any) -> list[dict[str, str]]:
    if not isinstance(diff, list):
        return []
    rows = []
    for op in diff:
        if not isinstance(op, Mapping):
            continue
        value = op.get("value", op.get("from", ""))
        rows.append(
            {
                "op": str(op.get("op", "")),
                "path": str(op.get("path", "")),
                "value": value if isinstance(value, str) else _pretty(value),
            }
        )
    return rows


def _groups(project: Project) -> list[tuple[str, list[Choice]]]:
    groups: dict[str, list[Choice]] = {}
    for c in load_taxonomy(project).categories:
        groups.setdefault(c.group or "other", []).append(Choice(c.id, c.description, ""))
    return list(groups.items())


def _verdict(project: Project, task: ReviewTask) -> dict[str, Any] | None:
    """The trial's verdict, read from its run once the item is decided (else ``None``)."""
    if task.status != "decided":
        return None
    payload = task.payload
    try:
        run = load_run(project, str(payload["run_id"]))
    except CaseworkError:
        return None  # a run deleted since: the page shows the decision without it
    for t in run.trials:
        if t.case_id == payload["case_id"] and t.trial == payload["trial"]:
            checks = [(c.name, c.status, c.evidence) for c in t.verdict.checks]
            shown = {True: "pass", False: "fail", None: "undetermined"}[t.verdict.passed]
            return {"result": shown, "checks": checks}
    return None


def page_context(project: Project, task: ReviewTask, chosen: Mapping[str, str]) -> dict[str, Any]:
    """What ``review/kind-trajectory.html`` and its form render (the template holds no logic).

    ``chosen`` holds the form's values of a refused submit, so they are kept.
    """
    payload = task.payload
    steps = [_step_view(s) for s in payload.get("steps", [])]
    reviews = []
    for r in payload.get("reviews", []):
        marked = r.get("decision") == "fail"
        reviews.append(
            {
                "reviewer": r.get("reviewer", ""),
                "step": r.get("step", "") if marked else NONE,
                "category": r.get("category", "") if marked else "",
                "severity": r.get("severity", "") if marked else "",
                "fault": r.get("fault", "") if marked else "",
                "reason": r.get("reason") or "",
            }
        )
    return {
        "trajectory": {
            "adjudication": payload.get("role") == ADJUDICATE,
            "prefix": payload.get("prefix", []),
            "steps": steps,
            "diff": _diff_rows(payload.get("state_diff")),
            "scenario": payload.get("scenario"),
            "simulator": payload.get("simulator"),
            "reviews": reviews,
            "tolerance": payload.get("tolerance", 1),
            "taxonomy": payload.get("taxonomy", ""),
            "verdict": _verdict(project, task),
        },
        "categories": _groups(project),
        "severities": [Choice(s, s, SEVERITY_KEYS[s]) for s in SEVERITIES],
        "faults": [Choice(f, f.replace("_", " "), FAULT_KEYS[f]) for f in FAULTS],
        "chosen": {k: str(chosen.get(k, "")) for k in ("step", "category", "severity", "fault")},
    }


def decision_of(
    step: str, category: str, severity: str, fault: str
) -> tuple[str, dict[str, Any] | None]:
    """The queue decision a submitted form makes: ``none``, or ``fail`` with the step's data.

    Raises:
        UsageError: No step chosen, or one that is not a step's index.
    """
    if step == NONE:
        return NONE, None
    if not step:
        raise UsageError("choose the first failing step, or none.", param="step")
    if not step.isdigit():
        raise UsageError(f"the index of a step. Got {step!r}.", param="step")
    return "fail", {
        "step": int(step),
        "category": category,
        "severity": severity,
        "fault": fault,
    }


def next_item(tasks: Sequence[ReviewTask], who: Viewer, after: int) -> int | None:
    """The next open trajectory item ``who`` may decide (after ``after``, then from the start)."""
    mine = [
        t.id
        for t in tasks
        if t.kind == TRAJECTORY
        and t.status == "open"
        and t.id != after
        and refusal(who, t) is None
        and (t.payload.get("role") == ADJUDICATE or t.payload.get("reviewer") == who.name)
    ]
    later = [i for i in mine if i > after]
    return min(later) if later else (min(mine) if mine else None)
