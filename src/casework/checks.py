"""`casework check`: every dataset check that needs no run, composed from each stage.

Entry point: :func:`check_project`. The gate runs the same function, so a dataset that fails
`casework check` can never pass the gate.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime

from casework.dataset import CheckReport, check_dataset, declared_tools, load_dataset
from casework.project import Project
from casework.synth import synthetic_cap_violations

__all__ = ["check_project"]


def check_project(project: Project, ref: str, *, today: date | None = None) -> CheckReport:
    """Run the dataset checks on ``ref`` (``name`` or ``name@version``).

    Raises:
        InputErrors: The dataset files have bad lines (reported before any check runs).
    """
    dataset = load_dataset(project, ref)
    tools = declared_tools(project)
    report = check_dataset(
        dataset.ref, dataset.cases, tools, today=today or datetime.now(UTC).date()
    )
    cap = project.config.thresholds.synthetic_cap
    findings = [v.finding() for v in synthetic_cap_violations(dataset.cases, cap)]
    return replace(
        report, findings=[*report.findings, *findings], checks=[*report.checks, "synthetic_cap"]
    )
