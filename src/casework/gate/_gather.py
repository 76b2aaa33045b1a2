"""Gathering the gate's inputs from each stage, then deciding with the pure rules.

Dataset checks come from the stages' own library functions (:func:`check_project`:
undeclared tools, stale rules, expired rows, synthetic cap; ``casework.labelling.dataset_agreement``:
kappa per slice; ``casework.leakage.review.unresolved_flags``); run verdicts from the workbench or
the run log. Entry point: :func:`gate_run`.
"""

from __future__ import annotations

from collections import Counter
from datetime import date

from casework.errors import ConfigError
from casework.gate._checks import check_project
from casework.gate._decision import GateFinding, GateInputs, GateReport, evaluate_gate
from casework.labelling import dataset_agreement
from casework.leakage import unresolved_flags
from casework.project import Project
from casework.runner import LoadedRun, load_run, tallies

__all__ = ["dataset_findings", "gate_inputs", "gate_run", "leakage_findings", "slice_kappas"]


def _check_ref(run: LoadedRun) -> str:
    name, _, version = run.header.dataset_ref.partition("@")
    return name if version == "working" else run.header.dataset_ref


def dataset_findings(
    project: Project, run: LoadedRun, *, today: date | None = None
) -> list[GateFinding]:
    """`casework check` on the run's dataset version, as gate findings."""
    report = check_project(project, _check_ref(run), today=today)
    by_case = _case_slices(run)
    return [
        GateFinding(f.check, f.severity, str(f), by_case.get(f.case_id) if f.case_id else None)
        for f in report.findings
    ]


def leakage_findings(project: Project, run: LoadedRun) -> list[GateFinding]:
    """Unresolved leakage review flags of the run's dataset (`casework leakage review`)."""
    slices = _case_slices(run)
    out = []
    for flag in unresolved_flags(project, run.header.dataset):
        where = slices.get(flag.left_id) or slices.get(flag.right_id)
        out.append(
            GateFinding(
                "leakage_unresolved",
                "error",
                f"{flag.left_id} ({flag.left_split}) ~ {flag.right_id} ({flag.right_split}): "
                f"near-duplicate across splits (Jaccard {flag.jaccard:.2f}) is still {flag.status}; "
                "review it with `casework leakage review`",
                where,
            )
        )
    return out


def _case_slices(run: LoadedRun) -> dict[str, str]:
    return {t.case_id: t.slice for t in run.trials}


def slice_kappas(project: Project, run: LoadedRun) -> dict[str, float | None]:
    """Outcome kappa per slice under its current guideline (``None``: too few double labels)."""
    try:
        report = dataset_agreement(project, _check_ref(run), bootstrap=0)
    except ConfigError:
        return {}
    out: dict[str, float | None] = {}
    for s in report.slices:
        if s.current:
            out[s.slice] = s.kappa.kappa if s.verdict.status == "ok" else None
    return out


def gate_inputs(
    project: Project,
    run: LoadedRun,
    baseline: LoadedRun | None = None,
    *,
    today: date | None = None,
) -> GateInputs:
    """Collect every input of the gate for a run (and a baseline run)."""
    inadmissible = Counter(t.slice for t in run.trials if not t.verdict.admissible)
    return GateInputs(
        run_id=run.header.run_id,
        dataset_ref=run.header.dataset_ref,
        finished=run.finished,
        findings=[*dataset_findings(project, run, today=today), *leakage_findings(project, run)],
        slices=sorted({t.slice for t in run.trials}),
        slice_kappa=slice_kappas(project, run),
        run=tallies(run.trials, admissible_only=True),
        inadmissible=dict(inadmissible),
        baseline=tallies(baseline.trials, admissible_only=True) if baseline is not None else None,
        baseline_id=baseline.header.run_id if baseline is not None else None,
    )


def gate_run(
    project: Project, run_ref: str, baseline_ref: str | None = None, *, today: date | None = None
) -> GateReport:
    """Load the run (and baseline), gather the dataset checks, decide."""
    run = load_run(project, run_ref)
    baseline = load_run(project, baseline_ref) if baseline_ref else None
    inputs = gate_inputs(project, run, baseline, today=today)
    return evaluate_gate(inputs, project.config.gate, project.config.thresholds)
