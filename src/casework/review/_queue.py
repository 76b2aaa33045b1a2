"""The review queue: build items idempotently, list and show them, decide one (exactly one wins).

Entry points: :func:`add_items`, :func:`sync_review` (items from a dataset's open leakage flags,
disagreements and unanswered judge verdicts), :func:`list_tasks`, :func:`get_task`, :func:`decide_task`. A decision claims the item with one
conditional UPDATE (``status = 'open'``) as the first statement of its transaction, then applies
the decision through the kind; of two reviewers deciding the same item at once, the second finds
it decided and gets :class:`casework.errors.DecisionConflict`, and a failed apply leaves it open.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError, OperationalError
from sqlalchemy.orm import Session

from casework.dataset import parse_ref
from casework.errors import DecisionConflict, Hint, UsageError, WorkbenchError
from casework.labelling.gaps import check_person
from casework.project import Project
from casework.review._disagreement import DISAGREEMENT, disagreement_items, order_key
from casework.review._judge_verdict import judge_verdict_items
from casework.review._kinds import review_kind
from casework.review._leakage_pair import LEAKAGE_PAIR, leakage_pair_items
from casework.review._names import JUDGE_VERDICT
from casework.review._task import AppliesInTransaction, NewItem, ReviewTask
from casework.workbench import Workbench, open_workbench
from casework.workbench.db import workbench_exists
from casework.workbench.models_review import ReviewTaskRow

STATUSES = ("open", "decided", "withdrawn")
"""Statuses of a review item."""
#: Why an open leakage-pair item was withdrawn.
FLAG_SETTLED = "the flag is no longer open (decided outside the queue, resolved, or gone)"
#: Longest reason.
REASON_MAX = 4000


@dataclass(frozen=True)
class AddReport:
    """What :func:`add_items` stored.

    Attributes:
        created: Ids of the items created.
        existing: Ids of open items that already stood for the same subjects (nothing added).
    """

    created: tuple[int, ...]
    existing: tuple[int, ...]


@dataclass(frozen=True)
class SyncReport:
    """What :func:`sync_leakage` did.

    Attributes:
        dataset: Dataset name.
        created: Ids of items created for newly open flags.
        existing: Ids of open items already standing for open flags.
        withdrawn: Ids of open items whose flag is no longer open (settled outside the queue).
    """

    dataset: str
    created: tuple[int, ...]
    existing: tuple[int, ...]
    withdrawn: tuple[int, ...]

    def as_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        return {
            "dataset": self.dataset,
            "created": list(self.created),
            "existing": list(self.existing),
            "withdrawn": list(self.withdrawn),
        }


def as_utc(value: datetime) -> datetime:
    """A timestamp read back from the database as aware UTC (SQLite drops the zone)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def dataset_name(ref: str) -> str:
    """The dataset a ``name[@version]`` reference names."""
    return parse_ref(ref)[0]


def task_of(row: ReviewTaskRow) -> ReviewTask:
    """A stored row as a :class:`ReviewTask`."""
    return ReviewTask(
        id=row.id,
        kind=row.kind,
        dataset=row.dataset,
        subject=row.subject,
        slice=row.slice,
        payload=dict(row.payload),
        status=row.status,
        decision=row.decision,
        reason=row.reason,
        data=dict(row.data) if row.data is not None else None,
        reviewer=row.reviewer,
        seconds_on_screen=row.seconds_on_screen,
        created_at=as_utc(row.created_at),
        decided_at=as_utc(row.decided_at) if row.decided_at else None,
    )


@contextmanager
def _writing(workbench: Workbench, what: str) -> Iterator[Session]:
    try:
        with workbench.session() as session:
            yield session
    except OperationalError as exc:
        raise WorkbenchError(
            f"{what}: the workbench stayed busy with another writer; nothing was written. "
            "Try again."
        ) from exc


