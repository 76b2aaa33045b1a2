"""A run's verdicts as evaluations other tools read: the format-neutral part of every verdict export.

Entry points: :func:`evaluations` (a trial's overall verdict, then one :class:`Evaluation` per
check; evidence withheld for frozen cases) and :func:`trace_ids` (the trace and span a trial's
evaluations attach to). The renderers live with their formats: ``junit``, ``otel``,
``openinference``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from casework.grading import CheckResult
from casework.runner import TrialRecord

#: Evaluation name of a trial's overall verdict (each check is ``casework.<check name>``).
VERDICT_NAME = "casework.verdict"
#: What stands for the evidence of a frozen case's checks.
WITHHELD = "frozen case: evidence withheld"
_HEX = re.compile(r"^[0-9a-f]+$")


@dataclass(frozen=True)
class Evaluation:
    """One evaluation of one trial: the overall verdict, or one check.

    Attributes:
        name: ``casework.verdict`` or ``casework.<check>``.
        label: ``pass``, ``fail`` or ``undetermined``.
        score: 1.0 for pass, 0.0 for fail, ``None`` when undetermined.
        explanation: The evidence (withheld for frozen cases).
        judged: True when an LLM judge decided it.
    """

    name: str
    label: str
    score: float | None
    explanation: str
    judged: bool = False


def verdict_label(passed: bool | None) -> str:
    """``pass``, ``fail`` or ``undetermined`` (a verdict that decided nothing)."""
    return "undetermined" if passed is None else ("pass" if passed else "fail")


def label_score(label: str) -> float | None:
    """1.0 for ``pass``, 0.0 for ``fail``, ``None`` for anything undetermined."""
    return {"pass": 1.0, "fail": 0.0}.get(label)


def evaluations(trial: TrialRecord) -> list[Evaluation]:
    """The trial's overall verdict, then one evaluation per check (in grading order)."""
    v = trial.verdict
    overall = verdict_label(v.passed)
    summary = WITHHELD if trial.frozen else v.summary()
    out = [
        Evaluation(
            VERDICT_NAME,
            overall,
            label_score(overall),
            summary,
            v.oracle_class != "state_assertion",
        )
    ]
    for c in v.checks:
        out.append(_check_evaluation(c, trial.frozen))
    return out


def _check_evaluation(c: CheckResult, frozen: bool) -> Evaluation:
    return Evaluation(
        f"casework.{c.name}",
        c.status,
        label_score(c.status),
        WITHHELD if frozen else c.evidence,
        c.judged,
    )


def reported_ids(trial: TrialRecord) -> tuple[str, str] | None:
    """``(trace_id, span_id)`` the trial's agent reported, as lower-case hex, else ``None``.

    Read from ``trajectory.metadata.trace_id`` / ``span_id`` (32 and 16 hex digits).
    """
    meta = trial.trajectory.metadata
    trace, span = meta.get("trace_id"), meta.get("span_id")
    if (
        isinstance(trace, str)
        and isinstance(span, str)
        and len(trace) == 32
        and len(span) == 16
        and _HEX.match(trace.lower())
        and _HEX.match(span.lower())
    ):
        return trace.lower(), span.lower()
    return None


def trace_ids(run_id: str, trial: TrialRecord) -> tuple[str, str]:
    """``(trace_id, span_id)`` of the trial, as lower-case hex.

    The trajectory's own when it reports them (:func:`reported_ids`), else derived from run id,
    case id and trial (a SHA-256 prefix).
    """
    reported = reported_ids(trial)
    if reported is not None:
        return reported
    digest = hashlib.sha256(f"{run_id}/{trial.case_id}/{trial.trial}".encode()).hexdigest()
    return digest[:32], digest[32:48]
