"""`casework gate`: the release decision from dataset checks and a run's results."""

from __future__ import annotations

from typing import Any

import click

from casework.cli._output import emit
from casework.cli.context import (
    FORMAT,
    console,
    example,
    pass_project,
)
from casework.cli.results import corrected_difference_json, corrected_json
from casework.errors import GateFailed
from casework.gate import GateReport, gate_run
from casework.project import Project

__all__ = ["COMMANDS"]


def _f(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _comparison_json(report: GateReport) -> dict[str, Any]:
    c = report.comparison
    assert c is not None
    d = c.overall
    return {
        "decision": c.decision,
        "rule": c.rule,
        "cases": d.cases,
        "run_rate": d.run_rate,
        "baseline_rate": d.baseline_rate,
        "difference": d.difference,
        "interval": [d.low, d.high],
        "method": d.method,
        "margin": c.margin,
        "p_noninferior": c.p_noninferior,
        "p_inferior": c.p_inferior,
        "minimum_detectable_effect": c.mde,
        "cases_needed": c.cases_needed,
        "slices": [
            {
                "slice": s.slice,
                "cases": 0 if s.difference is None else s.difference.cases,
                "difference": None if s.difference is None else s.difference.difference,
                "interval": None if s.difference is None else [s.difference.low, s.difference.high],
                "p_inferior": s.p_inferior,
                "p_holm": s.p_holm,
                "regressed": s.regressed,
            }
            for s in c.slices
        ],
        "corrected": None if c.corrected is None else corrected_difference_json(c.corrected),
    }


def _gate_json(report: GateReport) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if report.corrected is not None:  # only when a judge decided gating verdicts
        extra["corrected_pass_rate"] = corrected_json(report.corrected)
    if report.comparison is not None:  # only with a baseline sharing gating cases
        extra["comparison"] = _comparison_json(report)
    return {
        "passed": report.passed,
        "decision": report.decision,
        "inconclusive": report.inconclusive_policy,
        "pass_rate": report.pass_rate,
        **extra,
        "baseline_pass_rate": report.baseline_pass_rate,
        "cases": report.cases,
        "gating_slices": report.gating_slices,
        "failures": [
            {"code": r.code, "message": r.message, "slice": r.slice} for r in report.failures
        ],
        "warnings": [
            {"code": r.code, "message": r.message, "slice": r.slice} for r in report.warnings
        ],
    }


@example(
    "casework gate --run latest --baseline run-a",
    "casework gate --run latest --github --format json",
)
@click.command("gate")
@click.option("--run", "run", required=True, help="The run to decide on.")
@click.option("--baseline", default=None, help="Run of the released system to compare against.")
@click.option(
    "--github", is_flag=True, help="Also print GitHub Actions annotations (::error / ::warning)."
)
@click.option(
    "--allow-old-version",
    "allow_old_version",
    metavar="REASON",
    default=None,
    help="Let a run on an older release gate, for this reason (printed); else such a run fails.",
)
@FORMAT
@pass_project
def gate_cmd(
    project: Project,
    run: str,
    baseline: str | None,
    github: bool,
    allow_old_version: str | None,
    fmt: str,
) -> None:
    """Decide a release from dataset checks and RUN's results; exit 1 with the reasons on failure.

    The gate fails closed: the run must be on the dataset's latest release, every gating slice
    must be in it, and `[gate] min_pass_rate` must be set. A run imported with `import run`
    never gates (its verdicts carry no per-check evidence).

    See docs/gate.md.
    """
    report = gate_run(project, run, baseline, allow_old_version=allow_old_version)
    if github:
        for line in report.github_annotations():
            click.echo(line)
    if fmt == "json":
        from casework.gate.outputs import GateDecision  # here: only JSON output needs it

        emit(GateDecision.model_validate(_gate_json(report)))
    else:
        rate = _f(report.pass_rate)
        base = (
            f" (baseline {_f(report.baseline_pass_rate)})"
            if report.baseline_pass_rate is not None
            else ""
        )
        fixed = f"; {report.corrected.describe()}" if report.corrected is not None else ""
        console.print(
            f"pass@1 {rate}{base} on {report.cases} gating cases{fixed}; slices: {', '.join(report.gating_slices) or 'none'}"
        )
        if report.comparison is not None:
            console.print(f"against the baseline: {report.comparison.describe()}")
        for w in report.warnings:
            console.print(f"[yellow]warn[/] {w}")
        console.print(f"decision: {report.decision}")
        if report.passed:
            console.print("[green]gate PASSED[/]")
    if not report.passed:
        raise GateFailed("gate FAILED:\n" + "\n".join(f"  {r}" for r in report.failures))


COMMANDS: list[click.Command] = [gate_cmd]
