"""Workbench tables of review: generic review items (one per thing a person decides) and guideline gaps.

A review item's ``kind`` names the plug-in that builds it and applies its decision
(:mod:`casework.review`); a guideline gap is an adjudicator's note that a slice's guideline did
not settle a case, addressed by the next `casework label guideline bump` of that slice.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Float, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from casework.workbench.base import Base

__all__ = ["GuidelineGapRow", "ReviewTaskRow"]


class ReviewTaskRow(Base):
    """One thing for a person to decide (a near-duplicate pair, a generated case, ...).

    Status: ``open`` (waiting), ``decided`` (a reviewer's decision was applied) or ``withdrawn``
    (its subject was settled elsewhere, e.g. a flag decided in the leakage review file).
    ``open_subject`` equals ``subject`` while the item is open and is NULL afterwards: the unique
    constraint on (kind, dataset, open_subject) lets at most one open item exist per subject, so
    building items twice never duplicates them, while a subject may come back after a decision.
    """

    __tablename__ = "review_items"
    __table_args__ = (
        UniqueConstraint("kind", "dataset", "open_subject", name="uq_review_items_open_subject"),
        Index("ix_review_items_kind_status", "kind", "status"),
        Index("ix_review_items_dataset", "dataset"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(40))
    dataset: Mapped[str] = mapped_column(String(200))
    subject: Mapped[str] = mapped_column(String(400))
    """What the item is about, unique per kind and dataset among open items (`left~right`, a case id)."""
    open_subject: Mapped[str | None] = mapped_column(String(400), nullable=True)
    slice: Mapped[str | None] = mapped_column(String(200), nullable=True)
    """The slice the item counts under on the dashboard (a pair: its first row's slice)."""
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    """What a page renders (both texts and shared spans; the generated case)."""
    status: Mapped[str] = mapped_column(String(16))
    decision: Mapped[str | None] = mapped_column(String(40), nullable=True)
    reason: Mapped[str | None] = mapped_column(Text, nullable=True)
    data: Mapped[dict[str, Any] | None] = mapped_column(JSON, nullable=True)
    """What the decision carried besides its name (the edited case of an ``edit``)."""
    reviewer: Mapped[str | None] = mapped_column(String(64), nullable=True)
    seconds_on_screen: Mapped[float | None] = mapped_column(Float, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class GuidelineGapRow(Base):
    """A note that a slice's guideline did not settle a case (ticked while adjudicating)."""

    __tablename__ = "guideline_gaps"
    __table_args__ = (Index("ix_guideline_gaps_slice", "slice"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    slice: Mapped[str] = mapped_column(String(200))
    guideline_version: Mapped[str] = mapped_column(String(200))
    """The version that left the gap."""
    note: Mapped[str] = mapped_column(Text)
    author: Mapped[str] = mapped_column(String(64))
    dataset: Mapped[str | None] = mapped_column(String(200), nullable=True)
    case_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    addressed_version: Mapped[str | None] = mapped_column(String(200), nullable=True)
    """The version whose bump addressed the note (NULL while open)."""
    addressed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
