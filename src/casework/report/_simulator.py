"""The report's section on the simulated user: its error rate per slice and the quarantined cases.

:func:`simulator_audit` audits a run with simulated users on the dataset version it ran on
(:func:`casework.runner.sim_audit.audit_simulator`: mechanical checks and people's trajectory
reviews blaming the simulated user); :func:`simulator_view` formats it for the template (pure).
A frozen case is counted, never named: its reasons quote its scenario.
"""

from __future__ import annotations

from collections.abc import Set
from dataclasses import dataclass

from casework.dataset import load_dataset
from casework.errors import CaseworkError
from casework.project import Project
from casework.runner.records import LoadedRun
from casework.runner.sim_audit import SimulatorAudit, audit_simulator


@dataclass(frozen=True)
class SimulatorRow:
    """One slice's simulator error rate, formatted."""

    slice: str
    rate: str
    ci: str
    counts: str


@dataclass(frozen=True)
class SimulatorView:
    """The simulated user's section of the report.

    Attributes:
        threshold: ``[thresholds] simulator_max_error`` as a percentage.
        rows: Per slice: the rate, its case-level interval and the trial counts.
        quarantined: Why each non-frozen quarantined case is left out of gating.
        quarantined_frozen: Frozen cases quarantined (a count).
        stale_reviews: Reviews left out as stale (made on another scenario or simulator).
    """

    threshold: str
    rows: list[SimulatorRow]
    quarantined: list[str]
    quarantined_frozen: int
    stale_reviews: int


def simulator_view(audit: SimulatorAudit, frozen: Set[str]) -> SimulatorView:
    """Format ``audit`` for the report; cases in ``frozen`` are counted, never named."""
    rows = []
    for name, p in sorted(audit.slices.items()):
        has_ci = p.low is not None and p.high is not None
        rows.append(
            SimulatorRow(
                slice=name,
                rate="–" if p.estimate is None else f"{p.estimate:.3f}",
                ci=f"[{p.low:.2f}, {p.high:.2f}]" if has_ci else "",
                counts=f"{p.successes} of {p.n}",
            )
        )
    return SimulatorView(
        threshold=f"{audit.threshold:.0%}",
        rows=rows,
        quarantined=[audit.why(c) for c in audit.quarantined if c not in frozen],
        quarantined_frozen=sum(c in frozen for c in audit.quarantined),
        stale_reviews=audit.stale_reviews,
    )


def simulator_audit(project: Project, run: LoadedRun) -> SimulatorAudit | None:
    """The audit of a run with simulated users, on the dataset version it ran on.

    ``None`` for a run without simulated users, or when neither that version nor the working
    tree of its dataset loads (a run imported from elsewhere): the report then has no section.
    """
    if not any(t.user_sim for t in run.trials):
        return None
    h = run.header
    for ref in (f"{h.dataset}@{h.dataset_hash}", h.dataset):
        try:
            cases = load_dataset(project, ref).cases
        except CaseworkError:
            continue
        audit = audit_simulator(project, run, cases)
        return audit if audit.cases else None
    return None
