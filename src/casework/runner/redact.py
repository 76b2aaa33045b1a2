"""Removing cases from recorded runs, after `forget` or `expire` removed them from a dataset.

A run log (`runs/<run-id>.jsonl`) and the workbench's copy of a run hold every trial's
trajectory, whose `final_state` and tool calls carry the customer's pseudonyms. Entry points:
:func:`redact_run_logs` rewrites each log of the dataset without those trials (atomically) and
:func:`redact_run_rows` does the same to the workbench rows; both recompute the end counts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from sqlalchemy import delete, select

from casework.atomic import PROJECT_TMP, atomic_write_bytes, clean_temps
from casework.project import Project
from casework.runner.records import RunEnd, RunHeader, TrialRecord
from casework.workbench import Workbench
from casework.workbench.models_runs import RunRow, TrialRow

__all__ = ["LogRedaction", "redact_run_logs", "redact_run_rows"]


@dataclass(frozen=True)
class LogRedaction:
    """One run log rewritten without removed cases.

    Attributes:
        path: The log.
        run_id: Its run.
        trials: Trial records removed from it.
    """

    path: Path
    run_id: str
    trials: int


def _counts(trials: Iterable[TrialRecord]) -> dict[str, Any]:
    """The end record's counts over ``trials`` (the same sums the runner writes)."""
    kept = list(trials)
    return {
        "trials": len(kept),
        "passed": sum(t.verdict.passed is True for t in kept),
        "failed": sum(t.verdict.passed is False for t in kept),
        "undetermined": sum(t.verdict.passed is None for t in kept),
        "errors": sum(t.trajectory.error is not None for t in kept),
        "cost_usd": round(sum(t.trajectory.usage.cost_usd for t in kept), 6),
    }


def _header_without(header: RunHeader, removed: set[str]) -> RunHeader:
    return header.model_copy(
        update={
            "case_ids": [c for c in header.case_ids if c not in removed],
            "skipped": {c: why for c, why in header.skipped.items() if c not in removed},
        }
    )


def _redact_log(
    data: bytes, dataset: str, removed: set[str], needles: Sequence[bytes]
) -> tuple[bytes, str, int] | None:
    """The log without the removed cases, its run id and the trials dropped.

    ``None`` when the log is of another dataset or cannot be read (a record that is not what its
    kind says): it is left as it is, and the caller reports it as not reached.
    """
    try:
        return _redact_records(data, dataset, removed, needles)
    except ValidationError:
        return None


def _redact_records(
    data: bytes, dataset: str, removed: set[str], needles: Sequence[bytes]
) -> tuple[bytes, str, int] | None:
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    out: list[bytes | None] = []  # None: the end record, rewritten once every trial is known
    trials: dict[tuple[str, int], TrialRecord] = {}
    end: RunEnd | None = None
    header: RunHeader | None = None
    dropped = 0
    for raw in lines:
        try:
            obj = json.loads(raw)
            kind = obj.get("kind") if isinstance(obj, dict) else None
        except (json.JSONDecodeError, UnicodeDecodeError):
            if not any(n in raw for n in needles):
                out.append(raw)  # a torn line (a crash) that holds none of them
            continue
        if kind == "run":
            header = RunHeader.model_validate(obj)
            if header.dataset != dataset:
                return None
            out.append(_header_without(header, removed).model_dump_json().encode())
        elif kind == "trial" and str(obj.get("case_id")) in removed:
            dropped += 1
        elif kind == "trial":
            rec = TrialRecord.model_validate(obj)
            trials[(rec.case_id, rec.trial)] = rec
            out.append(raw)
        elif kind == "end":
            end = RunEnd.model_validate(obj)
            out.append(None)
        else:
            out.append(raw)
    if header is None:
        return None
    fresh = b""
    if end is not None:
        fresh = end.model_copy(update=_counts(trials.values())).model_dump_json().encode()
    text = b"".join((fresh if line is None else line) + b"\n" for line in out)
    return text, header.run_id, dropped


