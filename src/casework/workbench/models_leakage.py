"""Workbench tables of the leakage stage: near-duplicate flags awaiting (or holding) a decision."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Float, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from casework.workbench.base import Base

__all__ = ["LeakageFlag"]


class LeakageFlag(Base):
    """One pair of rows in different splits whose Jaccard reached the threshold.

    Status: ``open`` (waiting for review), ``decided`` (a decision waits for `dataset apply`),
    ``resolved`` (applied; ``keep`` and ``template`` stay suppressed while both rows' content
    hashes are unchanged) or ``gone`` (a later scan no longer finds the pair across splits).
    """

    __tablename__ = "leakage_flag"
    __table_args__ = (
        UniqueConstraint("dataset", "left_id", "right_id", name="uq_leakage_flag_pair"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    dataset: Mapped[str] = mapped_column(String(200), index=True)
    left_id: Mapped[str] = mapped_column(String(200))
    right_id: Mapped[str] = mapped_column(String(200))
    left_split: Mapped[str] = mapped_column(String(16))
    right_split: Mapped[str] = mapped_column(String(16))
    left_hash: Mapped[str] = mapped_column(String(64))
    right_hash: Mapped[str] = mapped_column(String(64))
    jaccard: Mapped[float] = mapped_column(Float)
    shared_count: Mapped[int] = mapped_column(Integer)
    shared: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16), index=True)
    decision: Mapped[str | None] = mapped_column(String(16), nullable=True)
    move_id: Mapped[str | None] = mapped_column(String(200), nullable=True)
    reviewer: Mapped[str | None] = mapped_column(String(200), nullable=True)
    note: Mapped[str | None] = mapped_column(Text, nullable=True)
    decided_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    resolved_version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    first_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True))
