"""Grading: checks over a trajectory, the LLM judge and its calibration.

Checks: tools, state, outcome, answer facts, unsatisfiable handling. Entry points: :func:`grade`,
:class:`Judge`, :data:`GRADERS`, :func:`casework.grading.calibration.calibrate_judge`.
"""

from casework.grading.checks import (
    DEFAULT_GRADERS,
    GRADERS,
    GradeContext,
    Grader,
    get_grader,
    observed_outcome,
    register_grader,
)
from casework.grading.grade import grade, needed_oracle_class
from casework.grading.judge import Judge, JudgeCalibration
from casework.grading.matchers import deep_subset, evaluate_assertion, match_required
from casework.grading.trajectory import (
    AgentInput,
    AgentTool,
    Message,
    Trajectory,
    TrajectoryToolCall,
    Usage,
)
from casework.grading.verdict import Check, Verdict, combine

__all__ = [
    "DEFAULT_GRADERS",
    "GRADERS",
    "AgentInput",
    "AgentTool",
    "Check",
    "GradeContext",
    "Grader",
    "Judge",
    "JudgeCalibration",
    "Message",
    "Trajectory",
    "TrajectoryToolCall",
    "Usage",
    "Verdict",
    "combine",
    "deep_subset",
    "evaluate_assertion",
    "get_grader",
    "grade",
    "match_required",
    "needed_oracle_class",
    "observed_outcome",
    "register_grader",
]
