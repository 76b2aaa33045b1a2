"""All workbench tables: the core ones here, each stage's in ``models_<stage>.py`` (imported here).

Alembic's autogenerate and the tests read ``Base.metadata`` after importing this module.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, String, Text
from sqlalchemy.orm import Mapped, mapped_column

# Stage tables: one import per stage (explicit, no discovery); importing registers them on Base.
from casework.workbench import (
    models_labelling,  # assignments, raw labels
    models_leakage,  # near-duplicate flags and review decisions
    models_llm,  # LLM response cache
    models_review,  # review items, guideline gaps
    models_runs,  # runs, trials, judge calibrations
    models_web,  # web app: people, sign-in links, sessions, label views
)
from casework.workbench.base import Base

__all__ = [
    "Meta",
    "models_labelling",
    "models_leakage",
    "models_llm",
    "models_review",
    "models_runs",
    "models_web",
]


class Meta(Base):
    """Key/value facts about the workbench itself (created_at, casework version that created it)."""

    __tablename__ = "workbench_meta"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
