"""Verdicts: the result of grading one trial, check by check, with evidence a person can read."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from casework.schema import OracleClass

__all__ = ["CheckResult", "CheckStatus", "Verdict", "combine"]

CheckStatus = Literal["pass", "fail", "undetermined"]
"""`undetermined`: the check could not decide (no judge configured, a malformed matcher)."""


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class CheckResult(_Model):
    """One grader's finding on one trial."""

    name: str
    """Grader name (`required_tools`, `state`, `outcome`…)."""
    status: CheckStatus
    """`pass`, `fail` or `undetermined`."""
    evidence: str
    """Why, in one or two sentences a person can check against the trajectory."""
    judged: bool = False
    """True when an LLM judge decided this check."""
    admissible: bool = True
    """False when the deciding judge is not certified for the case's slice (never gates)."""
    # Left out when empty by a field-level exclusion: a model-level wrap serializer made every
    # dump of a trial record several times slower (it leaves pydantic's compiled path).
    findings: list[bool] = Field(default_factory=list, exclude_if=lambda v: not v)
    """`answer_facts` only: the judge's finding for each expected fact, in label order (True:
    stated). Empty for other checks and in logs written before it existed; left out when empty."""


class Verdict(_Model):
    """Pass/fail of one trial with per-check evidence."""

    schema_version: Literal[1] = 1
    """Version of this record format."""
    passed: bool | None
    """True when every check passed, False when any failed, None when some could not decide."""
    checks: list[CheckResult] = Field(default_factory=list)
    """Every check that applied, in grading order."""
    oracle_class: OracleClass = "state_assertion"
    """Weakest grader this trial needed: `state_assertion` (programmatic) or `rubric_judge` (a
    judge decided a check, or the case's oracle is a rubric judge)."""
    admissible: bool = True
    """False when the result rests on a judge that is not admissible for the slice."""

    def failures(self) -> list[CheckResult]:
        """The checks that failed."""
        return [c for c in self.checks if c.status == "fail"]

    def summary(self) -> str:
        """One line: the failed (or undetermined) checks with their evidence."""
        bad = self.failures() or [c for c in self.checks if c.status == "undetermined"]
        if not bad:
            return "all checks passed"
        return "; ".join(f"{c.name}: {c.evidence}" for c in bad)


def combine(checks: list[CheckResult]) -> Verdict:
    """Combine checks: any failure fails; otherwise any undetermined leaves the verdict open.

    Admissibility follows what decides the result: a failure from a programmatic (or admissible)
    check is admissible whatever the judge said elsewhere; a pass needs every judged check admissible.
    """
    failed = [c for c in checks if c.status == "fail"]
    if failed:
        passed: bool | None = False
        deciding = failed
        admissible = any(not c.judged or c.admissible for c in deciding)
    elif any(c.status == "undetermined" for c in checks):
        passed = None
        admissible = all(c.admissible for c in checks if c.judged and c.status != "undetermined")
    else:
        passed = True
        admissible = all(c.admissible for c in checks if c.judged)
    judged = any(c.judged for c in checks)
    return Verdict(
        passed=passed,
        checks=checks,
        oracle_class="rubric_judge" if judged else "state_assertion",
        admissible=admissible,
    )
