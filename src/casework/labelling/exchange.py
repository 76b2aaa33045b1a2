"""Sheets out and answers in: `label export`, `label import`, `review export|import` (adjudication sheets).

Export writes one JSONL and one CSV sheet per person with open assignments under the current
guideline. Import validates every line of every sheet and stores all of them in one transaction,
or none. Entry points: :func:`export_sheets`, :func:`import_sheets`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from casework.atomic import atomic_write_bytes
from casework.dataset import declared_tools
from casework.dataset.copies import record_copies
from casework.dataset.tools import ToolDecl
from casework.errors import InputErrors, Problem, UsageError
from casework.labelling.dataset_state import DatasetState, dataset_name, load_state
from casework.labelling.relabel import sent_back_rules
from casework.labelling.sheets import (
    SheetEntry,
    SheetKind,
    read_sheet,
    render_csv,
    render_jsonl,
    sheet_line,
    sheet_name,
)
from casework.labelling.signing import (
    SIGNATURE_FIELD,
    line_signature,
    sheet_key,
    signature_matches,
)
from casework.labelling.store import StoredAssignment, add_label, writing
from casework.names import inside
from casework.project import Project
from casework.schema import OUTCOMES, Outcome
from casework.workbench import open_workbench

__all__ = ["ExportReport", "ImportReport", "SheetFile", "export_sheets", "import_sheets"]

_OUTCOME_LIST = f"{', '.join(OUTCOMES[:-1])} or {OUTCOMES[-1]}"


@dataclass(frozen=True)
class SheetFile:
    """The sheets written for one person.

    Attributes:
        labeller: Whose sheets.
        rows: Cases on them.
        jsonl: The JSONL sheet.
        csv: The CSV sheet (same content).
    """

    labeller: str
    rows: int
    jsonl: Path
    csv: Path


@dataclass(frozen=True)
class ExportReport:
    """What an export wrote.

    Attributes:
        dataset: Dataset name.
        kind: ``label`` or ``adjudication``.
        files: One entry per person with open work.
        outdated: Open assignments under a superseded guideline, not exported
            (`casework label assign` re-queues them).
        idle: People asked for who hold no open work of this kind.
    """

    dataset: str
    kind: SheetKind
    files: tuple[SheetFile, ...]
    outdated: int
    idle: tuple[str, ...]


@dataclass(frozen=True)
class ImportReport:
    """What an import stored.

    Attributes:
        sheets: Sheets read.
        stored: Labels stored per labeller.
        unanswered: Lines left empty (not stored; export again later to finish them).
    """

    sheets: int
    stored: dict[str, int]
    unanswered: int

    @property
    def total(self) -> int:
        """Labels stored."""
        return sum(self.stored.values())


def _wanted_role(kind: SheetKind, role: str) -> bool:
    return (role == "adjudicator") == (kind == "adjudication")


def export_sheets(
    project: Project,
    dataset: str,
    out_dir: Path,
    *,
    kind: SheetKind = "label",
    labellers: Sequence[str] = (),
) -> ExportReport:
    """Write blind sheets (or adjudication sheets) for people with open assignments.

    Args:
        project: The project.
        dataset: Dataset name.
        out_dir: Folder the sheets go to (created if missing).
        kind: ``label`` for blind first/second labels, ``adjudication`` for adjudicators.
        labellers: Only these people (default: everyone with open work).

    Raises:
        UsageError: Unknown dataset.
        InputErrors: Bad dataset files or guidelines.
        ConfigError: No declared tools.
    """
    name = dataset_name(dataset, "export")
    tools = declared_tools(project)
    with open_workbench(project) as wb, wb.session() as session:
        state = load_state(project, name, session)
        key = sheet_key(session)
    assert key is not None  # created on first use
    versions = state.snapshot.versions
    open_work: dict[str, list[StoredAssignment]] = {}
    outdated = 0
    for stored in state.work.assignments:
        a = stored.assignment
        if a.done or not _wanted_role(kind, a.role):
            continue
        if labellers and a.labeller not in labellers:
            continue
        if a.guideline_version != versions.get(stored.slice):
            outdated += 1
            continue
        open_work.setdefault(a.labeller, []).append(stored)
    files = []
    for labeller in sorted(open_work):
        lines = _lines(project, state, kind, labeller, open_work[labeller], tools, key)
        if not lines:
            continue
        stem = sheet_name(name, labeller, kind)
        jsonl, csv_path = out_dir / f"{stem}.jsonl", out_dir / f"{stem}.csv"
        inside(out_dir, jsonl, f"sheet of labeller '{labeller}'")
        atomic_write_bytes(jsonl, render_jsonl(lines))
        atomic_write_bytes(csv_path, render_csv(lines, kind, list(tools)))
        # Sheets leave casework's reach: `forget` lists them by path when they held a row.
        ids = [str(line["case_id"]) for line in lines]
        record_copies(project, "labelling sheet", name, [jsonl, csv_path], ids)
        files.append(SheetFile(labeller, len(lines), jsonl, csv_path))
    idle = tuple(lab for lab in labellers if lab not in {f.labeller for f in files})
    return ExportReport(name, kind, tuple(files), outdated, idle)


def _lines(
    project: Project,
    state: DatasetState,
    kind: SheetKind,
    labeller: str,
    work: Sequence[StoredAssignment],
    tools: Mapping[str, ToolDecl],
    key: bytes,
) -> list[dict[str, object]]:
    by_id = {p.case.id: p for p in state.snapshot.cases}
    lines = []
    for stored in sorted(work, key=lambda s: s.assignment.case_id):
        progress = by_id.get(stored.assignment.case_id)
        if progress is None:  # the case left the dataset since it was assigned
            continue
        found = progress.round
        blind = [r for r in found.labels if r.role != "adjudicator"] if found else []
        lines.append(
            sheet_line(
                kind,
                state.dataset.name,
                labeller,
                progress.case,
                stored.assignment.guideline_version,
                tools,
                labels=blind if kind == "adjudication" else (),
                differs=found.differs if (found and kind == "adjudication") else (),
                sent_back_by=sent_back_rules(
                    project, progress.case, stored.assignment.guideline_version
                ),
                signature=line_signature(
                    key, kind, state.dataset.name, labeller, stored.assignment.case_id
                ),
            )
        )
    return lines


def _answer_problems(entry: SheetEntry, tools: Mapping[str, ToolDecl]) -> list[Problem]:
    """Problems of the answer itself: undeclared tools, a tool both ways, no outcome."""
    answer = entry.answer
    problems: list[Problem] = []
    declared = ", ".join(tools) or "none"
    for group, answers in (("required", answer.required), ("forbidden", answer.forbidden)):
        problems.extend(
            Problem(
                entry.path,
                entry.line,
                entry.field(group, tool),
                f"not a declared tool (declared: {declared})",
                tool,
                has_got=True,
            )
            for tool in answers
            if tool not in tools
        )
    problems.extend(
        Problem(
            entry.path,
            entry.line,
            entry.field("forbidden", tool),
            "a tool cannot be both required and forbidden",
            "yes",
            has_got=True,
        )
        for tool in sorted(t for t, yes in answer.required.items() if yes)
        if answer.forbidden.get(tool)
    )
    if answer.outcome is None:
        problems.append(
            Problem(
                entry.path,
                entry.line,
                "outcome",
                f"field required on an answered line ({_OUTCOME_LIST})",
            )
        )
    return problems


def _holder_problems(
    entry: SheetEntry,
    state: DatasetState,
    kind: SheetKind,
    seen: dict[tuple[str, str, str], str],
    held: Mapping[tuple[str, str, str], StoredAssignment],
    signing_key: bytes | None,
) -> tuple[list[Problem], StoredAssignment | None, bool]:
    """Problems of who answers what: sheet kind, case, duplicates, guideline, assignment.

    Returns the problems, the assignment the answer fulfils (if any) and whether to go on checking.
    """
    answer = entry.answer

    def problem(field: str, message: str, got: object) -> Problem:
        return Problem(entry.path, entry.line, field, message, got, has_got=True)

    if answer.sheet != kind:
        article, other = (
            ("a label", "labelling")
            if answer.sheet == "label"
            else ("an adjudication", "adjudication")
        )
        message = f"this is {article} sheet; import it as {other} answers"
        return [problem("sheet", message, answer.sheet)], None, False
    progress = state.snapshot.by_id.get(answer.case_id)
    if progress is None:
        message = f"no case with this id in dataset '{answer.dataset}'"
        return [problem("case_id", message, answer.case_id)], None, False
    key = (answer.dataset, answer.case_id, answer.labeller)
    if key in seen:
        message = (
            f"duplicate submission: {answer.labeller} already answered this case at {seen[key]}"
        )
        return [problem("case_id", message, answer.case_id)], None, False
    seen[key] = f"{entry.path}:{entry.line}"
    problems: list[Problem] = []
    current = progress.current_version
    if answer.guideline_version != current:
        message = (
            f"must be the current guideline of slice '{progress.case.slice}', {current} "
            "(export a fresh sheet after a guideline bump)"
        )
        problems.append(problem("guideline_version", message, answer.guideline_version))
    stored = held.get((answer.case_id, answer.labeller, current))
    if stored is None:
        message = f"not assigned case '{answer.case_id}' under {current}"
        problems.append(problem("labeller", message, answer.labeller))
    elif stored.assignment.done:
        message = f"duplicate submission: {answer.labeller}'s label for this case is already stored"
        problems.append(problem("case_id", message, answer.case_id))
    elif not _wanted_role(kind, stored.assignment.role):
        message = (
            f"{answer.labeller} holds this case as {stored.assignment.role}, not on a {kind} sheet"
        )
        problems.append(problem("sheet", message, answer.sheet))
    elif not signature_matches(
        signing_key, answer.signature, kind, answer.dataset, answer.labeller, answer.case_id
    ):
        problems.append(_signature_problem(entry, signing_key is not None))
    return problems, stored, True


def _signature_problem(entry: SheetEntry, has_key: bool) -> Problem:
    """The line's signature is missing, or was made for another labeller (or case)."""
    answer = entry.answer
    if answer.signature and not has_key:
        return Problem(
            entry.path,
            entry.line,
            SIGNATURE_FIELD,
            "this workbench never exported a sheet; import into the workbench the sheet was "
            "exported from (the same CASEWORK_DB_URL)",
        )
    if not answer.signature:
        return Problem(
            entry.path,
            entry.line,
            SIGNATURE_FIELD,
            "missing; casework signs every line of a sheet for the person it was exported for "
            "(export a fresh sheet and answer on it)",
        )
    return Problem(
        entry.path,
        entry.line,
        "labeller",
        f"this line was not exported for {answer.labeller} (its signature does not match); "
        "everyone returns the sheet exported for them",
        answer.labeller,
        has_got=True,
    )


