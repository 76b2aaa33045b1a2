"""`casework judge sample` and `judge tune add`: draw held-out judge verdicts onto blind sheets.

Each drawn verdict is also a ``judge-verdict`` review item per reviewer (`casework review`).
Never drawn: items listed in the project's tuning file ``judge/tuning.jsonl`` (records used to
tune the judge's prompt) and items already sampled earlier.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import select

from casework.atomic import atomic_write_bytes
from casework.dataset import load_dataset
from casework.dataset.copies import record_copies
from casework.decoding import BadJSON, parse_json
from casework.errors import InputError, InputErrors, Problem, UsageError
from casework.labelling import sheet_key
from casework.names import name_problem
from casework.project import Project
from casework.review._items import ReviewItem, assign_reviewers, draw, excluded_by, run_items
from casework.review._judge_verdict import verdict_items
from casework.review._queue import add_items
from casework.review._sheets import SheetFormat, render_sheet, sheet_line, verdict_signature
from casework.runner import load_run
from casework.workbench import open_workbench
from casework.workbench.models_judge import ReviewItemRow

#: The project file listing item keys used to tune the judge's prompt (one JSON string a line).
TUNING_FILE = "judge/tuning.jsonl"

_KINDS = ("outcome", "answer_fact")


def tuning_path(project: Project) -> Path:
    """``judge/tuning.jsonl`` of the project."""
    return project.root / TUNING_FILE


def check_key(key: str) -> str | None:
    """Why ``key`` is not an item key or a prefix of one (``None`` when it is)."""
    parts = key.split("/")
    if not 3 <= len(parts) <= 5 or not all(parts):
        return "must be RUN_ID/CASE_ID/TRIAL[/KIND[/FACT_INDEX]]"
    if not parts[2].isdigit():
        return "the trial must be a number"
    if len(parts) >= 4 and parts[3] not in _KINDS:
        return "the kind must be outcome or answer_fact"
    if len(parts) == 5 and (parts[3] != "answer_fact" or not parts[4].isdigit()):
        return "only answer_fact keys end in a fact index (a number)"
    return None


def read_tuning(project: Project) -> list[str]:
    """The keys of ``judge/tuning.jsonl`` (none when the file does not exist).

    Raises:
        InputErrors: A line is not a JSON string holding a key.
    """
    path = tuning_path(project)
    if not path.is_file():
        return []
    shown = project.relative(path)
    keys: list[str] = []
    problems: list[Problem] = []
    for number, raw in enumerate(path.read_bytes().split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            value = parse_json(raw)
        except BadJSON as exc:
            problems.append(Problem(shown, number, None, f"not JSON: {exc}"))
            continue
        why = check_key(value) if isinstance(value, str) else "must be a JSON string"
        if why:
            problems.append(Problem(shown, number, None, why, value, has_got=True))
        else:
            keys.append(value)
    if problems:
        raise InputErrors(problems)
    return keys


def add_tuning(project: Project, keys: Sequence[str]) -> list[str]:
    """Add ``keys`` to ``judge/tuning.jsonl`` (kept sorted, no duplicates); the keys now listed.

    Raises:
        UsageError: A key is malformed.
    """
    for key in keys:
        why = check_key(key)
        if why:
            raise UsageError(f"{why}. Got '{key}'.", param="keys")
    listed = sorted(set(read_tuning(project)) | set(keys))
    text = "".join(json.dumps(k, ensure_ascii=False) + "\n" for k in listed)
    path = tuning_path(project)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, text.encode("utf-8"))
    return listed


@dataclass(frozen=True)
class SampleReport:
    """What `casework judge sample` drew and wrote.

    Attributes:
        candidates: Judge-decided findings in the runs (after slice filters).
        excluded: Of them, left out as tuning records or sampled before.
        items: The drawn items, in draw order.
        reviewers: Reviewers per drawn item (two on overlapped items).
        sheets: One sheet per reviewer.
        strata: Drawn items per ``slice/kind/judge verdict``.
    """

    candidates: int
    excluded: int
    items: tuple[ReviewItem, ...]
    reviewers: tuple[tuple[str, ...], ...]
    sheets: dict[str, Path]
    strata: dict[str, int]

    def as_json(self) -> dict[str, object]:
        """JSON form (``--format json``); item keys are not shown (sheets stay blind)."""
        return {
            "candidates": self.candidates,
            "excluded": self.excluded,
            "sampled": len(self.items),
            "overlapped": sum(len(r) == 2 for r in self.reviewers),
            "strata": self.strata,
            "sheets": {name: str(p) for name, p in self.sheets.items()},
        }


def _check_request(n: int, overlap: float, reviewers: Sequence[str]) -> None:
    if n < 1:
        raise UsageError(f"must be at least 1. Got {n}.", param="n")
    if not 0 <= overlap <= 1:
        raise UsageError(f"must be between 0 and 1. Got {overlap}.", param="overlap")
    if not reviewers:
        raise UsageError("name at least one reviewer.", param="reviewers")
    for name in reviewers:
        problem = name_problem(name, 64)
        if problem is not None:
            raise UsageError(f"a reviewer name {problem}. Got '{name}'.", param="reviewers")
    if len(set(reviewers)) != len(reviewers):
        raise UsageError("a reviewer is named twice.", param="reviewers")
    if overlap > 0 and len(reviewers) < 2:
        raise UsageError(
            "an overlap needs at least two reviewers.", param="overlap", mentions=("reviewers",)
        )


def _candidates(
    project: Project, runs: Sequence[str], slices: Sequence[str]
) -> tuple[list[ReviewItem], dict[str, str]]:
    """The judge-decided items of ``runs``, and the dataset name of each run read."""
    private = project.config.models.judge.keeps_data_local
    found: dict[str, ReviewItem] = {}
    datasets: dict[str, str] = {}
    for ref in runs:
        run = load_run(project, ref)
        name, _, version = run.header.dataset_ref.partition("@")
        datasets[run.header.run_id] = name
        dataset = load_dataset(project, name if version == "working" else run.header.dataset_ref)
        for item in run_items(run, dataset.cases, private=private):
            if not slices or item.slice in slices:
                found[item.key] = item
    return sorted(found.values(), key=lambda i: i.key), datasets


def sample_verdicts(
    project: Project,
    runs: Sequence[str],
    *,
    n: int,
    reviewers: Sequence[str],
    out: Path,
    slices: Sequence[str] = (),
    seed: int = 0,
    overlap: float = 0.2,
    sheet_format: SheetFormat = "jsonl",
    now: datetime | None = None,
) -> SampleReport:
    """Draw judge verdicts from ``runs`` onto one blind sheet per reviewer, and record the draw.

    Raises:
        UsageError: Bad ``n``, ``overlap`` or ``reviewers``; an unknown run; nothing to draw.
        InputErrors: ``judge/tuning.jsonl`` has bad lines.
    """
    _check_request(n, overlap, reviewers)
    if not runs:
        raise UsageError("name at least one run.", param="runs")
    tuning = read_tuning(project)
    candidates, datasets = _candidates(project, runs, slices)
    with open_workbench(project) as wb, wb.session() as s:
        sampled = set(s.scalars(select(ReviewItemRow.key)).all())
        pool = [i for i in candidates if i.key not in sampled and not excluded_by(i.key, tuning)]
        if not candidates:
            where = f" of slice(s) {', '.join(slices)}" if slices else ""
            raise UsageError(
                f"the {len(runs)} run(s) hold no judge-decided verdict{where} to sample.",
                param="runs",
            )
        if not pool:
            raise UsageError(
                f"no judge verdict left to sample in {len(runs)} run(s): {len(candidates)} "
                "judge-decided finding(s), every one used for tuning or sampled before.",
                param="runs",
            )
        items = draw(pool, n, seed)
        who = assign_reviewers(len(items), reviewers, overlap, seed)
        at = now or datetime.now(UTC)
        for item, names in zip(items, who, strict=True):
            s.add(_row(item, names, at))
        key = sheet_key(s)
        assert key is not None  # created on first use
        sheets = _write_sheets(items, who, reviewers, out, sheet_format, key)
    _record_sheets(project, items, who, sheets, datasets)
    add_items(project, verdict_items(items, who, datasets), now=at)
    strata: dict[str, int] = {}
    for item in items:
        name = f"{item.slice}/{item.kind}/{'pass' if item.judge_pass else 'fail'}"
        strata[name] = strata.get(name, 0) + 1
    return SampleReport(
        len(candidates), len(candidates) - len(pool), tuple(items), tuple(who), sheets, strata
    )


def _row(item: ReviewItem, reviewers: Sequence[str], at: datetime) -> ReviewItemRow:
    return ReviewItemRow(
        key=item.key,
        sheet_id=item.sheet_id,
        run_id=item.run_id,
        case_id=item.case_id,
        trial=item.trial,
        kind=item.kind,
        fact_index=item.fact_index,
        slice=item.slice,
        judge_model=item.judge_model,
        prompt_version=item.prompt_version,
        rubric_digest=item.rubric_digest,
        judge_pass=item.judge_pass,
        accepted=list(item.accepted),
        reviewers=list(reviewers),
        sampled_at=at,
    )


def _record_sheets(
    project: Project,
    items: Sequence[ReviewItem],
    who: Sequence[Sequence[str]],
    sheets: Mapping[str, Path],
    datasets: Mapping[str, str],
) -> None:
    """Record each sheet as a copy out of reach, per dataset, so `forget` can list it by path."""
    for name, path in sheets.items():
        held: dict[str, set[str]] = {}
        for item, names in zip(items, who, strict=True):
            if name in names:
                held.setdefault(datasets[item.run_id], set()).add(item.case_id)
        for dataset, ids in sorted(held.items()):
            record_copies(project, "judge verdict sheet", dataset, [path], ids)


def _write_sheets(
    items: Sequence[ReviewItem],
    who: Sequence[Sequence[str]],
    reviewers: Sequence[str],
    out: Path,
    fmt: SheetFormat,
    key: bytes,
) -> dict[str, Path]:
    if out.exists() and not out.is_dir():
        raise InputError(str(out), None, None, "is a file; --out names a folder")
    out.mkdir(parents=True, exist_ok=True)
    sheets: dict[str, Path] = {}
    for name in reviewers:
        lines = [
            sheet_line(i, name, signature=verdict_signature(key, name, i.sheet_id))
            for i, w in zip(items, who, strict=True)
            if name in w
        ]
        path = out / f"verdicts-{name}.{fmt}"
        atomic_write_bytes(path, render_sheet(lines, fmt))
        sheets[name] = path
    return sheets
