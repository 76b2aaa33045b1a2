"""ADK's own ``response_match_score``, carried as a programmatic oracle.

An imported ADK case with a reference reply is graded the way ``adk eval`` grades it: ADK's
``RougeEvaluator`` (``google/adk/evaluation/final_response_match_v1.py``) scores the agent's
final reply against the reference by ROUGE-1 F-measure (unigram overlap, Porter-stemmed, with
ADK's Unicode-aware tokenizer) and passes at or above the threshold, 0.8 by default as in ADK's
``AgentEvaluator``. The check calls ADK's evaluator itself rather than a re-implementation, so
the two verdicts cannot drift apart; it needs ``google-adk`` with ``rouge-score`` installed
(``pip install 'google-adk[eval]'``) when the case is graded.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from casework.grading.programmatic import CheckOutcome
from casework.schema import Trajectory

__all__ = ["CHECK", "DEFAULT_THRESHOLD", "response_match"]

#: The ``oracle.check`` of imported ADK cases with a reference reply.
CHECK = "casework.interop.adk.oracle:response_match"
#: ADK's default ``response_match_score`` threshold (``AgentEvaluator``'s criteria).
DEFAULT_THRESHOLD = 0.8


def response_match(
    before: Mapping[str, Any],
    after: Mapping[str, Any],
    trajectory: Trajectory,
    params: Mapping[str, Any],
) -> CheckOutcome:
    """Pass when ADK's ROUGE-1 score of the final reply against ``params["reference"]`` holds.

    Args:
        before: Unused (the reply decides).
        after: Unused.
        trajectory: The agent's trajectory; its final reply is scored.
        params: ``reference`` (the ADK eval case's final response) and ``threshold``
            (default 0.8).

    Raises:
        RuntimeError: google-adk or rouge-score is not installed.
    """
    try:
        # Optional: only ADK users grade ADK's metric, and ADK is a large install.
        from google.adk.evaluation.eval_case import Invocation
        from google.adk.evaluation.eval_metrics import EvalMetric
        from google.adk.evaluation.final_response_match_v1 import RougeEvaluator
        from google.genai import types
    except ImportError as exc:
        raise RuntimeError(
            f"ADK's response_match_score needs google-adk and rouge-score "
            f"(pip install 'google-adk[eval]'): {exc}"
        ) from exc
    reference = str(params.get("reference", ""))
    threshold = float(params.get("threshold", DEFAULT_THRESHOLD))

    def invocation(text: str) -> Invocation:
        user = types.Content(role="user", parts=[types.Part(text="")])
        reply = types.Content(role="model", parts=[types.Part(text=text)])
        return Invocation(user_content=user, final_response=reply)

    metric = EvalMetric(metric_name="response_match_score", threshold=threshold)
    result = RougeEvaluator(metric).evaluate_invocations(
        [invocation(trajectory.reply())], [invocation(reference)]
    )
    score = result.overall_score or 0.0
    passed = score >= threshold
    return CheckOutcome(
        passed,
        f"ADK response_match_score {score:.3f} {'>=' if passed else '<'} {threshold:g} "
        "(ROUGE-1 F of the final reply against the reference)",
    )
