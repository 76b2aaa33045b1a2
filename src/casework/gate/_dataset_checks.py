"""`casework dataset check`: every dataset check that needs no run, composed from each stage.

Entry point: :func:`check_project`. The gate runs the same function, so a dataset that fails
`casework dataset check` can never pass the gate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import NamedTuple

from casework.dataset import DatasetScan, ProgressCallback, declared_tools
from casework.dataset.check import CheckReport, DatasetChecks, Finding
from casework.dataset.parallel import (
    PARALLEL_MIN_BYTES,
    parallel_workers,
    scan_bytes,
    scan_dataset_chunks,
)
from casework.dataset.stream import scan_dataset
from casework.dataset.tools import ToolDecl, environment_tools
from casework.errors import CaseworkError
from casework.gate._quota import unsatisfiable_shares
from casework.grading.programmatic import CheckLoadError, resolve_check
from casework.privacy.residual import presidio_second_opinion, residual_pii
from casework.project import Project
from casework.runner.metrics import in_population
from casework.schema import Case
from casework.synth.cap import synthetic_cap_violations


class _SliceSource(NamedTuple):
    """The fields of a case the synthetic cap and the unsatisfiable quota count."""

    slice: str
    source: str
    satisfiable: bool = True
    split: str = ""


class _CheckJob:
    """Every per-case check of `casework dataset check` over the cases fed to it (picklable)."""

    def __init__(
        self,
        tools: Mapping[str, ToolDecl],
        today: date,
        pii: bool,
        presidio: bool,
        root: Path | None = None,
        slice_tools: Mapping[str, Mapping[str, ToolDecl]] | None = None,
    ):
        self.checks = DatasetChecks(tools, today=today, root=root, slice_tools=slice_tools)
        # Counted, not listed: the cap and the quota only count, and a worker sends back a few
        # counts rather than a tuple a case (their pickling was a twentieth of `check`).
        self.facts: Counter[_SliceSource] = Counter()
        self.pii_findings: list[Finding] = []
        self.pii = pii
        self.presidio = presidio
        self.held: list[Case] = []
        # Programmatic oracles' checks: the first case naming each, and how many do.
        self.programmatic: dict[str, tuple[str, int]] = {}

    def add(self, case: Case) -> None:
        self.checks.add(case)
        check = case.oracle.check
        if check is not None:
            first, n = self.programmatic.get(check, (case.id, 0))
            self.programmatic[check] = (first, n + 1)
        self.facts[_SliceSource(case.slice, case.source, case.satisfiable, case.split)] += 1
        if self.pii:
            self.pii_findings.extend(residual_pii((case,)))
        if self.presidio:
            self.held.append(case)

    def merge(self, other: _CheckJob) -> None:
        self.checks.merge(other.checks)
        self.facts.update(other.facts)
        self.pii_findings += other.pii_findings
        self.held += other.held
        for check, (first, n) in other.programmatic.items():
            mine = self.programmatic.get(check)
            self.programmatic[check] = (min(first, mine[0]), n + mine[1]) if mine else (first, n)


def _tools(
    project: Project,
) -> tuple[Mapping[str, ToolDecl], dict[str, dict[str, ToolDecl]]]:
    """The declared tools, and those of slices a tool environment serves (its declarations)."""
    run = project.config.run
    if not (run.environment or run.environments):
        return declared_tools(project), {}
    default, per_slice = environment_tools(project)
    return (default if default is not None else declared_tools(project)), per_slice


def _scan(
    project: Project, ref: str, job: _CheckJob, on_progress: ProgressCallback | None
) -> DatasetScan:
    """Feed every case of ``ref`` to ``job``: on all cores for a large tree or release."""
    size = scan_bytes(project, ref)
    workers = parallel_workers()
    if size is None or size < PARALLEL_MIN_BYTES or workers < 2 or job.presidio:
        # The check reads only the labels' keys: checked as they stream past, none kept (at
        # 100k cases the 200k label models took 0.9 GB of a one-core check's 1.06 GB).
        return scan_dataset(project, ref, job.add, on_progress=on_progress, keep_labels=False)
    scan, jobs = scan_dataset_chunks(
        project,
        ref,
        lambda: _CheckJob(
            job.checks.tools,
            job.checks.today,
            job.pii,
            False,
            job.checks.root,
            job.checks.slice_tools,
        ),
        workers=workers,
        keep_labels=False,  # the check reads only the labels' keys: validated on every core
        on_progress=on_progress,
        need_hash=False,  # only which release the tree is (`scan.ref`) is reported
    )
    for part in jobs:
        job.merge(part)
    return scan


def _programmatic_findings(checks: Mapping[str, tuple[str, int]], root: Path) -> list[Finding]:
    """Every programmatic oracle's check loads: a missing or broken one is an error, located."""
    findings = []
    for ref, (first, n) in sorted(checks.items()):
        try:
            resolve_check(ref, root=root)
        except CheckLoadError as exc:
            more = f" ({n} case(s) name it)" if n > 1 else ""
            findings.append(
                Finding("programmatic_check", "error", first, "oracle.check", f"{exc}{more}")
            )
    return findings


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

    The cases stream past once (:func:`casework.dataset.scan_dataset`, or
    :func:`casework.dataset.scan_dataset_chunks` on every core for a large working tree): each
    is checked as it is read and dropped, keeping only its findings and the facts the
    cross-case checks need (ids, slice and source), so memory stays bounded by the findings,
    not the dataset.

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
        tools, slice_tools = _tools(project)
        tools_error: CaseworkError | None = None
    except CaseworkError as exc:  # reported after the dataset's own errors, as before streaming
        tools, slice_tools, tools_error = {}, {}, exc
    job = _CheckJob(
        tools, today or datetime.now(UTC).date(), pii, presidio, project.root, slice_tools
    )
    scan = _scan(project, ref, job, on_progress)
    if tools_error is not None:
        raise tools_error
    report = job.checks.report(scan.ref)
    cap = project.config.thresholds.synthetic_cap
    # The cap, like the quota and the gate, counts the cases that are not retired.
    counted = [f for f in job.facts.elements() if in_population(f.split)]
    findings = [
        *report.findings,
        *(v.finding() for v in synthetic_cap_violations(counted, cap)),
    ]
    checks_run = [*report.checks, "synthetic_cap"]
    if job.programmatic:
        findings += _programmatic_findings(job.programmatic, project.root)
        checks_run.append("programmatic_check")
    t = project.config.thresholds
    shares = unsatisfiable_shares(job.facts.elements(), t.unsatisfiable_band, t.mature_slices)
    if t.mature_slices:  # the band applies only to slices marked mature
        findings += [s.finding() for s in shares if s.fails]
        checks_run.append("unsatisfiable_quota")
    if pii:
        findings += job.pii_findings
        checks_run.append("residual_pii")
    if presidio:
        findings += presidio_second_opinion(job.held)
        checks_run.append("presidio")
    notes = [f"unsatisfiable: {s}" for s in shares]
    return replace(report, findings=findings, checks=checks_run, notes=notes)
