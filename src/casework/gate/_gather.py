"""Gathering the gate's inputs from each stage, then deciding with the pure rules.

Dataset checks come from the stages' own library functions (:func:`check_project`:
undeclared tools, stale rules, expired rows, synthetic cap; ``casework.labelling.dataset_agreement``:
kappa per slice; ``casework.leakage.unresolved_flags``); run verdicts from the workbench or
the run log. Entry point: :func:`gate_run`.
"""

from __future__ import annotations

from collections import Counter
from datetime import date
from typing import Any

from casework.dataset import load_dataset, read_versions
from casework.errors import ConfigError, Hint, UsageError
from casework.gate._dataset_checks import check_project
from casework.gate._decision import GateFinding, GateInputs, GateReport, evaluate_gate
from casework.labelling import dataset_agreement
from casework.leakage.flagfile import flag_file
from casework.leakage.review import unresolved_flags
from casework.project import Project
from casework.runner import load_run
from casework.runner.analysis import measures_same, trial_decisions
from casework.runner.metrics import in_population
from casework.runner.records import LoadedRun, tallies
from casework.runner.reviewed import reviewed_trials
from casework.runner.sim_audit import SimulatorAudit, audit_simulator


def releases_of(project: Project, run: LoadedRun) -> tuple[int | None, int | None]:
    """The release number whose content the run was on, and the latest release number.

    A run is matched to a release by its content hash, not by the name it was started with: a
    run on ``@working`` whose content equals a release is on that release; one whose content
    matches none is on no release (``None``).
    """
    folder = project.dataset_dir(run.header.dataset)
    versions = read_versions(folder, f"{project.relative(folder)}/versions.jsonl")
    on = next((v.number for v in versions if v.hash == run.header.dataset_hash), None)
    return on, (versions[-1].number if versions else None)


def _checked_ref(run: LoadedRun, on: int | None) -> str:
    """What the dataset checks read: the release the run was on, else the working tree."""
    return f"{run.header.dataset}@{on}" if on is not None else run.header.dataset


def dataset_findings(
    project: Project, run: LoadedRun, *, today: date | None = None, on: int | None = None
) -> list[GateFinding]:
    """`casework dataset check` on the release the run was on (else the working tree), as gate findings.

    ``on`` is that release's number when the caller has looked it up already (:func:`releases_of`).
    """
    on = releases_of(project, run)[0] if on is None else on
    report = check_project(project, _checked_ref(run, on), today=today)
    by_case = _case_slices(run)
    return [
        GateFinding(
            f.check,
            f.severity,
            f.render(),
            by_case.get(f.case_id) if f.case_id else None,
            f.hint,
        )
        for f in report.findings
    ]


def leakage_findings(project: Project, run: LoadedRun) -> list[GateFinding]:
    """Unresolved leakage review flags of the run's dataset (`casework review list --kind leakage-pair`).

    They are read from the dataset's `leakage.jsonl` (in git), never only from this machine's
    workbench, so a fresh clone gates on the same flags.
    """
    slices = _case_slices(run)
    out = []
    for flag in unresolved_flags(project, run.header.dataset):
        where = slices.get(flag.left_id) or slices.get(flag.right_id)
        out.append(
            GateFinding(
                "leakage_unresolved",
                "error",
                f"{flag.left_id} ({flag.left_split}) ~ {flag.right_id} ({flag.right_split}): "
                f"near-duplicate across splits (Jaccard {flag.jaccard:.2f}) is still {flag.status} "
                f"({_flag_file_of(project, run)})",
                where,
                Hint(
                    "review list",
                    params=(("kind", "leakage-pair"), ("dataset", run.header.dataset)),
                    why="to decide it in the review queue",
                ),
            )
        )
    return out


def _flag_file_of(project: Project, run: LoadedRun) -> str:
    return project.relative(flag_file(project, run.header.dataset))


def _case_slices(run: LoadedRun) -> dict[str, str]:
    return {t.case_id: t.slice for t in run.trials}


def slice_kappas(
    project: Project, run: LoadedRun, *, on: int | None = None
) -> dict[str, float | None]:
    """Outcome kappa per slice under its current guideline (``None``: too few double labels).

    Measured on the release the run was on (``on``, looked up when not given), else the working
    tree.
    """
    if not project.dataset_dir(run.header.dataset).is_dir():
        return {}  # a run standing alone (`casework import run` without a dataset): nothing to measure
    on = releases_of(project, run)[0] if on is None else on
    try:
        report = dataset_agreement(project, _checked_ref(run, on), bootstrap=0)
    except ConfigError:
        return {}
    out: dict[str, float | None] = {}
    for s in report.slices:
        if s.current:
            out[s.slice] = s.kappa.kappa if s.verdict.status == "ok" else None
    return out


def _absent(name: str) -> GateFinding:
    """The one finding of a run whose dataset is not in the project (an imported run alone)."""
    message = (
        f"the run's dataset '{name}' is not in this project: there is nothing to check it against"
    )
    return GateFinding("dataset_absent", "error", message)


