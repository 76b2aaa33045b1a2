"""A review item as pages and the CLI see it, the item a kind builds, and the kind protocol.

Entry points: :class:`ReviewTask` (one stored item), :class:`NewItem` (what a kind builds),
:class:`ReviewKind` (what a kind of item declares: its decisions, how one is checked and applied),
:class:`AppliesInTransaction` (a kind that stores its decision in the claiming transaction).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

from sqlalchemy.orm import Session

from casework.project import Project
from casework.workbench import open_workbench

TaskStatus = str
"""``open``, ``decided`` or ``withdrawn`` (settled outside the queue)."""


@dataclass(frozen=True)
class NewItem:
    """An item a kind builds, before it is stored.

    Attributes:
        kind: The kind's name (``leakage-pair``, ``generated-case``).
        dataset: The dataset it belongs to.
        subject: What it is about, unique per kind and dataset among open items.
        slice: The slice it counts under on the dashboard, if any.
        payload: What a page renders.
    """

    kind: str
    dataset: str
    subject: str
    slice: str | None
    payload: dict[str, Any]


@dataclass(frozen=True)
class ReviewTask:
    """One stored review item.

    Attributes:
        id: Its id (what `casework review show|decide` take).
        kind: Its kind.
        dataset: Its dataset.
        subject: What it is about.
        slice: The slice it counts under, if any.
        payload: What a page renders (see the kind).
        status: ``open``, ``decided`` or ``withdrawn``.
        decision: The decision, once decided.
        reason: The reviewer's reason (or why it was withdrawn).
        data: What the decision carried besides its name (an edited case).
        reviewer: Who decided.
        seconds_on_screen: Seconds the item was on screen when decided.
        created_at: When it was built (UTC).
        decided_at: When it was decided or withdrawn (UTC).
    """

    id: int
    kind: str
    dataset: str
    subject: str
    slice: str | None
    payload: dict[str, Any]
    status: TaskStatus
    decision: str | None
    reason: str | None
    data: dict[str, Any] | None
    reviewer: str | None
    seconds_on_screen: float | None
    created_at: datetime
    decided_at: datetime | None

    def as_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        out = asdict(self)
        out["created_at"] = self.created_at.isoformat()
        out["decided_at"] = self.decided_at.isoformat() if self.decided_at else None
        return out


class ReviewKind(Protocol):
    """A kind of review item: its decisions, and how a decision is checked and applied.

    ``apply`` calls the same library function the CLI used before the queue existed (for
    ``leakage-pair``, :func:`casework.leakage.decide`), inside the transaction that claims the
    item, so a failure leaves the item open and nothing decided.
    """

    @property
    def name(self) -> str:
        """The kind's name, stored on its items."""
        ...

    @property
    def decisions(self) -> tuple[str, ...]:
        """The decisions a reviewer may take."""
        ...

    def check(
        self,
        project: Project,
        task: ReviewTask,
        decision: str,
        reason: str | None,
        data: Mapping[str, Any] | None,
    ) -> dict[str, Any] | None:
        """Validate a decision before anything is written; return the data to store with it."""
        ...

    def apply(
        self,
        project: Project,
        task: ReviewTask,
        decision: str,
        *,
        reason: str | None,
        reviewer: str,
        data: dict[str, Any] | None,
        now: datetime,
    ) -> None:
        """Carry the decision out (raise to leave the item open)."""
        ...


@runtime_checkable
class AppliesInTransaction(Protocol):
    """A kind whose decision is workbench rows: applied in the transaction that claims the item.

    The queue calls ``apply_in`` instead of ``apply``, so the claim and what the decision stores
    are committed together or not at all (and SQLite never sees two writers from one decide).
    """

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
        """Carry the decision out with ``session`` (raise to leave the item open)."""
        ...


class WorkbenchKind(ABC):
    """Base of the kinds whose decision is workbench rows (:class:`AppliesInTransaction`).

    ``apply`` is ``apply_in`` in a transaction of its own; the queue calls ``apply_in`` in the
    transaction that claims the item.
    """

    def apply(
        self,
        project: Project,
        task: ReviewTask,
        decision: str,
        *,
        reason: str | None,
        reviewer: str,
        data: dict[str, Any] | None,
        now: datetime,
    ) -> None:
        """Carry the decision out in a transaction of its own."""
        with open_workbench(project) as wb, wb.session() as session:
            self.apply_in(
                session,
                project,
                task,
                decision,
                reason=reason,
                reviewer=reviewer,
                data=data,
                seconds=None,
                now=now,
            )

    @abstractmethod
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
        """Carry the decision out with ``session`` (each kind stores its own rows)."""