def _add_once(
    session: Session, items: Sequence[NewItem], now: datetime, refresh: bool
) -> AddReport:
    created: list[int] = []
    existing: list[int] = []
    for item in items:
        review_kind(item.kind)
        found = session.scalar(
            select(ReviewTaskRow).where(
                ReviewTaskRow.kind == item.kind,
                ReviewTaskRow.dataset == item.dataset,
                ReviewTaskRow.open_subject == item.subject,
            )
        )
        if found is not None:
            if refresh and (found.payload != item.payload or found.slice != item.slice):
                found.payload, found.slice = item.payload, item.slice
            existing.append(found.id)
            continue
        row = ReviewTaskRow(
            kind=item.kind,
            dataset=item.dataset,
            subject=item.subject,
            open_subject=item.subject,
            slice=item.slice,
            payload=item.payload,
            status="open",
            created_at=now,
        )
        session.add(row)
        session.flush()
        created.append(row.id)
    return AddReport(tuple(created), tuple(existing))


def add_items(
    project: Project,
    items: Sequence[NewItem],
    *,
    refresh: bool = False,
    now: datetime | None = None,
) -> AddReport:
    """Store new review items; a subject that already has an open item is not added again.

    Safe to run twice, or from two processes at once: at most one open item exists per (kind,
    dataset, subject) (a unique constraint); a clash with a concurrent builder retries once.
    With ``refresh`` an open item's payload and slice are replaced by the new item's (its
    subject changed since it was built); decided items are never touched.

    Raises:
        UsageError: An item of an unknown kind.
    """
    when = now or datetime.now(UTC)
    with open_workbench(project) as wb:
        for attempt in range(2):
            try:
                with _writing(wb, "review items") as session:
                    return _add_once(session, items, when, refresh)
            except IntegrityError:
                if attempt:
                    raise WorkbenchError(
                        "review items: another process kept adding the same items; nothing "
                        "was written. Try again."
                    ) from None
    raise AssertionError("unreachable")  # pragma: no cover


def withdraw_stale(
    project: Project, kind: str, name: str, live: set[str], reason: str, when: datetime
) -> tuple[int, ...]:
    """Withdraw the open items of ``kind`` in ``name`` whose subject is not in ``live``."""
    if not workbench_exists(project):
        return ()
    with open_workbench(project) as wb, _writing(wb, "review sync") as session:
        stale = [
            row.id
            for row in session.scalars(
                select(ReviewTaskRow).where(
                    ReviewTaskRow.kind == kind,
                    ReviewTaskRow.dataset == name,
                    ReviewTaskRow.status == "open",
                )
            )
            if row.subject not in live
        ]
        if stale:
            session.execute(
                update(ReviewTaskRow)
                .where(ReviewTaskRow.id.in_(stale), ReviewTaskRow.status == "open")
                .values(status="withdrawn", open_subject=None, reason=reason, decided_at=when)
            )
    return tuple(stale)


def _sync(
    project: Project,
    name: str,
    items: Sequence[NewItem],
    kind: str,
    reason: str,
    now: datetime | None,
) -> SyncReport:
    when = now or datetime.now(UTC)
    added = add_items(project, items, refresh=True, now=when)
    stale = withdraw_stale(project, kind, name, {i.subject for i in items}, reason, when)
    return SyncReport(name, added.created, added.existing, stale)


def sync_leakage(project: Project, dataset: str, *, now: datetime | None = None) -> SyncReport:
    """Build ``leakage-pair`` items from the open flags of ``dataset`` and withdraw stale ones.

    An open item whose flag is no longer open (decided in the leakage review file, resolved,
    or gone) is withdrawn, so the queue never offers a decision the review file has settled; an
    open item whose rows changed since (a later scan refreshed the flag) shows the new texts.

    Raises:
        UsageError: Unknown dataset.
        InputErrors: A bad review file or dataset file.
    """
    name = dataset_name(dataset)
    return _sync(project, name, leakage_pair_items(project, name), LEAKAGE_PAIR, FLAG_SETTLED, now)


def sync_disagreements(
    project: Project, dataset: str, *, now: datetime | None = None
) -> SyncReport:
    """Build ``disagreement`` items from the open disagreements of ``dataset``; withdraw stale ones.

    An open item whose case is no longer contested (decided on a sheet or with `adjudicate
    decide`, or relabelled) is withdrawn; an open item whose slice agreement moved is refreshed.

    Raises:
        UsageError: Unknown dataset.
        InputErrors: Bad dataset files or guidelines, or hand-edited raw labels.
    """
    name = dataset_name(dataset)
    reason = "no longer an open disagreement (decided outside the queue, or relabelled)"
    return _sync(project, name, disagreement_items(project, name), DISAGREEMENT, reason, now)


