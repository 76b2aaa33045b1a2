"""Blind labelling sheets: the JSONL and CSV files labellers and adjudicators fill in.

A sheet line carries only the situation (goal, conversation, fixtures, state, injected adversity),
the declared tools and the guideline version, never agent output, other people's labels (except
on adjudication sheets, anonymised), run results, the existing label, ``satisfiable`` or
provenance. Entry points: :func:`sheet_line`, :func:`render_jsonl`, :func:`render_csv`,
:func:`read_sheet`.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError

from casework.dataset.jsonl import json_objects, problems_from_validation
from casework.dataset.tools import ToolDecl
from casework.errors import Problem
from casework.schema import Case, LabelRecord, Outcome, Situation

if TYPE_CHECKING:
    from casework.labelling.relabel_rule import RelabelRule

__all__ = [
    "CSV_FIXED",
    "SheetAnswer",
    "SheetEntry",
    "SheetKind",
    "csv_rows",
    "escape_cell",
    "read_sheet",
    "render_csv",
    "render_jsonl",
    "sheet_line",
    "sheet_name",
    "unescape_cell",
]

SheetKind = Literal["label", "adjudication"]

_YES = {"yes", "y", "true", "1", "x"}
_NO = {"no", "n", "false", "0"}


def _yes_no(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip().casefold()
        if not text:
            return None
        if text in _YES:
            return True
        if text in _NO:
            return False
    raise ValueError("answer yes or no (or leave empty for no)")


YesNo = Annotated[bool | None, BeforeValidator(_yes_no)]


def _blank_outcome(value: Any) -> Any:
    return None if isinstance(value, str) and not value.strip() else value


class SheetAnswer(BaseModel):
    """One line of a returned sheet, as import reads it (display fields are not checked)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    schema_version: Literal[1] = 1
    """Version of the sheet format."""
    sheet: SheetKind
    """`label` (blind first or second label) or `adjudication`."""
    dataset: str
    """Dataset the case belongs to."""
    labeller: str
    """Who answers (the sheet's owner)."""
    case_id: str
    """The case."""
    slice: str | None = None
    """The case's slice (shown; not checked)."""
    guideline_version: str
    """Guideline the answer follows; must be the slice's current one."""
    situation: Any = None
    """The situation (shown; ignored on import)."""
    conversation: Any = None
    """CSV: the conversation as text (shown; ignored on import)."""
    goal: Any = None
    """CSV: the user's goal (shown; ignored on import)."""
    fixtures: Any = None
    """CSV: tool fixtures as JSON (shown; ignored on import)."""
    state: Any = None
    """CSV: data state as JSON (shown; ignored on import)."""
    injected: Any = None
    """CSV: injected adversity as JSON (shown; ignored on import)."""
    tools: Any = None
    """Declared tools (shown; ignored on import)."""
    labels: Any = None
    """Adjudication sheets: the anonymised labels that disagree (shown; ignored on import)."""
    differs: Any = None
    """Adjudication sheets: fields the labels differ on (shown; ignored on import)."""
    sent_back_by: Any = None
    """Rows a guideline rule sent back: the rule's version and selector (shown; ignored on import)."""
    outcome: Annotated[Outcome | None, BeforeValidator(_blank_outcome)] = None
    """The answer: `resolve`, `clarify`, `refuse` or `escalate`; empty while unanswered."""
    required: dict[str, YesNo] = Field(default_factory=dict)
    """Per declared tool: must the agent call it? yes / no (empty: no)."""
    forbidden: dict[str, YesNo] = Field(default_factory=dict)
    """Per declared tool: must the agent not call it? yes / no (empty: no)."""
    answer_facts: list[str] = Field(default_factory=list)
    """Short statements a correct final reply must contain."""
    signature: str | None = None
    """Set by export: binds the line to its labeller (checked on import; do not edit)."""

    def answered(self) -> bool:
        """Whether the line holds an answer (an outcome, a tool marked yes, or a fact)."""
        return (
            self.outcome is not None
            or any(self.required.values())
            or any(self.forbidden.values())
            or any(f.strip() for f in self.answer_facts)
        )

    def facts(self) -> list[str]:
        """Answer facts without blanks, stripped."""
        return [f.strip() for f in self.answer_facts if f.strip()]


@dataclass(frozen=True)
class SheetEntry:
    """A returned sheet line and where it came from.

    Attributes:
        path: The sheet as shown in messages.
        line: 1-based line (CSV: the line the record starts on).
        answer: The parsed line.
        column_names: CSV: field names are columns (``required:get_order``) in messages.
    """

    path: str
    line: int
    answer: SheetAnswer
    column_names: bool = False

    def field(self, name: str, tool: str | None = None) -> str:
        """How to name a field (or a tool's yes/no cell) in a message about this line."""
        if tool is None:
            return name
        return f"{name}:{tool}" if self.column_names else f"{name}.{tool}"


