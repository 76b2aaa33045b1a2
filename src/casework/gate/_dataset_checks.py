"""`casework check`: every dataset check that needs no run, composed from each stage.

Entry point: :func:`check_project`. The gate runs the same function, so a dataset that fails
`casework check` can never pass the gate.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime
from typing import NamedTuple

from casework.dataset import (
    CheckReport,
    DatasetChecks,
    Finding,
    ProgressCallback,
    declared_tools,
    scan_dataset,
)
from casework.errors import CaseworkError
from casework.privacy import presidio_second_opinion, residual_pii
from casework.project import Project
from casework.schema import Case
from casework.synth import synthetic_cap_violations


class _SliceSource(NamedTuple):
    """The two fields of a case the synthetic cap counts."""

    slice: str
    source: str


def check_project(
    project: Project,
    ref: str,
    *,
    today: date | None = None,
    pii: bool = False,
    presidio: bool = False,
    on_progress: ProgressCallback | None = None,
) -> CheckReport:
    """Run the dataset checks on ``ref`` (``name`` or ``name@version``).

    The cases stream past once (:func:`casework.dataset.scan_dataset`): each is checked as it
    is read and dropped, keeping only its findings and the facts the cross-case checks need
    (ids, slice and source), so memory stays bounded by the findings, not the dataset.

    Args:
        project: The project.
        ref: ``name`` or ``name@version``.
        today: The date retention is judged against (default: today, UTC).
        pii: Also scan for residual raw PII (a second, independent pass over released text).
        presidio: Add Presidio's pattern recognisers as a second opinion (warnings; needs the
            `presidio` extra; holds the cases, as Presidio reads them all at once).
        on_progress: Called with bytes read and bytes in all as the cases file streams past.

    Raises:
        InputErrors: The dataset files have bad lines (reported before any check runs).
    """
    try:
        tools = declared_tools(project)
        tools_error: CaseworkError | None = None
    except CaseworkError as exc:  # reported after the dataset's own errors, as before streaming
        tools, tools_error = {}, exc
    checks = DatasetChecks(tools, today=today or datetime.now(UTC).date())
    facts: list[_SliceSource] = []
    pii_findings: list[Finding] = []
    held: list[Case] = []

    def visit(case: Case) -> None:
        checks.add(case)
        facts.append(_SliceSource(case.slice, case.source))
        if pii:
            pii_findings.extend(residual_pii((case,)))
        if presidio:
            held.append(case)

    scan = scan_dataset(project, ref, visit, on_progress=on_progress)
    if tools_error is not None:
        raise tools_error
    report = checks.report(scan.ref)
    cap = project.config.thresholds.synthetic_cap
    findings = [*report.findings, *(v.finding() for v in synthetic_cap_violations(facts, cap))]
    checks_run = [*report.checks, "synthetic_cap"]
    if pii:
        findings += pii_findings
        checks_run.append("residual_pii")
    if presidio:
        findings += presidio_second_opinion(held)
        checks_run.append("presidio")
    return replace(report, findings=findings, checks=checks_run)