def simulator_quarantine(
    project: Project, run: LoadedRun, on: int | None = None
) -> tuple[SimulatorAudit | None, list[GateFinding]]:
    """The simulated user's audit of the run, and one warning per quarantined case.

    A quarantined case (its simulator error rate above ``[thresholds] simulator_max_error``) is
    left out of every gating figure until its scenario is fixed and re-released; the warning says
    why. ``None`` when the run's dataset is not in the project.
    """
    if not project.dataset_dir(run.header.dataset).is_dir():
        return None, []
    on = releases_of(project, run)[0] if on is None else on
    audit = audit_simulator(project, run, load_dataset(project, _checked_ref(run, on)).cases)
    frozen = {t.case_id for t in run.trials if t.frozen}
    findings = [
        GateFinding(
            "simulator_quarantine",
            "warning",
            f"{audit.why(cid)}; left out of gating until its user_scenario is fixed and "
            "re-released",
            audit.cases[cid].slice,
        )
        for cid in audit.quarantined
        if cid not in frozen
    ]
    # A frozen case is counted, never named: its reasons quote its scenario.
    hidden = Counter(audit.cases[cid].slice for cid in audit.quarantined if cid in frozen)
    findings += [
        GateFinding(
            "simulator_quarantine",
            "warning",
            f"{n} frozen case(s) whose simulated user errs too often (above [thresholds] "
            "simulator_max_error); left out of gating until their user_scenario is fixed and "
            "re-released",
            slice_name,
        )
        for slice_name, n in sorted(hidden.items())
    ]
    return audit, findings


def _baseline_judged(project: Project, baseline: LoadedRun | None) -> dict[str, Any]:
    """The baseline's judged verdicts, certification and people's verdicts (corrected difference)."""
    if baseline is None:
        return {}
    judge = baseline.header.judge
    ppi = project.config.judge.estimator == "ppi++"
    return {
        "baseline_decisions": trial_decisions(baseline.trials, admissible_only=True),
        "baseline_certification": judge.certification if judge is not None else {},
        "baseline_reviewed": reviewed_trials(project, baseline) if ppi else {},
        "baseline_inadmissible": dict(
            Counter(
                t.slice
                for t in baseline.trials
                if not t.verdict.admissible and in_population(t.split)
            )
        ),
    }


def gate_inputs(
    project: Project,
    run: LoadedRun,
    baseline: LoadedRun | None = None,
    *,
    today: date | None = None,
    allow_old_version: str | None = None,
) -> GateInputs:
    """Collect every input of the gate for a run (and a baseline run)."""
    inadmissible = Counter(
        t.slice for t in run.trials if not t.verdict.admissible and in_population(t.split)
    )
    on, latest = releases_of(project, run)
    name = run.header.dataset
    same = (
        on is not None
        and latest is not None
        and on != latest
        and measures_same(
            load_dataset(project, f"{name}@{on}").cases,
            load_dataset(project, f"{name}@{latest}").cases,
        )
    )
    findings = (
        [*dataset_findings(project, run, today=today, on=on), *leakage_findings(project, run)]
        if project.dataset_dir(name).is_dir()
        else [_absent(name)]
    )
    audit, quarantine = simulator_quarantine(project, run, on)
    findings += quarantine
    held = set(audit.quarantined) if audit is not None else set()
    trials = [t for t in run.trials if t.case_id not in held]
    return GateInputs(
        run_id=run.header.run_id,
        dataset_ref=run.header.dataset_ref,
        finished=run.finished,
        findings=findings,
        slices=sorted({t.slice for t in run.trials}),
        slice_kappa=slice_kappas(project, run, on=on),
        run=tallies(trials, admissible_only=True),
        inadmissible=dict(inadmissible),
        baseline=tallies(baseline.trials, admissible_only=True) if baseline is not None else None,
        baseline_id=baseline.header.run_id if baseline is not None else None,
        dataset_version=on,
        latest_version=latest,
        allow_old_version=allow_old_version,
        same_as_latest=same,
        decisions=trial_decisions(trials, admissible_only=True),
        certification=run.header.judge.certification if run.header.judge is not None else {},
        estimator=project.config.judge.estimator,
        reviewed=reviewed_trials(project, run) if project.config.judge.estimator == "ppi++" else {},
        **_baseline_judged(project, baseline),
        # `casework import run` writes agent specs `import:<format>:<file>` (casework.interop).
        imported_from=run.header.agent_spec
        if run.header.agent_spec.startswith("import:")
        else None,
    )


def gate_run(
    project: Project,
    run_ref: str,
    baseline_ref: str | None = None,
    *,
    today: date | None = None,
    allow_old_version: str | None = None,
) -> GateReport:
    """Load the run (and baseline), gather the dataset checks, decide.

    Args:
        project: The project.
        run_ref: The run to decide on.
        baseline_ref: The released system's run to compare against, if any.
        today: The date retention is judged against (default: today, UTC).
        allow_old_version: Why a run on an older release may gate (printed with the decision);
            without it such a run fails.
    """
    if allow_old_version is not None and not allow_old_version.strip():
        raise UsageError("give the reason an older release may gate.", param="allow_old_version")
    run = load_run(project, run_ref)
    baseline = load_run(project, baseline_ref) if baseline_ref else None
    inputs = gate_inputs(project, run, baseline, today=today, allow_old_version=allow_old_version)
    return evaluate_gate(inputs, project.config.gate, project.config.thresholds)
