"""Workbench tables of the runner: runs, their trials with verdicts, and judge calibrations."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from casework.workbench.base import Base

__all__ = ["JudgeCalibrationRow", "RunRow", "TrialRow"]


class RunRow(Base):
    """One run: an agent version on a pinned dataset version, k trials per case."""

    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(80), primary_key=True)
    dataset: Mapped[str] = mapped_column(String(200), index=True)
    dataset_hash: Mapped[str] = mapped_column(String(64))
    agent_spec: Mapped[str] = mapped_column(Text)
    agent_version: Mapped[str | None] = mapped_column(String(200), nullable=True)
    k: Mapped[int] = mapped_column(Integer)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    header: Mapped[dict[str, object]] = mapped_column(JSON)
    """The run log's header record (dataset ref, judge and calibration, filters, seed)."""
    summary: Mapped[dict[str, object] | None] = mapped_column(JSON, nullable=True)
    """The run log's end record, once the run finished."""


class TrialRow(Base):
    """One trial of one case in a run, with its verdict and trajectory."""

    __tablename__ = "trials"
    __table_args__ = (
        UniqueConstraint("run_id", "case_id", "trial", name="uq_trials_run_case_trial"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), index=True)
    case_id: Mapped[str] = mapped_column(String(200))
    trial: Mapped[int] = mapped_column(Integer)
    slice: Mapped[str] = mapped_column(String(200))
    split: Mapped[str] = mapped_column(String(20))
    source: Mapped[str] = mapped_column(String(20))
    passed: Mapped[bool | None] = mapped_column(Boolean, nullable=True)
    admissible: Mapped[bool] = mapped_column(Boolean)
    duration_s: Mapped[float] = mapped_column(Float)
    cost_usd: Mapped[float] = mapped_column(Float, default=0.0)
    record: Mapped[str] = mapped_column(Text)
    """The run log's trial record (verdict, evidence, trajectory), as the JSON line of the log."""


class JudgeCalibrationRow(Base):
    """Agreement of a judge model with human labels on one slice (`casework judge labeller-check`)."""

    __tablename__ = "judge_calibrations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    dataset: Mapped[str] = mapped_column(String(200))
    slice: Mapped[str] = mapped_column(String(200), index=True)
    judge_model: Mapped[str] = mapped_column(String(200))
    kappa: Mapped[float | None] = mapped_column(Float, nullable=True)
    accuracy: Mapped[float] = mapped_column(Float)
    n: Mapped[int] = mapped_column(Integer)
    threshold: Mapped[float] = mapped_column(Float)
    admissible: Mapped[bool] = mapped_column(Boolean)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    report: Mapped[dict[str, object]] = mapped_column(JSON)
    """Confusion matrix and the ids of disagreements."""
    dataset_hash: Mapped[str] = mapped_column(String(64))
