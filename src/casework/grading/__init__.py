"""Grading: checks over a trajectory, the LLM judge, its labeller check and its certifications.

Checks: tools, state, outcome, answer facts, unsatisfiable handling. Entry points: :func:`grade`,
:class:`Judge`, :data:`GRADERS`, :func:`casework.grading.calibration.calibrate_judge`.
"""

from casework.grading.calibration import (
    LABELLER_VIEW,
    calibrate_judge,
    judge_configured,
    labeller_view,
    load_judge,
    stored_certifications,
)
from casework.grading.golden import golden_state, state_differences
from casework.grading.grade import grade, needed_oracle_class
from casework.grading.graders import (
    DEFAULT_GRADERS,
    ESCALATION_TOOL,
    GRADERS,
    GradeContext,
    Grader,
    did_nothing,
    get_grader,
    observed_outcome,
    register_grader,
)
from casework.grading.judge import (
    CHECK_KINDS,
    OUTCOME_DEFINITIONS,
    PROMPT_VERSION,
    Certification,
    CheckKind,
    Judge,
    JudgeCalibration,
    escape_block,
    prompt_blocks,
    rubric_digest,
    rubric_digests,
)
from casework.grading.matchers import (
    MatcherError,
    argument_matches,
    deep_subset,
    evaluate_assertion,
    match_forbidden,
    match_in_order,
    match_required,
)
from casework.grading.semantics import fact_matches, normalise_text
from casework.grading.verdict import CheckResult, Verdict, combine

__all__ = [
    "CHECK_KINDS",
    "DEFAULT_GRADERS",
    "ESCALATION_TOOL",
    "GRADERS",
    "LABELLER_VIEW",
    "OUTCOME_DEFINITIONS",
    "PROMPT_VERSION",
    "Certification",
    "CheckKind",
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
    "did_nothing",
    "escape_block",
    "evaluate_assertion",
    "fact_matches",
    "get_grader",
    "golden_state",
    "grade",
    "judge_configured",
    "labeller_view",
    "load_judge",
    "match_forbidden",
    "match_in_order",
    "match_required",
    "needed_oracle_class",
    "normalise_text",
    "observed_outcome",
    "prompt_blocks",
    "register_grader",
    "rubric_digest",
    "rubric_digests",
    "state_differences",
    "stored_certifications",
]
