"""Review kind ``trajectory``: one trial's steps, the first failing step, its category and fault.

:func:`trajectory_items` samples trials of a run stratified by slice and verdict (each stratum
shuffled by the seed, then taken in turn, so failures are represented as fully as they can be)
and queues one item per (trial, reviewer); ``overlap`` of the trials go to two reviewers. The
payload holds the conversation prefix, the trial's steps (messages and recorded tool calls with
arguments and results, in order), the state diff, the simulated user's scenario and record, and
the taxonomy version; never the verdict, the label or the oracle. Frozen cases are left out
unless ``include_frozen`` (and the web app shows them only to admins).

Decisions: ``fail`` with data ``{"step": i, "category": c, "severity": s, "fault": f}`` (the
first failing step, a category of the project's taxonomy, :data:`SEVERITIES`, :data:`FAULTS`),
or ``none`` (no step failed). When both reviews of a doubled trial are in and disagree (steps
further apart than the item's tolerance, or another category or fault), an adjudication item of
the same kind is queued for anyone but the two reviewers; its decision settles the trial.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from casework.dataset import load_dataset
from casework.errors import UsageError
from casework.project import Project
from casework.review._items import assign_reviewers
from casework.review._task import NewItem, ReviewTask, WorkbenchKind
from casework.review._taxonomy import load_taxonomy
from casework.runner import TrialRecord, load_run
from casework.runner.sim_audit import (
    ADJUDICATE,
    REVIEW,
    TRAJECTORY,
    reviews_agree,
    scenario_digest,
    trial_of,
)
from casework.schema import Case, Trajectory
from casework.workbench.models_review import ReviewTaskRow

DECISIONS = ("fail", "none")
"""``fail`` marks the first failing step; ``none`` says no step failed."""
SEVERITIES = ("minor", "major", "critical")
"""How bad the failing step is."""
FAULTS = ("agent", "simulated_user", "environment", "case")
"""Who is at fault: the agent, the simulated user, the tool environment, or the case itself."""


def _call_step(call: Any) -> dict[str, Any]:
    step: dict[str, Any] = {"role": "tool_call", "name": call.name, "arguments": call.arguments}
    if call.error:
        step["error"] = call.error
    else:
        step["result"] = call.result
    return step


def trial_steps(trajectory: Trajectory) -> list[dict[str, Any]]:
    """The trial's steps in order: its messages, with the recorded tool calls where they happened.

    The fixture tool server's record is the truth about calls; an agent's messages only say
    where they fell. A message reporting ``m`` calls is preceded by the next ``m`` recorded calls;
    recorded calls no message reported come before the last assistant message (or at the end).
    Tool-result messages are left out: each call step carries its result.
    """
    calls = list(trajectory.tool_calls)
    taken = 0
    steps: list[dict[str, Any]] = []
    last_assistant = max(
        (i for i, m in enumerate(trajectory.messages) if m.role == "assistant"), default=None
    )
    for i, message in enumerate(trajectory.messages):
        if message.role == "tool":
            continue
        reported = len(message.tool_calls)
        if i == last_assistant:
            reported = len(calls) - taken  # every call not placed yet came before the last reply
        for call in calls[taken : taken + reported]:
            steps.append(_call_step(call))
        taken = min(len(calls), taken + reported)
        if message.content.strip():
            steps.append({"role": message.role, "text": message.content})
    steps.extend(_call_step(c) for c in calls[taken:])
    if last_assistant is None and trajectory.final_reply.strip():
        steps.append({"role": "assistant", "text": trajectory.final_reply})
    if trajectory.error:
        steps.append({"role": "error", "text": trajectory.error})
    return [{"index": i, **s} for i, s in enumerate(steps)]


def _payload(trial: TrialRecord, case: Case, reviewer: str, taxonomy: str) -> dict[str, Any]:
    scenario = case.situation.user_scenario
    traj = trial.trajectory
    return {
        "role": REVIEW,
        "reviewer": reviewer,
        "run_id": trial.run_id,
        "case_id": case.id,
        "trial": trial.trial,
        "frozen": bool(trial.frozen or case.frozen),
        "taxonomy": taxonomy,
        "prefix": [{"role": t.role, "text": t.content} for t in case.situation.turns],
        "steps": trial_steps(traj),
        "state_diff": traj.state_diff,
        "scenario": scenario.model_dump(mode="json") if scenario is not None else None,
        "scenario_digest": scenario_digest(scenario),
        "simulator": trial.user_sim.model_dump(mode="json") if trial.user_sim else None,
    }


def trial_key(run_id: str, case_id: str, trial: int) -> str:
    """``run_id/case_id/trial``: the trial an item is about."""
    return f"{run_id}/{case_id}/{trial}"


def _stratified(trials: Sequence[TrialRecord], n: int, seed: int) -> list[TrialRecord]:
    rng = random.Random(seed)
    strata: dict[tuple[str, str], list[TrialRecord]] = {}
    for t in sorted(trials, key=lambda t: (t.case_id, t.trial)):
        strata.setdefault((t.slice, str(t.verdict.passed)), []).append(t)
    queues = []
    for name in sorted(strata):
        rng.shuffle(strata[name])
        queues.append(strata[name])
    drawn: list[TrialRecord] = []
    while len(drawn) < n and any(queues):
        for queue in queues:
            if queue and len(drawn) < n:
                drawn.append(queue.pop())
    return drawn


def trajectory_items(
    project: Project,
    run_ref: str,
    n: int,
    reviewers: Sequence[str],
    *,
    overlap: float = 0.2,
    tolerance: int = 1,
    seed: int = 0,
    include_frozen: bool = False,
) -> list[NewItem]:
    """Items for ``n`` trials of a run, stratified by slice and verdict, one per reviewer.

    Args:
        project: The project.
        run_ref: The run (id, prefix or log path).
        n: Trials to draw (fewer when the run has fewer).
        reviewers: People to give them to, in turn.
        overlap: Share of drawn trials given to two reviewers (for agreement).
        tolerance: Steps two reviewers' first failing steps may differ by and still agree.
        seed: Seed of the draw and of which trials are doubled.
        include_frozen: Also draw trials of frozen cases.

    Raises:
        UsageError: ``n`` below 1, no reviewer (or one, with overlap), overlap outside [0, 1].
    """
    if n < 1:
        raise UsageError(f"must be at least 1. Got {n}.", param="n")
    names = [r.strip() for r in reviewers if r.strip()]
    if not names:
        raise UsageError("give at least one reviewer.", param="reviewers")
    if not 0 <= overlap <= 1:
        raise UsageError(f"must lie between 0 and 1. Got {overlap}.", param="overlap")
    if overlap > 0 and len(set(names)) < 2:
        raise UsageError("double review needs two reviewers.", param="reviewers")
    if tolerance < 0:
        raise UsageError(f"must be 0 or more. Got {tolerance}.", param="tolerance")
    run = load_run(project, run_ref)
    name, _, version = run.header.dataset_ref.partition("@")
    cases = load_dataset(project, name if version == "working" else run.header.dataset_ref)
    by_id = {c.id: c for c in cases.cases}
    pool = [
        t
        for t in run.trials
        if t.case_id in by_id and (include_frozen or not (t.frozen or by_id[t.case_id].frozen))
    ]
    drawn = _stratified(pool, n, seed)
    who = assign_reviewers(len(drawn), names, overlap, seed)
    taxonomy = load_taxonomy(project).version
    out: list[NewItem] = []
    for trial, people in zip(drawn, who, strict=True):
        case = by_id[trial.case_id]
        key = trial_key(run.header.run_id, case.id, trial.trial)
        for person in people:
            payload = _payload(trial, case, person, taxonomy)
            payload["tolerance"] = tolerance
            payload["double"] = len(people) == 2
            out.append(NewItem(TRAJECTORY, name, f"{key}#{person}", case.slice, payload))
    return out


def _fail_data(project: Project, task: ReviewTask, data: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(data) - {"step", "category", "severity", "fault"})
    if unknown:
        raise UsageError(f"a trajectory decision carries no '{unknown[0]}'.", param="data")
    step = data.get("step")
    count = len(task.payload["steps"])
    if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step < count:
        raise UsageError(
            f"step: the index of a step, 0 to {count - 1}. Got {step!r}.", param="step"
        )
    taxonomy = load_taxonomy(project)
    category = data.get("category")
    if category not in taxonomy.ids():
        raise UsageError(
            f"category: one of the taxonomy's ({', '.join(taxonomy.ids())}). Got {category!r}.",
            param="category",
        )
    if data.get("severity") not in SEVERITIES:
        raise UsageError(
            f"severity: one of {', '.join(SEVERITIES)}. Got {data.get('severity')!r}.",
            param="severity",
        )
    if data.get("fault") not in FAULTS:
        raise UsageError(
            f"fault: one of {', '.join(FAULTS)}. Got {data.get('fault')!r}.", param="fault"
        )
    return {
        "step": step,
        "category": category,
        "severity": data["severity"],
        "fault": data["fault"],
        "taxonomy": taxonomy.version,
    }


def _maybe_adjudicate(session: Session, task: ReviewTask, now: datetime) -> None:
    """Queue an adjudication when both reviews of a doubled trial are in and disagree."""
    trial = trial_of(task.subject)
    rows = [
        r
        for r in session.scalars(
            select(ReviewTaskRow).where(
                ReviewTaskRow.kind == TRAJECTORY, ReviewTaskRow.dataset == task.dataset
            )
        )
        if trial_of(r.subject) == trial and r.payload.get("role") == REVIEW
    ]
    decided = [r for r in rows if r.status == "decided"]
    if len(rows) != 2 or len(decided) != 2:
        return
    a, b = (r.data or {} for r in decided)
    if reviews_agree(a, b, int(task.payload.get("tolerance", 1))):
        return
    payload = {k: v for k, v in task.payload.items() if k not in ("reviewer", "double")}
    payload["role"] = ADJUDICATE
    payload["reviews"] = [
        {"reviewer": r.reviewer, "decision": r.decision, **(r.data or {}), "reason": r.reason}
        for r in sorted(decided, key=lambda r: r.id)
    ]
    subject = f"{trial}#{ADJUDICATE}"
    if session.scalar(
        select(ReviewTaskRow.id).where(
            ReviewTaskRow.kind == TRAJECTORY,
            ReviewTaskRow.dataset == task.dataset,
            ReviewTaskRow.open_subject == subject,
        )
    ):
        return
    session.add(
        ReviewTaskRow(
            kind=TRAJECTORY,
            dataset=task.dataset,
            subject=subject,
            open_subject=subject,
            slice=task.slice,
            payload=payload,
            status="open",
            created_at=now,
        )
    )


@dataclass(frozen=True)
class TrajectoryKind(WorkbenchKind):
    """The ``trajectory`` kind (see the module docstring)."""

    name: str = TRAJECTORY
    decisions: tuple[str, ...] = DECISIONS

    def check(
        self,
        project: Project,
        task: ReviewTask,
        decision: str,
        reason: str | None,
        data: Mapping[str, Any] | None,
    ) -> dict[str, Any] | None:
        """``fail`` needs a step, category, severity and fault; ``none`` carries nothing."""
        if decision == "none":
            if data:
                raise UsageError("'none' marks no step: give no step data.", param="data")
            return {"taxonomy": load_taxonomy(project).version}
        return _fail_data(project, task, data or {})

    def apply_in(
        self,
        session: Session,
        project: Project,
        task: ReviewTask,
        decision: str,
        *,
        reason: str | None,
        reviewer: str,
        data: dict[str, Any] | None,
        seconds: float | None,
        now: datetime,
    ) -> None:
        """Each reviewer decides their own item; an adjudicator neither of the two reviewers."""
        if task.payload.get("role") == ADJUDICATE:
            if reviewer in {r["reviewer"] for r in task.payload["reviews"]}:
                raise UsageError(
                    f"review item {task.id}: {reviewer} reviewed this trial; another person "
                    "adjudicates.",
                    param="reviewer",
                )
            return
        given_to = task.payload["reviewer"]
        if reviewer != given_to:
            raise UsageError(
                f"review item {task.id} was given to {given_to}; each reviewer answers their own.",
                param="reviewer",
            )
        session.flush()
        _maybe_adjudicate(session, task, now)


def review_pairs(
    tasks: Sequence[ReviewTask],
) -> Iterator[tuple[Mapping[str, Any], Mapping[str, Any]]]:
    """The two decided reviews' data of each doubled trial, oldest first (``{}`` for ``none``)."""
    by_trial: dict[str, list[ReviewTask]] = {}
    for t in tasks:
        if t.kind == TRAJECTORY and t.status == "decided" and t.payload.get("role") == REVIEW:
            by_trial.setdefault(trial_of(t.subject), []).append(t)
    for _, held in sorted(by_trial.items()):
        if len(held) == 2:
            a, b = sorted(held, key=lambda t: t.id)
            yield (_as_marked(a), _as_marked(b))


def _as_marked(task: ReviewTask) -> Mapping[str, Any]:
    return dict(task.data or {}) if task.decision == "fail" else {}
