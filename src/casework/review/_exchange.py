"""Review decisions on sheets: write the sheets of a kind, read returned sheets of any kind back.

:func:`export_review_sheets` writes ``disagreement`` sheets (the adjudication sheets of
:func:`casework.labelling.export_sheets`) or ``judge-verdict`` sheets (re-issued, signed, for the
sampled verdicts still open per reviewer). :func:`import_review_sheets` reads each returned
sheet's kind from its lines (:func:`sheet_kind`) and stores it the way its own import does:
adjudication sheets through :func:`casework.labelling.import_sheets`, verdict sheets through
:func:`casework.review.import_verdicts`. Label sheets are labelling, not review, and are refused.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from casework.errors import InputErrors, Problem, UsageError
from casework.labelling import ImportReport, export_sheets, import_sheets
from casework.project import Project
from casework.review._disagreement import DISAGREEMENT
from casework.review._judge_verdict import export_verdict_sheets
from casework.review._names import JUDGE_VERDICT
from casework.review._queue import SyncReport, list_tasks, sync_disagreements
from casework.review._sheets import SheetFormat
from casework.review._verdicts import VerdictImport, import_verdicts

SheetKind = Literal["label", "adjudication", "verdict"]
_KINDS: tuple[SheetKind, ...] = ("label", "adjudication", "verdict")
#: The review kinds that go out on sheets.
SHEET_KINDS = (DISAGREEMENT, JUDGE_VERDICT)


def _first_record(path: Path) -> dict[str, Any] | None:
    text = path.read_bytes().decode("utf-8", errors="replace").removeprefix("\ufeff")
    if path.suffix.casefold() == ".jsonl":
        for line in text.splitlines():
            if line.strip():
                try:
                    value = json.loads(line)
                except json.JSONDecodeError:
                    return None
                return value if isinstance(value, dict) else None
        return None
    rows = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(rows)
        first = next((r for r in rows if any(c.strip() for c in r)), None)
    except (StopIteration, csv.Error):
        return None
    return dict(zip(header, first, strict=False)) if first is not None else None


def sheet_kind(path: Path, shown: str) -> tuple[SheetKind | None, str | None, Problem | None]:
    """The kind of a returned sheet read from its first line, its dataset, or why not.

    Returns:
        ``(kind, dataset, problem)``: the ``sheet`` field of the first line (``label``,
        ``adjudication`` or ``verdict``), the ``dataset`` it names (verdict sheets name none),
        and a located problem when the kind cannot be told.
    """
    if not path.is_file():
        return None, None, Problem(shown, None, None, "file not found")
    if path.suffix.casefold() not in (".jsonl", ".csv"):
        return (
            None,
            None,
            Problem(shown, None, None, "a sheet is a .jsonl or .csv file", path.suffix, True),
        )
    record = _first_record(path)
    if record is None:
        return None, None, Problem(shown, 1, None, "no sheet line to tell its kind from")
    kind = record.get("sheet")
    if kind not in _KINDS:
        message = "must be adjudication or verdict (the sheet's kind)"
        return None, None, Problem(shown, 1, "sheet", message, kind, True)
    dataset = record.get("dataset")
    return kind, dataset if isinstance(dataset, str) else None, None


@dataclass(frozen=True)
class ReviewImport:
    """What :func:`import_review_sheets` stored, per kind of sheet.

    Attributes:
        adjudications: The adjudication sheets' import (``None``: there were none).
        verdicts: The verdict sheets' import (``None``: there were none).
        synced: Disagreement items synced after adjudications landed, per dataset.
    """

    adjudications: ImportReport | None
    verdicts: VerdictImport | None
    synced: tuple[SyncReport, ...] = ()

    def as_json(self) -> dict[str, Any]:
        """JSON-ready data."""
        adj = self.adjudications
        return {
            "disagreement": None
            if adj is None
            else {"sheets": adj.sheets, "stored": adj.stored, "unanswered": adj.unanswered},
            "judge_verdict": None if self.verdicts is None else self.verdicts.as_json(),
            "synced": [s.as_json() for s in self.synced],
        }


def import_review_sheets(
    project: Project, paths: Sequence[Path], *, now: datetime | None = None
) -> ReviewImport:
    """Store returned adjudication and verdict sheets, each kind the way its own import does.

    Each kind's sheets are validated and stored all or nothing (adjudication sheets first); a
    problem in any sheet's kind stops everything before anything is stored.

    Raises:
        InputErrors: A sheet whose kind cannot be told, a label sheet, or any problem the kind's
            import finds (nothing of that kind is stored).
    """
    if not paths:
        raise UsageError("name at least one sheet.", param="sheets")
    by_kind: dict[SheetKind, list[Path]] = {}
    datasets: set[str] = set()
    problems: list[Problem] = []
    for path in paths:
        shown = project.relative(path)
        kind, dataset, problem = sheet_kind(path, shown)
        if problem is not None:
            problems.append(problem)
        elif kind == "label":
            problems.append(
                Problem(
                    shown,
                    1,
                    "sheet",
                    "a label sheet is labelling, not a review decision (`label import` stores it)",
                    kind,
                    True,
                )
            )
        elif kind is not None:
            by_kind.setdefault(kind, []).append(path)
            if kind == "adjudication" and dataset:
                datasets.add(dataset)
    if problems:
        raise InputErrors(problems)
    adjudications = verdicts = None
    synced: list[SyncReport] = []
    if "adjudication" in by_kind:
        adjudications = import_sheets(
            project, by_kind["adjudication"], kind="adjudication", now=now
        )
        synced = [sync_disagreements(project, d, now=now) for d in sorted(datasets)]
    if "verdict" in by_kind:
        verdicts = import_verdicts(project, by_kind["verdict"], now=now)
    return ReviewImport(adjudications, verdicts, tuple(synced))


def export_review_sheets(
    project: Project,
    kind: str,
    out: Path,
    *,
    dataset: str | None = None,
    people: Sequence[str] = (),
    sheet_format: SheetFormat = "jsonl",
) -> dict[str, list[Path]]:
    """Write the sheets of one review kind into ``out``; the files written, by person.

    Args:
        project: The project.
        kind: ``disagreement`` (adjudication sheets, JSONL and CSV, for adjudicators with open
            assignments; ``dataset`` required) or ``judge-verdict`` (each reviewer's open sampled
            verdicts, re-issued and signed; ``judge sample`` draws new ones).
        out: The folder.
        dataset: The dataset (``judge-verdict``: only its runs' verdicts).
        people: Only these adjudicators or reviewers (default: everyone with open items).
        sheet_format: ``judge-verdict`` sheets: ``jsonl`` or ``csv``.

    Raises:
        UsageError: Another kind, or ``disagreement`` without a dataset.
    """
    if kind == DISAGREEMENT:
        if dataset is None:
            raise UsageError("disagreement sheets are per dataset: name one.", param="dataset")
        report = export_sheets(project, dataset, out, kind="adjudication", labellers=people)
        return {f.labeller: [f.jsonl, f.csv] for f in report.files}
    if kind == JUDGE_VERDICT:
        tasks = [
            t
            for t in list_tasks(project, kind=JUDGE_VERDICT, status="open", dataset=dataset)
            if not people or t.payload["reviewer"] in people
        ]
        sheets = export_verdict_sheets(project, tasks, out, sheet_format=sheet_format)
        return {name: [path] for name, path in sheets.items()}
    raise UsageError(f"sheets carry {' and '.join(SHEET_KINDS)} items. Got '{kind}'.", param="kind")
