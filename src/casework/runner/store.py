"""Runs in the workbench: saving headers, trials and end records; finding and loading runs.

Entry points: :class:`RunStore` (writes), :func:`load_run` (a run id, id prefix or log path),
:func:`list_runs`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

import msgspec
from sqlalchemy import Table, insert, select

from casework.errors import CaseworkError, UsageError
from casework.names import check_name, inside
from casework.project import Project
from casework.runner.records import LoadedRun, RunEnd, RunHeader, TrialRecord, read_log
from casework.workbench import Workbench, open_workbench
from casework.workbench.models_runs import RunRow, TrialRow

_TRIALS = cast(Table, TrialRow.__table__)

__all__ = [
    "RunStore",
    "TrialLine",
    "list_run_files",
    "list_runs",
    "load_run",
    "log_path",
    "read_trial_line",
    "trial_row",
    "trial_row_from_line",
]


def log_path(project: Project, run_id: str) -> Path:
    """Where a run's log lives: ``<runs folder>/<run-id>.jsonl``.

    Raises:
        UsageError: ``run_id`` is not a valid name (a path could leave the runs folder).
    """
    runs = project.path(project.config.paths.runs)
    check_name(run_id, "run id")
    return inside(runs, runs / f"{run_id}.jsonl", "run id")


class RunStore:
    """Writes one run to the workbench (header, batches of trials, the end record)."""

    def __init__(self, workbench: Workbench) -> None:
        self.workbench = workbench

    def save_header(self, header: RunHeader) -> None:
        """Insert the run (or leave an existing row of a resumed run as it is)."""
        with self.workbench.session() as s:
            if s.get(RunRow, header.run_id) is None:
                s.add(
                    RunRow(
                        id=header.run_id,
                        dataset=header.dataset,
                        dataset_hash=header.dataset_hash,
                        agent_spec=header.agent_spec,
                        agent_version=header.agent_version,
                        k=header.k,
                        started_at=header.started_at,
                        header=header.model_dump(mode="json"),
                    )
                )

    def update_header(self, header: RunHeader) -> None:
        """Refresh the stored header (the agent version is learnt from the first trajectory)."""
        with self.workbench.session() as s:
            row = s.get(RunRow, header.run_id)
            if row is not None:
                row.agent_version = header.agent_version
                row.header = header.model_dump(mode="json")

    def save_trials(self, records: Sequence[TrialRecord]) -> None:
        """Insert trials, skipping any already stored (resume after a crash between log and DB)."""
        if not records:
            return
        run_ids = {r.run_id for r in records}
        with self.workbench.session() as s:
            have = {
                (row.run_id, row.case_id, row.trial)
                for row in s.execute(
                    select(TrialRow.run_id, TrialRow.case_id, TrialRow.trial).where(
                        TrialRow.run_id.in_(run_ids)
                    )
                )
            }
        self.insert_rows(
            [
                trial_row(r, r.model_dump_json())
                for r in records
                if (r.run_id, r.case_id, r.trial) not in have
            ]
        )

    def insert_rows(self, rows: Sequence[dict[str, object]]) -> None:
        """Bulk-insert trial rows made by :func:`trial_row` (one statement, one transaction)."""
        if rows:
            with self.workbench.session() as s:
                # The table, not the ORM class: the same rows and statement without the ORM's
                # per-row bulk bookkeeping (a third of the insert's CPU on a run's writer thread).
                s.execute(insert(_TRIALS), list(rows))

    def finish(self, end: RunEnd) -> None:
        """Record the end of the run."""
        with self.workbench.session() as s:
            row = s.get(RunRow, end.run_id)
            if row is not None:
                row.finished_at = end.finished_at
                row.summary = end.model_dump(mode="json")


def trial_row(record: TrialRecord, line: str) -> dict[str, object]:
    """The workbench row of a trial, given its run-log line (serialised once, for both)."""
    return {
        "run_id": record.run_id,
        "case_id": record.case_id,
        "trial": record.trial,
        "slice": record.slice,
        "split": record.split,
        "source": record.source,
        "passed": record.verdict.passed,
        "admissible": record.verdict.admissible,
        "duration_s": record.duration_s,
        "cost_usd": record.trajectory.usage.cost_usd,
        "record": line,
    }


class _VerdictFields(msgspec.Struct):
    passed: Any
    admissible: Any


class _UsageFields(msgspec.Struct):
    cost_usd: Any


class _TrajectoryFields(msgspec.Struct):
    error: Any
    usage: _UsageFields
    agent_version: Any


class TrialLine(msgspec.Struct):
    """What is read of a trial's run-log line without validating it (:func:`read_trial_line`).

    The workbench row's fields and what an end record counts; nothing is checked but that they
    are there, as for lines a runner wrote from a validated :class:`TrialRecord` (a shard's
    file). Every other field is skipped without being built.
    """

    run_id: Any
    case_id: Any
    trial: Any
    slice: Any
    split: Any
    source: Any
    duration_s: Any
    verdict: _VerdictFields
    trajectory: _TrajectoryFields


#: msgspec over orjson here: it skips the fields a struct does not name without building them
#: (2.5 µs for a trial line of the runner bench, against 7.1 µs for orjson to build all of it).
_TRIAL_LINE = msgspec.json.Decoder(TrialLine)


def read_trial_line(raw: bytes) -> TrialLine:
    """The fields of one trial line (without its newline) that :class:`TrialLine` names.

    Raises:
        ValueError: Not JSON, or a field the row needs is missing or not an object.
    """
    try:
        return _TRIAL_LINE.decode(raw)
    except msgspec.DecodeError as exc:  # its ValidationError too
        raise ValueError(str(exc)) from exc


def trial_row_from_line(fields: TrialLine, line: str) -> dict[str, object]:
    """The workbench row of a trial from its run-log line and that line's fields (not validated).

    The same row as :func:`trial_row`, without validating the whole record again.
    """
    verdict = fields.verdict
    return {
        "run_id": fields.run_id,
        "case_id": fields.case_id,
        "trial": fields.trial,
        "slice": fields.slice,
        "split": fields.split,
        "source": fields.source,
        "passed": verdict.passed,
        "admissible": verdict.admissible,
        "duration_s": fields.duration_s,
        "cost_usd": fields.trajectory.usage.cost_usd,
        "record": line,
    }


def _from_workbench(wb: Workbench, run_id: str) -> LoadedRun:
    with wb.session() as s:
        row = s.get(RunRow, run_id)
        assert row is not None
        header = RunHeader.model_validate(row.header)
        end = RunEnd.model_validate(row.summary) if row.summary else None
        records = s.scalars(select(TrialRow.record).where(TrialRow.run_id == run_id)).all()
    trials = sorted(
        (TrialRecord.model_validate_json(r) for r in records), key=lambda t: (t.trial, t.case_id)
    )
    return LoadedRun(header, trials, end, source=f"workbench run {run_id}")


def _resolve_id(wb: Workbench, ref: str) -> str | None:
    with wb.session() as s:
        exact = s.get(RunRow, ref)
        if exact is not None:
            return exact.id
        found = list(s.scalars(select(RunRow.id).where(RunRow.id.startswith(ref, autoescape=True))))
    if len(found) > 1:
        raise UsageError(
            f"run '{ref}': prefix is ambiguous ({len(found)} runs match); give more of the id."
        )
    return found[0] if found else None


def load_run(project: Project, ref: str) -> LoadedRun:
    """Load a run by id, unique id prefix, path of a run log (`runs/<id>.jsonl`), or `latest`.

    `latest` is the run that started last, in the workbench or as a log file in the runs folder.

    The workbench is asked first; a log file is read when the run is not in the workbench
    (a log copied from CI, say).

    Raises:
        UsageError: No run matches, or a prefix matches several.
    """
    as_path = Path(ref)
    if ref.endswith(".jsonl") and as_path.is_file():
        return read_log(as_path, project.relative(as_path))
    if ref == LATEST:
        return _latest(project)
    with open_workbench(project) as wb:
        run_id = _resolve_id(wb, ref)
        if run_id is not None:
            return _from_workbench(wb, run_id)
    path = log_path(project, ref)
    if path.is_file():
        return read_log(path, project.relative(path))
    raise UsageError(
        f"run '{ref}': no such run in the workbench or {project.relative(path)}; list the runs to see which exist."
    )


#: The run reference that names the run started last.
LATEST = "latest"


def _latest(project: Project) -> LoadedRun:
    in_workbench = list_runs(project)
    files = list_run_files(project)
    newest_row = in_workbench[0] if in_workbench else None
    newest_file = files[0] if files else None
    if newest_row is None and newest_file is None:
        raise UsageError("run 'latest': this project has no run yet.")
    if newest_file is not None and (
        newest_row is None or newest_file.header.started_at > _aware(newest_row.started_at)
    ):
        return newest_file
    assert newest_row is not None
    return load_run(project, newest_row.id)


def _aware(at: datetime) -> datetime:
    """Workbench timestamps come back naive from SQLite; they were written in UTC."""
    return at if at.tzinfo is not None else at.replace(tzinfo=UTC)


def list_runs(project: Project) -> list[RunRow]:
    """Every run in the workbench, newest first."""
    with open_workbench(project) as wb, wb.session() as s:
        return list(s.scalars(select(RunRow).order_by(RunRow.started_at.desc())))


def list_run_files(project: Project) -> list[LoadedRun]:
    """Runs that exist only as log files in the runs folder (imported or copied), newest first.

    A log whose id the workbench knows is left out (:func:`list_runs` lists it); a log that does
    not read is left out too (`results show` on it reports why).
    """
    runs = project.path(project.config.paths.runs)
    if not runs.is_dir():
        return []
    known = {r.id for r in list_runs(project)}
    found: list[LoadedRun] = []
    for path in sorted(runs.glob("*.jsonl")):
        if path.stem in known:
            continue
        try:
            found.append(read_log(path, project.relative(path)))
        except CaseworkError:
            continue
    return sorted(found, key=lambda r: r.header.started_at, reverse=True)
