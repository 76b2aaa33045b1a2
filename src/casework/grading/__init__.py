"""Grading: checks over a trajectory, the LLM judge, its labeller check and its certifications.

Checks: tools, state, outcome, answer facts, unsatisfiable handling. Entry points: :func:`grade`,
:class:`Judge`, :data:`GRADERS`, :func:`casework.grading.calibration.calibrate_judge`,
:func:`certify_judge` (the judge's verdicts against people's, stored as certifications).
"""

from casework.grading.calibration import calibrate_judge, load_judge
from casework.grading.certify import CertificationResult, certify_judge
from casework.grading.grade import grade
from casework.grading.graders import GradeContext, Grader, register_grader
from casework.grading.judge import PROMPT_VERSION, Judge, prompt_blocks, rubric_digests
from casework.grading.verdict import CheckResult, Verdict

__all__ = [
    "PROMPT_VERSION",
    "CertificationResult",
    "CheckResult",
    "GradeContext",
    "Grader",
    "Judge",
    "Verdict",
    "calibrate_judge",
    "certify_judge",
    "grade",
    "load_judge",
    "prompt_blocks",
    "register_grader",
    "rubric_digests",
]
