"""All workbench tables: the core ones here, each stage's in ``models_<stage>.py`` (imported below).

Alembic's autogenerate and the tests read ``Base.metadata`` after importing this module.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from casework.workbench.base import Base

__all__ = ["Meta"]


class Meta(Base):
    """Key/value facts about the workbench itself (created_at, casework version that created it)."""

    __tablename__ = "workbench_meta"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


# Stage tables: one import per stage (explicit, no discovery).
import casework.workbench.models_labelling  # noqa: E402  (labelling: assignments, raw labels)
import casework.workbench.models_leakage  # noqa: E402,F401  (leakage: near-duplicate flags)
import casework.workbench.models_llm  # noqa: E402,F401  (llm: response cache)
import casework.workbench.models_runs  # noqa: E402,F401  (runner: runs, trials, judge calibrations)
