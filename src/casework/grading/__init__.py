"""Grading: checks over a trajectory, the LLM judge and its calibration.

Checks: tools, state, outcome, answer facts, unsatisfiable handling. Entry points: :func:`grade`,
:class:`Judge`, :data:`GRADERS`, :func:`casework.grading.calibration.calibrate_judge`.
"""

from casework.grading.calibration import LABELLER_VIEW, calibrate_judge, labeller_view, load_judge
from casework.grading.grade import grade, needed_oracle_class
from casework.grading.graders import (
    DEFAULT_GRADERS,
    GRADERS,
    GradeContext,
    Grader,
    get_grader,
    observed_outcome,
    register_grader,
)
from casework.grading.judge import Judge, JudgeCalibration, escape_block, prompt_blocks
from casework.grading.matchers import (
    MatcherError,
    argument_matches,
    deep_subset,
    evaluate_assertion,
    match_forbidden,
    match_in_order,
    match_required,
)
from casework.grading.verdict import CheckResult, Verdict, combine

__all__ = [
    "DEFAULT_GRADERS",
    "GRADERS",
    "LABELLER_VIEW",
    "CheckResult",
    "GradeContext",
    "Grader",
    "Judge",
    "JudgeCalibration",
    "MatcherError",
    "Verdict",
    "argument_matches",
    "calibrate_judge",
    "combine",
    "deep_subset",
    "escape_block",
    "evaluate_assertion",
    "get_grader",
    "grade",
    "labeller_view",
    "load_judge",
    "match_forbidden",
    "match_in_order",
    "match_required",
    "needed_oracle_class",
    "observed_outcome",
    "prompt_blocks",
    "register_grader",
]
