"""Workbench tables of the labelling stage: assignments and raw labels (one per case, labeller, round).

A round is a guideline version: the same person may label a case again only under a newer guideline.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Boolean, DateTime, Float, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from casework.workbench.base import Base

__all__ = ["AssignmentRow", "RawLabelRow"]


class _LabellingColumns:
    """Columns an assignment and a raw label share: whose, which case, which round."""

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    dataset: Mapped[str] = mapped_column(String(200))
    case_id: Mapped[str] = mapped_column(String(200))
    slice: Mapped[str] = mapped_column(String(200))
    labeller: Mapped[str] = mapped_column(String(64))
    role: Mapped[str] = mapped_column(String(16))
    overlap_reason: Mapped[str | None] = mapped_column(String(16), nullable=True)
    guideline_version: Mapped[str] = mapped_column(String(200))


class AssignmentRow(_LabellingColumns, Base):
    """One person holding one case of a dataset under one guideline version."""

    __tablename__ = "labelling_assignments"
    __table_args__ = (
        UniqueConstraint(
            "dataset",
            "case_id",
            "labeller",
            "guideline_version",
            name="uq_labelling_assignments_case_labeller",
        ),
        Index("ix_labelling_assignments_dataset_labeller", "dataset", "labeller"),
    )

    assigned_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    done: Mapped[bool] = mapped_column(Boolean, default=False)
    done_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class RawLabelRow(_LabellingColumns, Base):
    """One labeller's raw label for one case under one guideline version.

    ``required`` and ``forbidden`` hold a yes/no answer per tool declared when the sheet was
    answered, so "not required" is recorded, not merely absent.
    """

    __tablename__ = "labelling_labels"
    __table_args__ = (
        UniqueConstraint(
            "dataset",
            "case_id",
            "labeller",
            "guideline_version",
            name="uq_labelling_labels_case_labeller",
        ),
        Index("ix_labelling_labels_dataset_case", "dataset", "case_id"),
    )

    outcome: Mapped[str] = mapped_column(String(16))
    required: Mapped[dict[str, Any]] = mapped_column(JSON)
    forbidden: Mapped[dict[str, Any]] = mapped_column(JSON)
    answer_facts: Mapped[list[Any]] = mapped_column(JSON)
    assigned_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    labelled_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    source: Mapped[str] = mapped_column(String(500))
    seconds_on_screen: Mapped[float | None] = mapped_column(Float, nullable=True)
    """Seconds the case was on screen before the label was submitted (web app; sheets: NULL)."""
