"""`casework check`: every dataset check that needs no run, composed from each stage.

Entry point: :func:`check_project`. The gate runs the same function, so a dataset that fails
`casework check` can never pass the gate.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime

from casework.dataset import CheckReport, check_dataset, declared_tools, load_dataset
from casework.privacy import presidio_second_opinion, residual_pii
from casework.project import Project
from casework.synth import synthetic_cap_violations


def check_project(
    project: Project,
    ref: str,
    *,
    today: date | None = None,
    pii: bool = False,
    presidio: bool = False,
) -> CheckReport:
    """Run the dataset checks on ``ref`` (``name`` or ``name@version``).

    Args:
        project: The project.
        ref: ``name`` or ``name@version``.
        today: The date retention is judged against (default: today, UTC).
        pii: Also scan for residual raw PII (a second, independent pass over released text).
        presidio: Add Presidio's pattern recognisers as a second opinion (warnings; needs the
            `presidio` extra).

    Raises:
        InputErrors: The dataset files have bad lines (reported before any check runs).
    """
    dataset = load_dataset(project, ref)
    tools = declared_tools(project)
    report = check_dataset(
        dataset.ref, dataset.cases, tools, today=today or datetime.now(UTC).date()
    )
    cap = project.config.thresholds.synthetic_cap
    findings = [
        *report.findings,
        *(v.finding() for v in synthetic_cap_violations(dataset.cases, cap)),
    ]
    checks = [*report.checks, "synthetic_cap"]
    if pii:
        findings += residual_pii(dataset.cases)
        checks.append("residual_pii")
    if presidio:
        findings += presidio_second_opinion(dataset.cases)
        checks.append("presidio")
    return replace(report, findings=findings, checks=checks)