def sheet_name(dataset: str, labeller: str, kind: SheetKind) -> str:
    """File stem of a sheet: ``<dataset>.<labeller>.<labels|adjudication>``."""
    return f"{dataset}.{labeller}.{'labels' if kind == 'label' else 'adjudication'}"


def _shown_label(name: str, record: LabelRecord) -> dict[str, Any]:
    return {
        "name": name,
        "outcome": record.outcome,
        "required_tools": sorted(t.name for t in record.required_tools),
        "forbidden_tools": sorted(t.name for t in record.forbidden_tools),
        "answer_facts": list(record.answer_facts),
    }


def sheet_line(
    kind: SheetKind,
    dataset: str,
    labeller: str,
    case: Case,
    guideline_version: str,
    tools: Mapping[str, ToolDecl],
    *,
    labels: Sequence[LabelRecord] = (),
    differs: Sequence[str] = (),
    sent_back_by: Sequence[RelabelRule] = (),
    signature: str = "",
) -> dict[str, Any]:
    """One sheet line: the blind view of a case, with empty answer fields.

    Only ``case.situation`` and ``case.slice`` are read from the case. Adjudication lines add the
    disagreeing ``labels``, anonymised as A, B, … (no labeller ids, no timestamps). A row a
    guideline rule sent back says so in ``sent_back_by`` (the version, and the selector unless it
    reads the old label). ``signature`` (see :func:`casework.labelling.signing.line_signature`)
    comes last.
    """
    situation = Situation.model_validate(case.situation.model_dump())
    line: dict[str, Any] = {
        "schema_version": 1,
        "sheet": kind,
        "dataset": dataset,
        "labeller": labeller,
        "case_id": case.id,
        "slice": case.slice,
        "guideline_version": guideline_version,
        "situation": situation.model_dump(mode="json", by_alias=True, exclude_defaults=True),
        "tools": [{"name": t.name, "description": t.description} for t in tools.values()],
    }
    if case.situation.tools is not None:  # the case's own offered set is what labellers see
        tools = {name: tools[name] for name in tools if name in set(case.situation.tools)}
        line["tools"] = [{"name": t.name, "description": t.description} for t in tools.values()]
    if kind == "adjudication":
        line["labels"] = [
            _shown_label(chr(ord("A") + i), record) for i, record in enumerate(labels)
        ]
        line["differs"] = list(differs)
    if sent_back_by:
        line["sent_back_by"] = [rule.shown_to_labellers() for rule in sent_back_by]
    line.update(
        {
            "outcome": None,
            "required": dict.fromkeys(tools),
            "forbidden": dict.fromkeys(tools),
            "answer_facts": [],
            "signature": signature,
        }
    )
    return line


def render_jsonl(lines: Sequence[Mapping[str, Any]]) -> bytes:
    """A JSONL sheet: one line per case."""
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode("utf-8")


CSV_FIXED = (
    "sheet",
    "dataset",
    "labeller",
    "case_id",
    "slice",
    "guideline_version",
    "goal",
    "conversation",
    "fixtures",
    "state",
    "injected",
    "sent_back_by",
)
"""Leading columns of a CSV sheet (adjudication sheets add `labels` and `differs`).

Sheets written before `sent_back_by` existed lack that column and still read."""


def _scenario_lines(situation: Mapping[str, Any]) -> list[str]:
    """The simulated user and the offered tools, as the CSV's conversation cell shows them."""
    out = []
    scenario = situation.get("user_scenario")
    if scenario:
        parts = [
            ("goal", "goal"),
            ("persona", "persona"),
            ("known_info", "knows"),
            ("unknown_info", "does not know"),
            ("instructions", "instructions"),
        ]
        said = "; ".join(f"{name}: {scenario[k]}" for k, name in parts if scenario.get(k))
        out.append(f"[simulated user, up to {scenario.get('max_turns', 10)} turns] {said}")
    if situation.get("tools") is not None:
        out.append(f"[tools offered] {', '.join(situation['tools']) or 'none'}")
    if situation.get("tools_file"):
        out.append(f"[tool catalogue] {situation['tools_file']}")
    return out


def _conversation(situation: Mapping[str, Any]) -> str:
    out = _scenario_lines(situation)
    for turn in situation.get("turns", []):
        out.append(f"{turn['role']}: {turn.get('content', '')}".rstrip())
        for call in turn.get("tool_calls", []):
            args = json.dumps(call.get("arguments", {}), ensure_ascii=False)
            text = f"  -> {call['name']}({args})"
            if call.get("error"):
                text += f" => error: {call['error']}"
            elif "result" in call:
                text += f" => {json.dumps(call['result'], ensure_ascii=False)}"
            out.append(text)
    return "\n".join(out)