def redact_run_logs(
    project: Project,
    dataset: str,
    case_ids: Iterable[str],
    needles: Iterable[str] = (),
    *,
    dry_run: bool = False,
) -> list[LogRedaction]:
    """Rewrite every run log of ``dataset`` that holds one of ``case_ids``, without them.

    Trial records of those cases go; the header's `case_ids` and `skipped` lose them; the end
    record's counts are recomputed. Each log is replaced atomically. A torn line that holds one
    of ``needles`` (or a case id) is dropped too. The temp files a killed writer left in
    `.casework/tmp` go first, however fresh (a sharded run merges its log there as its trials
    end); a live writer's are its own to finish.

    Args:
        project: The project (its `paths.runs` folder).
        dataset: Dataset name: logs of other datasets are left alone.
        case_ids: The removed cases.
        needles: Further strings marking those cases' data (pseudonyms).
        dry_run: Count only; write nothing.
    """
    removed = set(case_ids)
    if not dry_run:
        clean_temps(project.root / PROJECT_TMP, written=True)
    folder = project.path(project.config.paths.runs)
    if not removed or not folder.is_dir():
        return []
    marks = sorted({*removed, *needles})
    encoded = [m.encode() for m in marks]
    ids = [f'"{c}"'.encode() for c in sorted(removed)]
    out = []
    for path in sorted(folder.glob("*.jsonl")):
        data = path.read_bytes()
        if not any(i in data for i in ids):
            continue
        redacted = _redact_log(data, dataset, removed, encoded)
        if redacted is None:
            continue
        text, run_id, dropped = redacted
        if text == data:
            continue
        if not dry_run:
            atomic_write_bytes(path, text)
        out.append(LogRedaction(path, run_id, dropped))
    # A sharded run that was killed keeps its workers' parts until it is resumed: trial lines
    # only (`run --workers`), so every line naming a removed case (or holding a mark) goes.
    for path in sorted(folder.glob("*.shards/part-*.jsonl")):
        lines = path.read_bytes().splitlines(keepends=True)
        kept = [line for line in lines if not any(m in line for m in (*ids, *encoded))]
        if len(kept) == len(lines):
            continue
        if not dry_run:
            atomic_write_bytes(path, b"".join(kept))
        out.append(
            LogRedaction(path, path.parent.name.removesuffix(".shards"), len(lines) - len(kept))
        )
    return out


def redact_run_rows(
    workbench: Workbench, dataset: str, case_ids: Iterable[str], *, dry_run: bool = False
) -> tuple[int, list[str]]:
    """Delete the workbench trials of ``case_ids`` in runs of ``dataset``; fix those runs' rows.

    Returns:
        Trials deleted, and the ids of the runs changed.
    """
    removed = set(case_ids)
    if not removed:
        return 0, []
    changed: list[str] = []
    deleted = 0
    with workbench.session() as s:
        runs = s.scalars(select(RunRow).where(RunRow.dataset == dataset)).all()
        for run in runs:
            header = RunHeader.model_validate(run.header)
            hit = s.scalars(
                select(TrialRow.id).where(
                    TrialRow.run_id == run.id, TrialRow.case_id.in_(sorted(removed))
                )
            ).all()
            if not hit and not removed.intersection(header.case_ids, header.skipped):
                continue
            changed.append(run.id)
            deleted += len(hit)
            if dry_run:
                continue
            s.execute(delete(TrialRow).where(TrialRow.id.in_(hit)))
            run.header = _header_without(header, removed).model_dump(mode="json")
            if run.summary:
                kept = s.scalars(select(TrialRow.record).where(TrialRow.run_id == run.id)).all()
                counts = _counts(TrialRecord.model_validate_json(r) for r in kept)
                run.summary = (
                    RunEnd.model_validate(run.summary)
                    .model_copy(update=counts)
                    .model_dump(mode="json")
                )
    return deleted, changed
