"""Workbench tables of judge certification: sampled verdicts, people's verdicts, certifications."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, DateTime, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from casework.workbench.base import Base

__all__ = ["JudgeCertificationRow", "ReviewItemRow", "ReviewVerdictRow"]


class ReviewItemRow(Base):
    """One judge verdict drawn for people to grade blind (`casework judge sample`)."""

    __tablename__ = "judge_review_items"

    key: Mapped[str] = mapped_column(String(400), primary_key=True)
    """`run_id/case_id/trial/kind[/fact_index]`."""
    sheet_id: Mapped[str] = mapped_column(String(40), unique=True)
    """The opaque id the blind sheet shows instead of the key (which names the case)."""
    run_id: Mapped[str] = mapped_column(String(80), index=True)
    case_id: Mapped[str] = mapped_column(String(200))
    trial: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(20))
    fact_index: Mapped[int | None] = mapped_column(Integer, nullable=True)
    slice: Mapped[str] = mapped_column(String(200), index=True)
    judge_model: Mapped[str] = mapped_column(String(200))
    prompt_version: Mapped[str | None] = mapped_column(String(40), nullable=True)
    rubric_digest: Mapped[str] = mapped_column(String(40))
    judge_pass: Mapped[bool] = mapped_column(Boolean)
    """The judge's verdict on the check as recorded in the run log (never on a sheet)."""
    accepted: Mapped[list[str]] = mapped_column(JSON)
    """Outcome items: the outcomes that pass the check (from the label); empty for facts."""
    reviewers: Mapped[list[str]] = mapped_column(JSON)
    sampled_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class ReviewVerdictRow(Base):
    """One person's verdict on a sampled item (`casework review import`)."""

    __tablename__ = "judge_review_verdicts"
    __table_args__ = (UniqueConstraint("item_key", "reviewer"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    item_key: Mapped[str] = mapped_column(String(400), index=True)
    reviewer: Mapped[str] = mapped_column(String(200))
    answer: Mapped[str] = mapped_column(String(20))
    """`resolve|clarify|refuse|escalate` (outcome items) or `yes|no` (fact items)."""
    human_pass: Mapped[bool] = mapped_column(Boolean)
    """The check's result by this person's answer."""
    source: Mapped[str] = mapped_column(Text)
    imported_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class JudgeCertificationRow(Base):
    """A judge's verdicts on one slice and check kind measured against people (`judge certify`)."""

    __tablename__ = "judge_certifications"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    slice: Mapped[str] = mapped_column(String(200), index=True)
    kind: Mapped[str] = mapped_column(String(20))
    judge_model: Mapped[str] = mapped_column(String(200), index=True)
    prompt_version: Mapped[str] = mapped_column(String(40))
    rubric_digest: Mapped[str] = mapped_column(String(40))
    tp: Mapped[int] = mapped_column(Integer)
    fn: Mapped[int] = mapped_column(Integer)
    tn: Mapped[int] = mapped_column(Integer)
    fp: Mapped[int] = mapped_column(Integer)
    admissible: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    report: Mapped[dict[str, object]] = mapped_column(JSON)
    """Rates with intervals, kappa, thresholds and more-needed counts, as printed."""
