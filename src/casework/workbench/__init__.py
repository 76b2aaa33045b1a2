"""The workbench: a SQL database (SQLite by default, any SQLAlchemy URL) for work in progress.

Labelling assignments and raw labels, review queues, runs and verdicts, judge certifications, the LLM response cache.
Entry points: :func:`open_workbench` (connect and check the schema revision), :func:`upgrade`
(apply Alembic migrations; ``casework db upgrade``), :class:`Base` (declarative base of all tables).
"""

from casework.workbench.base import Base
from casework.workbench.db import (
    Workbench,
    WorkbenchStatus,
    display_url,
    open_workbench,
    status,
    upgrade,
    workbench_exists,
)
from casework.workbench.models import Meta
from casework.workbench.models_judge import JudgeCertificationRow, ReviewItemRow, ReviewVerdictRow
from casework.workbench.models_labelling import AssignmentRow, RawLabelRow
from casework.workbench.models_leakage import LeakageFlag
from casework.workbench.models_llm import LLMResponse
from casework.workbench.models_review import GuidelineGapRow, ReviewTaskRow
from casework.workbench.models_runs import JudgeCalibrationRow, RunRow, TrialRow
from casework.workbench.models_web import (
    WebLabelViewRow,
    WebServedUseRow,
    WebSessionRow,
    WebSigninRow,
    WebSkipRow,
    WebUserRow,
)

__all__ = [
    "AssignmentRow",
    "Base",
    "GuidelineGapRow",
    "JudgeCalibrationRow",
    "JudgeCertificationRow",
    "LLMResponse",
    "LeakageFlag",
    "Meta",
    "RawLabelRow",
    "ReviewItemRow",
    "ReviewTaskRow",
    "ReviewVerdictRow",
    "RunRow",
    "TrialRow",
    "WebLabelViewRow",
    "WebServedUseRow",
    "WebSessionRow",
    "WebSigninRow",
    "WebSkipRow",
    "WebUserRow",
    "Workbench",
    "WorkbenchStatus",
    "display_url",
    "open_workbench",
    "status",
    "upgrade",
    "workbench_exists",
]