def _rules_text(rules: Sequence[Mapping[str, Any]]) -> str:
    """The CSV cell of ``sent_back_by``: one rule a line, ``version: selector`` (or the version)."""
    return "\n".join(
        f"{r['guideline_version']}: {r['rule']}" if r.get("rule") else str(r["guideline_version"])
        for r in rules
    )


def _rules_from_text(cell: str) -> list[dict[str, str | None]]:
    """The rules :func:`_rules_text` wrote; a guideline version holds no ``": "``."""
    rules: list[dict[str, str | None]] = []
    for text in cell.replace("\r\n", "\n").split("\n"):
        if not text.strip():
            continue
        version, sep, rule = text.partition(": ")
        rules.append({"guideline_version": version.strip(), "rule": rule if sep else None})
    return rules


def _label_text(shown: Mapping[str, Any]) -> str:
    return (
        f"{shown['name']}: outcome {shown['outcome']}; "
        f"required: {', '.join(shown['required_tools']) or '-'}; "
        f"forbidden: {', '.join(shown['forbidden_tools']) or '-'}; "
        f"facts: {' | '.join(shown['answer_facts']) or '-'}"
    )


#: First characters a spreadsheet reads as the start of a formula (OWASP's CSV injection list).
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def escape_cell(text: str) -> str:
    """A CSV cell a spreadsheet shows as text: formula starts get a leading apostrophe.

    Text that already begins with an apostrophe gets one more, so :func:`unescape_cell` gives
    back exactly what was escaped.

    >>> escape_cell("=1+1"), escape_cell("'quoted"), escape_cell("plain")
    ("'=1+1", "''quoted", 'plain')
    """
    return "'" + text if text.startswith((*_FORMULA_START, "'")) else text


def unescape_cell(text: str) -> str:
    """The text :func:`escape_cell` escaped: one leading apostrophe removed, if there is one."""
    return text[1:] if text.startswith("'") else text


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True) if value else ""


def render_csv(lines: Sequence[Mapping[str, Any]], kind: SheetKind, tools: Sequence[str]) -> bytes:
    """A CSV sheet for spreadsheet users: the same content as the JSONL sheet, flattened.

    Answer columns: ``outcome``, ``required:<tool>`` and ``forbidden:<tool>`` (yes / no, empty
    means no) and ``answer_facts`` (one fact per line inside the cell); ``signature`` comes
    last, as on the JSONL sheet. ``sent_back_by`` holds the guideline rules that sent the row
    back for relabelling, one a line (``refunds-g8: <selector>``, or only the version when the
    selector reads the old label); it is empty for other rows. A cell whose text a
    spreadsheet would run as a formula (it starts with ``=``, ``+``, ``-``, ``@``, a tab or a
    carriage return) starts with an apostrophe instead (:func:`escape_cell`); import removes it.
    """
    header = list(CSV_FIXED)
    if kind == "adjudication":
        header += ["labels", "differs"]
    header += ["outcome", *(f"required:{t}" for t in tools)]
    header += [*(f"forbidden:{t}" for t in tools), "answer_facts", "signature"]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    # A lone carriage return in a cell ends the row for a reader unless the cell is quoted,
    # which the minimal quoting of a "\n"-terminated writer does not do.
    quoting = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(header)
    for line in lines:
        situation = line["situation"]
        row = [
            line["sheet"],
            line["dataset"],
            line["labeller"],
            line["case_id"],
            line["slice"],
            line["guideline_version"],
            situation.get("goal", ""),
            _conversation(situation),
            _compact(situation.get("fixtures")),
            _compact(situation.get("state")),
            _compact(situation.get("injected")),
            _rules_text(line.get("sent_back_by") or ()),
        ]
        if kind == "adjudication":
            row += ["\n".join(_label_text(s) for s in line["labels"]), ", ".join(line["differs"])]
        row += ["", *("" for _ in tools), *("" for _ in tools), "", line.get("signature", "")]
        cells = [escape_cell("" if cell is None else str(cell)) for cell in row]
        (quoting if any("\r" in c for c in cells) else writer).writerow(cells)
    return buffer.getvalue().encode("utf-8")


def _entry(
    obj: dict[str, Any], shown: str, line: int, csv_mode: bool
) -> SheetEntry | list[Problem]:
    try:
        answer = SheetAnswer.model_validate(obj)
    except ValidationError as exc:
        problems = problems_from_validation(exc, shown, line)
        if csv_mode:
            problems = [_column_field(p) for p in problems]
        return problems
    return SheetEntry(shown, line, answer, column_names=csv_mode)


def _column_field(problem: Problem) -> Problem:
    field = problem.field or ""
    for name in ("required", "forbidden"):
        if field.startswith(name + "."):
            field = name + ":" + field[len(name) + 1 :]
    return Problem(
        problem.path, problem.line, field or None, problem.message, problem.got, problem.has_got
    )


