"""Complete deletion: `casework forget` and `casework expire` remove every copy casework controls.

:func:`casework.privacy.forget` and :func:`casework.privacy.expire` release dataset versions
without the rows; the rows also live in the workbench (raw labels, assignments, leakage flags,
trials and runs, judge calibrations, cached LLM answers), in run logs and in HTML reports.
Entry points :func:`forget_everywhere` and :func:`expire_everywhere` remove those copies as well,
and list the files in the project that casework did not write but that still hold the rows
(exported labelling sheets, ADK eval sets…), plus the copies no command can see.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import delete, or_, select

from casework.dataset import StageProgress, dataset_lock
from casework.errors import CaseworkError
from casework.gate import slice_kappas
from casework.leakage import read_flags, write_flags
from casework.privacy import Removal, expire, forget
from casework.project import Project
from casework.report import write_report
from casework.runner import LogRedaction, load_run, redact_run_logs, redact_run_rows
from casework.workbench import (
    AssignmentRow,
    JudgeCalibrationRow,
    LeakageFlag,
    LLMResponse,
    RawLabelRow,
    Workbench,
    open_workbench,
)

__all__ = ["OUT_OF_REACH", "Erasure", "WorkbenchErasure", "expire_everywhere", "forget_everywhere"]

#: Copies no casework command can see: the user must delete or redact them.
OUT_OF_REACH = (
    "labelling sheets sent to labellers (`casework label export`) and their replies",
    "ADK eval sets written by `casework interop export-adk`",
    "reports written with `casework report -o` outside the runs folder, and reports passed on",
    "run logs and reports kept as CI artefacts or copied elsewhere",
    "other workbenches (another CASEWORK_DB_URL, a colleague's machine)",
    "git history, clones and forks (see the purge recipe)",
)

#: Folders never searched for leftover copies (besides hidden ones: `.git`, `.casework`…).
_SKIP_DIRS = frozenset({"venv", "node_modules", "__pycache__"})
_MAX_SCANNED = 64 * 1024 * 1024


@dataclass
class WorkbenchErasure:
    """Rows deleted (or redacted) from the workbench.

    Attributes:
        labels: Raw labels.
        assignments: Labelling assignments.
        leakage_flags: Leakage review flags naming a removed row.
        trials: Trials of runs (their trajectories hold the customer's pseudonyms).
        runs: Runs whose header and counts were rewritten.
        calibrations: Judge calibrations whose disagreements named a removed row.
        llm_responses: Cached LLM answers mentioning a removed row's pseudonyms.
    """

    labels: int = 0
    assignments: int = 0
    leakage_flags: int = 0
    trials: int = 0
    runs: int = 0
    calibrations: int = 0
    llm_responses: int = 0


@dataclass(frozen=True)
class Erasure:
    """What a deletion request or an expiry removed, everywhere.

    Attributes:
        removals: Per dataset: rows removed and the new release.
        workbench: Workbench rows removed.
        run_logs: Run logs rewritten without the removed trials.
        reports: Reports regenerated from the redacted runs.
        reports_deleted: Reports that held removed rows and no longer match a run (deleted).
        leftovers: Files in the project, not written by casework, that still hold removed rows.
        out_of_reach: Copies casework cannot see at all.
        dry_run: Whether nothing was changed.
    """

    removals: list[Removal]
    workbench: WorkbenchErasure = field(default_factory=WorkbenchErasure)
    run_logs: list[LogRedaction] = field(default_factory=list)
    reports: list[Path] = field(default_factory=list)
    reports_deleted: list[Path] = field(default_factory=list)
    leftovers: list[Path] = field(default_factory=list)
    out_of_reach: tuple[str, ...] = OUT_OF_REACH
    dry_run: bool = False


def _workbench_exists(project: Project) -> bool:
    url = project.workbench_url()
    default = f"sqlite:///{project.state_dir / 'workbench.db'}"
    return url != default or (project.state_dir / "workbench.db").exists()


def _erase_rows(
    wb: Workbench, dataset: str, ids: set[str], needles: Sequence[str], dry_run: bool
) -> WorkbenchErasure:
    out = WorkbenchErasure()
    trials, runs = redact_run_rows(wb, dataset, ids, dry_run=dry_run)
    out.trials, out.runs = trials, len(runs)
    ordered = sorted(ids)
    with wb.session() as s:
        for model, attr in ((RawLabelRow, "labels"), (AssignmentRow, "assignments")):
            where = (model.dataset == dataset) & model.case_id.in_(ordered)
            found = s.scalars(select(model.id).where(where)).all()
            setattr(out, attr, len(found))
            if found and not dry_run:
                s.execute(delete(model).where(model.id.in_(found)))
        flags = s.scalars(
            select(LeakageFlag.id).where(
                LeakageFlag.dataset == dataset,
                or_(LeakageFlag.left_id.in_(ordered), LeakageFlag.right_id.in_(ordered)),
            )
        ).all()
        out.leakage_flags = len(flags)
        if flags and not dry_run:
            s.execute(delete(LeakageFlag).where(LeakageFlag.id.in_(flags)))
        for cal in s.scalars(
            select(JudgeCalibrationRow).where(JudgeCalibrationRow.dataset == dataset)
        ).all():
            report = _calibration_without(cal.report, ids)
            if report != cal.report:
                out.calibrations += 1
                if not dry_run:
                    cal.report = report
        marks = [n for n in needles if n]
        for key, text, params in s.execute(
            select(LLMResponse.key, LLMResponse.text, LLMResponse.params)
        ).all():
            if any(n in text or n in params for n in marks):
                out.llm_responses += 1
                if not dry_run:
                    s.execute(delete(LLMResponse).where(LLMResponse.key == key))
    return out


def _erase_flags(project: Project, dataset: str, ids: set[str], dry_run: bool) -> int:
    """Drop the review flags naming a removed row from `leakage.jsonl` (their shingles are text)."""
    with dataset_lock(project, dataset):
        flags = read_flags(project, dataset)
        kept = [f for f in flags if f.left_id not in ids and f.right_id not in ids]
        if len(kept) != len(flags) and not dry_run:
            write_flags(project, dataset, kept)
    return len(flags) - len(kept)


def _calibration_without(report: dict[str, Any], ids: set[str]) -> dict[str, Any]:
    """A stored calibration report without the removed cases' disagreements (statistics stay)."""
    disagreements = [d for d in report.get("disagreements", []) if d.get("case_id") not in ids]
    failed = [c for c in report.get("failed", []) if c not in ids]
    if disagreements == report.get("disagreements", []) and failed == report.get("failed", []):
        return report
    return {**report, "disagreements": disagreements, "failed": failed}


def _kappas(project: Project, log: LogRedaction) -> dict[str, float | None]:
    """Labeller kappas for a regenerated report; none when the run's version is gone (purged)."""
    try:
        return slice_kappas(project, load_run(project, str(log.path)))
    except CaseworkError:
        return {}


def _reports(
    project: Project, logs: Sequence[LogRedaction], needles: Sequence[bytes], dry_run: bool
) -> tuple[list[Path], list[Path]]:
    """Regenerate the report of each redacted run; delete other reports holding removed rows."""
    regenerated: list[Path] = []
    for log in logs:
        html = log.path.with_suffix(".html")
        if html.is_file():
            if not dry_run:
                write_report(project, str(log.path), html, labeller_kappa=_kappas(project, log))
            regenerated.append(html)
    deleted: list[Path] = []
    folder = project.path(project.config.paths.runs)
    for html in sorted(folder.glob("*.html")) if folder.is_dir() else []:
        if html in regenerated:
            continue
        data = html.read_bytes()
        if any(n in data for n in needles):
            if not dry_run:
                html.unlink()
            deleted.append(html)
    return regenerated, deleted


def _leftovers(project: Project, needles: Sequence[bytes], handled: set[Path]) -> list[Path]:
    """Files under the project root that still hold any of ``needles``.

    Not the datasets (released anew) nor what casework rewrote (``handled``): an exported sheet,
    an ADK eval set, a run log it could not read, a log of a dataset not named by `--dataset`.
    """
    if not needles:
        return []
    out = []
    datasets = project.datasets_dir.resolve()
    for folder, dirs, files in os.walk(project.root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        here = Path(folder)
        for name in sorted(files):
            path = here / name
            resolved = path.resolve()
            if resolved in handled:
                continue
            if resolved.is_relative_to(datasets):
                continue  # released data: the new versions no longer hold the rows
            try:
                if path.stat().st_size > _MAX_SCANNED:
                    continue
                data = path.read_bytes()
            except OSError:
                continue
            if any(n in data for n in needles):
                out.append(path)
    return out


def _erase(project: Project, removals: list[Removal], dry_run: bool) -> Erasure:
    done = [r for r in removals if r.removed_ids]
    if not done:
        return Erasure(removals, dry_run=dry_run)
    total = WorkbenchErasure()
    logs: list[LogRedaction] = []
    wb = open_workbench(project) if _workbench_exists(project) else None
    try:
        for r in done:
            if wb is not None:
                part = _erase_rows(wb, r.dataset, set(r.removed_ids), r.needles, dry_run)
                for name, value in vars(part).items():
                    setattr(total, name, getattr(total, name) + value)
            logs += redact_run_logs(project, r.dataset, r.removed_ids, r.needles, dry_run=dry_run)
            total.leakage_flags += _erase_flags(project, r.dataset, set(r.removed_ids), dry_run)
    finally:
        if wb is not None:
            wb.close()
    needles = sorted({n.encode() for r in done for n in r.needles})
    reports, deleted = _reports(project, logs, needles, dry_run)
    handled = {p.resolve() for p in (*reports, *deleted, *(lg.path for lg in logs))}
    leftovers = _leftovers(project, needles, handled)
    return Erasure(removals, total, logs, reports, deleted, leftovers, dry_run=dry_run)


def forget_everywhere(
    project: Project,
    *,
    emails: Sequence[str] = (),
    accounts: Sequence[str] = (),
    sessions: Sequence[str] = (),
    datasets: Sequence[str] = (),
    now: datetime | None = None,
    dry_run: bool = False,
    environ: Mapping[str, str] | None = None,
    on_progress: StageProgress | None = None,
) -> Erasure:
    """:func:`casework.privacy.forget`, and every other copy of the removed rows goes too.

    The copies go first, then the rows leave the datasets: if anything fails half-way, running
    the command again still finds the rows, and so their copies.

    Raises:
        UsageError: No identifier given, or a named dataset does not exist.
        ConfigError: No usable pseudonym key, or one the dataset's rows were not mined with.
    """
    when = now or datetime.now(UTC)

    def run(dry: bool) -> list[Removal]:
        return forget(
            project,
            emails=emails,
            accounts=accounts,
            sessions=sessions,
            datasets=datasets,
            now=when,
            dry_run=dry,
            environ=environ,
            on_progress=on_progress,
        )

    return _copies_then_rows(project, run, dry_run)


def expire_everywhere(
    project: Project,
    *,
    datasets: Sequence[str] = (),
    now: datetime | None = None,
    today: date | None = None,
    dry_run: bool = False,
    on_progress: StageProgress | None = None,
) -> Erasure:
    """:func:`casework.privacy.expire`, and every other copy of the expired rows goes too.

    Raises:
        UsageError: A named dataset does not exist.
    """
    when = now or datetime.now(UTC)

    def run(dry: bool) -> list[Removal]:
        return expire(
            project, datasets=datasets, now=when, today=today, dry_run=dry, on_progress=on_progress
        )

    return _copies_then_rows(project, run, dry_run)


def _copies_then_rows(
    project: Project, remove: Callable[[bool], list[Removal]], dry_run: bool
) -> Erasure:
    planned = remove(True)
    erasure = _erase(project, planned, dry_run)
    if dry_run or not any(r.removed for r in planned):
        return erasure
    return replace(erasure, removals=remove(False))