def sync_judge_verdicts(
    project: Project, dataset: str, *, now: datetime | None = None
) -> SyncReport:
    """Queue every sampled judge verdict of ``dataset``'s runs that its reviewer has not answered.

    Items answered on a sheet are decided as they are imported; this builds the items of verdicts
    sampled before the queue held them (from their runs). Nothing is withdrawn.

    Raises:
        UsageError: A sampled run is gone.
    """
    name = dataset_name(dataset)
    if not workbench_exists(project):
        return SyncReport(name, (), (), ())
    added = add_items(project, judge_verdict_items(project, name), now=now)
    return SyncReport(name, added.created, added.existing, ())


def sync_review(
    project: Project, dataset: str, *, now: datetime | None = None
) -> dict[str, SyncReport]:
    """Sync every kind built from a dataset's state: leakage pairs, disagreements, judge verdicts.

    Raises:
        UsageError: Unknown dataset.
        InputErrors: Bad dataset, review or guideline files.
    """
    return {
        LEAKAGE_PAIR: sync_leakage(project, dataset, now=now),
        DISAGREEMENT: sync_disagreements(project, dataset, now=now),
        JUDGE_VERDICT: sync_judge_verdicts(project, dataset, now=now),
    }


def list_tasks(
    project: Project,
    *,
    kind: str | None = None,
    status: str | None = None,
    dataset: str | None = None,
) -> list[ReviewTask]:
    """Review items, oldest first, filtered by kind, status and dataset.

    ``disagreement`` items alone come lowest-agreement slice first (the adjudication order).

    A project without a workbench has none (nothing is created to find that out).

    Raises:
        UsageError: An unknown kind or status.
    """
    if kind is not None:
        review_kind(kind)
    if status is not None and status not in STATUSES:
        raise UsageError(f"must be one of {', '.join(STATUSES)}. Got '{status}'.", param="status")
    if not workbench_exists(project):
        return []
    query = select(ReviewTaskRow).order_by(ReviewTaskRow.id)
    if kind is not None:
        query = query.where(ReviewTaskRow.kind == kind)
    if status is not None:
        query = query.where(ReviewTaskRow.status == status)
    if dataset is not None:
        query = query.where(ReviewTaskRow.dataset == dataset_name(dataset))
    with open_workbench(project) as wb, wb.session() as session:
        tasks = [task_of(r) for r in session.scalars(query)]
    if kind == DISAGREEMENT:
        tasks.sort(key=order_key)
    return tasks


def get_task(project: Project, task_id: int) -> ReviewTask:
    """One review item by id.

    Raises:
        UsageError: No such item.
    """
    row = None
    if workbench_exists(project):
        with open_workbench(project) as wb, wb.session() as session:
            row = session.get(ReviewTaskRow, task_id)
            found = task_of(row) if row is not None else None
    if row is None:
        raise UsageError(f"no review item {task_id}.", param="task_id").suggest(
            Hint("review list", why="to see the items")
        )
    assert found is not None
    return found


def check_decision(
    task: ReviewTask, decision: str, reason: str | None, seconds: float | None
) -> None:
    """Check a decision's name, reason and seconds for ``task`` (nothing is read or written).

    Raises:
        UsageError: A decision the kind does not take, a reason too long, negative seconds.
    """
    kind = review_kind(task.kind)
    if decision not in kind.decisions:
        raise UsageError(
            f"a {task.kind} item takes {', '.join(kind.decisions)}. Got '{decision}'.",
            param="decision",
        )
    if reason is not None and len(reason) > REASON_MAX:
        raise UsageError(f"at most {REASON_MAX} characters. Got {len(reason)}.", param="reason")
    if seconds is not None and not seconds >= 0:
        raise UsageError(f"must be 0 or more seconds. Got {seconds}.", param="seconds")