def _check_entry(
    entry: SheetEntry,
    state: DatasetState,
    kind: SheetKind,
    tools: Mapping[str, ToolDecl],
    seen: dict[tuple[str, str, str], str],
    held: Mapping[tuple[str, str, str], StoredAssignment],
    key: bytes | None,
) -> tuple[list[Problem], tuple[StoredAssignment, Outcome] | None]:
    problems, stored, go_on = _holder_problems(entry, state, kind, seen, held, key)
    if go_on:
        problems += _answer_problems(entry, tools)
    outcome = entry.answer.outcome
    if problems or stored is None or outcome is None:
        return problems, None
    return problems, (stored, outcome)


def import_sheets(
    project: Project,
    paths: Sequence[Path],
    *,
    kind: SheetKind = "label",
    now: datetime | None = None,
) -> ImportReport:
    """Validate returned sheets and store every answered line, all in one transaction.

    Every bad line of every sheet is reported as ``path:line: field: problem. Got …``: unknown
    datasets and case ids, unknown tools, a guideline version other than the slice's current one,
    duplicate submissions (in these sheets or already stored), lines of people not assigned the
    case, and lines whose signature does not bind them to the ``labeller`` they name (a sheet
    edited to answer under someone else's name). When any line is bad nothing is stored.

    Raises:
        UsageError: No sheet given.
        InputErrors: Any bad line (all reported, capped).
    """
    if not paths:
        raise UsageError("import: name at least one sheet (.jsonl or .csv).")
    when = now or datetime.now(UTC)
    entries: list[SheetEntry] = []
    problems: list[Problem] = []
    for path in paths:
        found, bad = read_sheet(path, project.relative(path))
        entries.extend(found)
        problems.extend(bad)
    answered = [e for e in entries if e.answer.answered()]
    unanswered = len(entries) - len(answered)
    tools = declared_tools(project) if answered else {}
    stored: Counter[str] = Counter()
    with open_workbench(project) as wb, writing(wb, f"{kind} import") as session:
        key = sheet_key(session, create=False)
        states: dict[str, DatasetState | None] = {}
        held: dict[str, dict[tuple[str, str, str], StoredAssignment]] = {}
        seen: dict[tuple[str, str, str], str] = {}
        accepted: list[tuple[SheetEntry, DatasetState, StoredAssignment, Outcome]] = []
        for entry in answered:
            name = entry.answer.dataset
            if name not in states:
                states[name] = (
                    load_state(project, name, session) if name in project.dataset_names() else None
                )
            state = states[name]
            if state is None:
                known = ", ".join(project.dataset_names()) or "none"
                problems.append(
                    Problem(
                        entry.path,
                        entry.line,
                        "dataset",
                        f"no such dataset (datasets: {known})",
                        name,
                        has_got=True,
                    )
                )
                continue
            if name not in held:
                held[name] = {
                    (
                        s.assignment.case_id,
                        s.assignment.labeller,
                        s.assignment.guideline_version,
                    ): s
                    for s in state.work.assignments
                }
            bad, ok = _check_entry(entry, state, kind, tools, seen, held[name], key)
            problems.extend(bad)
            if ok is not None:
                accepted.append((entry, state, *ok))
        InputErrors.raise_if_any(problems)
        for entry, state, assignment, outcome in accepted:
            answer = entry.answer
            add_label(
                session,
                state.dataset.name,
                state.snapshot.by_id[answer.case_id].case.slice,
                assignment,
                outcome=outcome,
                required={t: bool(answer.required.get(t)) for t in tools},
                forbidden={t: bool(answer.forbidden.get(t)) for t in tools},
                answer_facts=answer.facts(),
                labelled_at=when,
                source=Path(entry.path).name,
            )
            stored[answer.labeller] += 1
    return ImportReport(len(paths), dict(sorted(stored.items())), unanswered)