def _read_jsonl(data: bytes, shown: str) -> tuple[list[SheetEntry], list[Problem]]:
    entries: list[SheetEntry] = []
    problems: list[Problem] = []
    # A byte-order mark from a spreadsheet or editor is harmless in a returned sheet.
    for number, obj in json_objects(
        data.removeprefix(b"\xef\xbb\xbf"), shown, problems, blank_lines_ok=True
    ):
        result = _entry(obj, shown, number, csv_mode=False)
        if isinstance(result, list):
            problems.extend(result)
        else:
            entries.append(result)
    return entries, problems


_CSV_ANSWERS = ("outcome", "answer_facts", "signature")
_CSV_SHOWN = ("labels", "differs")


def _read_csv(data: bytes, shown: str) -> tuple[list[SheetEntry], list[Problem]]:
    text = data.decode("utf-8").removeprefix("\ufeff")
    # A cell may be as long as the file (a case with a large state): lift the csv module's
    # 131,072-character default for this read only.
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, len(text) + 1))
    try:
        return _parse_csv(text, shown)
    finally:
        csv.field_size_limit(limit)


def csv_rows(text: str, shown: str, problems: list[Problem]) -> Iterator[tuple[int, list[str]]]:
    """``(line the record starts on, cells)`` per CSV record; a syntax error ends the reading.

    The error is appended to ``problems`` (located at the record it stopped at).
    """
    reader = csv.reader(io.StringIO(text, newline=""))
    start = 1
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            problems.append(Problem(shown, start, None, f"not readable as CSV: {exc}"))
            return
        yield start, row
        start = reader.line_num + 1


def _parse_csv(text: str, shown: str) -> tuple[list[SheetEntry], list[Problem]]:
    problems: list[Problem] = []
    rows = csv_rows(text, shown, problems)
    first = next(rows, None)
    if first is None:
        return [], problems
    header = first[1]
    known = set(CSV_FIXED) | set(_CSV_ANSWERS) | set(_CSV_SHOWN)
    for name in header:
        if name not in known and not name.startswith(("required:", "forbidden:")):
            problems.append(Problem(shown, 1, name, "unknown column", name, has_got=True))
    missing = [
        n
        for n in ("sheet", "dataset", "labeller", "case_id", "guideline_version", "outcome")
        if n not in header
    ]
    for name in missing:
        problems.append(Problem(shown, 1, name, "column missing from the header row"))
    if problems:
        return [], problems
    entries: list[SheetEntry] = []
    for line, row in rows:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            problems.append(
                Problem(
                    shown, line, None, f"row has {len(row)} cells but the header has {len(header)}"
                )
            )
            continue
        result = _entry(_csv_object(header, row), shown, line, csv_mode=True)
        if isinstance(result, list):
            problems.extend(result)
        else:
            entries.append(result)
    return entries, problems


def _csv_object(header: Sequence[str], row: Sequence[str]) -> dict[str, Any]:
    """One CSV record as the JSON object of a sheet line.

    Cells casework wrote are unescaped; answer cells, which casework exports empty, are the
    labeller's own text and are read as they are (a fact may begin with an apostrophe).
    """
    obj: dict[str, Any] = {"required": {}, "forbidden": {}}
    for name, raw in zip(header, row, strict=True):
        answer = name in _CSV_ANSWERS or name.startswith(("required:", "forbidden:"))
        cell = raw if answer else unescape_cell(raw)
        if name.startswith(("required:", "forbidden:")):
            group, _, tool = name.partition(":")
            obj[group][tool] = cell
        elif name == "answer_facts":
            obj[name] = [f for f in cell.replace("\r\n", "\n").split("\n") if f.strip()]
        elif name == "sent_back_by":
            obj[name] = _rules_from_text(cell)
        else:
            obj[name] = cell
    return obj


def read_sheet(path: Path, shown: str) -> tuple[list[SheetEntry], list[Problem]]:
    """Parse a returned sheet (``.jsonl`` or ``.csv``): its lines and every problem found.

    Blank lines are ignored. Problems are syntax and field-type errors; whether the case, tools,
    guideline and assignment are right is checked by the importer.
    """
    if not path.is_file():
        return [], [Problem(shown, None, None, "file not found")]
    data = path.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return [], [
            Problem(shown, line, None, f"invalid UTF-8 at column {col}; save the sheet as UTF-8")
        ]
    suffix = path.suffix.casefold()
    if suffix == ".jsonl":
        return _read_jsonl(data, shown)
    if suffix == ".csv":
        return _read_csv(data, shown)
    return [], [
        Problem(shown, None, None, "a sheet is a .jsonl or .csv file", path.suffix, has_got=True)
    ]