def _conflict(session: Session, task_id: int) -> DecisionConflict:
    row = session.get(ReviewTaskRow, task_id)
    if row is None:  # deleted meanwhile (never by casework)
        return DecisionConflict(f"review item {task_id} no longer exists.")
    if row.status == "withdrawn":
        return DecisionConflict(
            f"review item {task_id} was withdrawn ({row.reason}); this decision was not stored."
        )
    when = as_utc(row.decided_at).isoformat(timespec="seconds") if row.decided_at else "?"
    return DecisionConflict(
        f"review item {task_id} was already decided ({row.decision} by {row.reviewer} at "
        f"{when}); this decision was not stored."
    )


def decide_task(
    project: Project,
    task_id: int,
    decision: str,
    *,
    reviewer: str,
    reason: str | None = None,
    seconds: float | None = None,
    data: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> ReviewTask:
    """Decide one open review item and apply the decision through its kind.

    Args:
        project: The project.
        task_id: The item.
        decision: One of the kind's decisions.
        reviewer: Who decides (pseudonymous id).
        reason: Why (required by some decisions, e.g. rejecting a generated case).
        seconds: Seconds the item was on screen.
        data: What the decision carries (the edited case of an ``edit``: ``{"case": {...}}``).
        now: Time of the decision (tests).

    Returns:
        The item as decided.

    Raises:
        UsageError: No such item, a decision the kind does not take, bad data, or the kind
            refused to apply it (the item stays open).
        InputErrors: An edited case that the case schema rejects.
        DecisionConflict: Someone decided (or the sync withdrew) the item first.
    """
    person = check_person(reviewer, "reviewer")
    task = get_task(project, task_id)
    check_decision(task, decision, reason, seconds)
    kind = review_kind(task.kind)
    stored = kind.check(project, task, decision, reason, data)
    when = now or datetime.now(UTC)
    with open_workbench(project) as wb, _writing(wb, "review decide") as session:
        return _store(session, project, task, decision, person, reason, seconds, stored, when)


def _store(
    session: Session,
    project: Project,
    task: ReviewTask,
    decision: str,
    person: str,
    reason: str | None,
    seconds: float | None,
    stored: dict[str, Any] | None,
    when: datetime,
) -> ReviewTask:
    """Claim ``task`` and apply the decision through its kind, in ``session``'s transaction."""
    kind = review_kind(task.kind)
    text = reason.strip() if reason and reason.strip() else None
    claimed = session.execute(
        update(ReviewTaskRow)
        .where(ReviewTaskRow.id == task.id, ReviewTaskRow.status == "open")
        .values(
            status="decided",
            open_subject=None,
            decision=decision,
            reason=text,
            data=stored,
            reviewer=person,
            seconds_on_screen=None if seconds is None else float(seconds),
            decided_at=when,
        )
        .execution_options(synchronize_session=False)
    )
    if claimed.rowcount != 1:  # type: ignore[attr-defined]
        raise _conflict(session, task.id)
    if isinstance(kind, AppliesInTransaction):
        kind.apply_in(
            session,
            project,
            task,
            decision,
            reason=text,
            reviewer=person,
            data=stored,
            seconds=seconds,
            now=when,
        )
    else:
        kind.apply(project, task, decision, reason=text, reviewer=person, data=stored, now=when)
    row = session.get(ReviewTaskRow, task.id)
    assert row is not None
    return task_of(row)


class _Rehearsed(Exception):
    """Raised to roll a rehearsed decision back once it went through."""


def rehearse_decision(
    project: Project,
    task: ReviewTask,
    decision: str,
    *,
    reviewer: str,
    reason: str | None = None,
    seconds: float | None = None,
    data: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> None:
    """Try a checked decision of a kind that applies in the claiming transaction, then roll back.

    Only such kinds are tried (their rules, an adjudicator who labelled the case for one, are
    workbench rows a rollback undoes); a kind that writes files is left to its check.

    Raises:
        UsageError: The kind's rules refuse the decision.
        DecisionConflict: The item is no longer open.
    """
    kind = review_kind(task.kind)
    if not isinstance(kind, AppliesInTransaction):
        return
    person = check_person(reviewer, "reviewer")
    stored = kind.check(project, task, decision, reason, data)
    when = now or datetime.now(UTC)
    try:
        with open_workbench(project) as wb, wb.session() as session:
            _store(session, project, task, decision, person, reason, seconds, stored, when)
            raise _Rehearsed
    except _Rehearsed:
        return
