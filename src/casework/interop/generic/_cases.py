"""Labelled cases from rows: generic JSONL, a JSON list or CSV, fields found by ``--map``.

Entry points: :func:`import_cases` (project level: every row read and checked, then one release)
over :func:`read_rows` (JSONL, a JSON list, or CSV with a header) and :func:`cases_from_rows`
(pure: rows to cases, every problem located by line). Inspect samples are such rows with
Inspect's defaults (``CaseDefaults(format="inspect")``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import ValidationError

from casework.dataset import load_dataset, release
from casework.dataset.jsonl import problems_from_validation
from casework.dataset.lock import dataset_lock
from casework.dataset.versions import CASES_FILE
from casework.decoding import BadJSON, decode_utf8, parse_json
from casework.errors import InputError, InputErrors, Problem, UsageError
from casework.interop._paths import MISSING, resolve
from casework.names import case_id_problem, check_name
from casework.project import Project
from casework.schema import Case, Split, VersionRecord

CaseFormat = Literal["jsonl", "inspect"]
#: Row formats `casework import` turns into labelled cases.
CASE_FORMATS: tuple[CaseFormat, ...] = get_args(CaseFormat)
#: Guideline version written on imported labels (nobody mistakes them for blind double labels).
IMPORT_GUIDELINE = {"jsonl": "jsonl-import", "inspect": "inspect-import"}

#: Destination fields ``--map`` accepts for labelled cases, with the default source paths.
CASE_FIELDS: Mapping[str, tuple[str, ...]] = {
    "id": ("id", "case_id"),
    "input": ("input", "messages", "turns", "question", "prompt"),
    "goal": ("goal", "metadata.goal"),
    "slice": ("slice", "metadata.slice"),
    "split": ("split", "metadata.split"),
    "outcome": ("outcome", "label.outcome", "metadata.outcome"),
    "required_tools": ("required_tools", "label.required_tools", "metadata.required_tools"),
    "forbidden_tools": ("forbidden_tools", "label.forbidden_tools", "metadata.forbidden_tools"),
    "answer_facts": ("answer_facts", "label.answer_facts", "target"),
    "state": ("state", "metadata.state"),
    "satisfiable": ("satisfiable", "metadata.satisfiable"),
    "guideline_version": (
        "guideline_version",
        "label.guideline_version",
        "metadata.guideline_version",
    ),
}
_ROLES = {"user", "assistant", "system", "tool"}
#: The metadata key where `export inspect-samples` keeps the rest of the case.
WHOLE_CASE = "casework_case"


@dataclass(frozen=True)
class Row:
    """One input row and where it was read.

    Attributes:
        line: 1-based line (JSONL, CSV) or ``None`` (a JSON list: ``index`` says which).
        index: 0-based position of the row.
        value: The row.
    """

    line: int | None
    index: int
    value: Any


@dataclass(frozen=True)
class CaseDefaults:
    """What a row that does not say gets.

    Attributes:
        format: ``jsonl`` or ``inspect`` (Inspect samples default the outcome to ``resolve``).
        slice: Slice of rows without one.
        split: Split of rows without one.
    """

    format: CaseFormat
    slice: str
    split: Split = "dev"


def parse_case_map(specs: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """Parse ``--map DST=SRC.PATH`` for labelled cases (a user path replaces the defaults).

    Raises:
        UsageError: A spec is not ``DST=SRC`` or names an unknown destination.
    """
    paths = {k: tuple(v) for k, v in CASE_FIELDS.items()}
    for spec in specs:
        dst, sep, src = (s.strip() for s in spec.partition("="))
        if not sep or not dst or not src:
            raise UsageError(f"'{spec}': expected DST=SRC.PATH (e.g. id=meta.uid).", param="map")
        if dst not in CASE_FIELDS:
            raise UsageError(
                f"'{spec}': unknown destination '{dst}'; use one of: {', '.join(CASE_FIELDS)}.",
                param="map",
            )
        paths[dst] = (src,)
    return paths


def read_rows(data: bytes, shown: str) -> list[Row]:
    """Rows of a JSONL file, a JSON list, or a CSV file with a header (by the name's ending).

    CSV cells that hold JSON objects or lists (``metadata``, ``target``) are parsed.

    Raises:
        InputError: Bad UTF-8, JSON or CSV, every bad line listed.
    """
    text = decode_utf8(data, shown)
    if shown.lower().endswith(".csv"):
        return _csv_rows(text, shown)
    stripped = text.lstrip()
    if stripped.startswith("["):
        try:
            value = parse_json(text)
        except BadJSON as exc:
            raise InputError(shown, exc.lineno, None, exc.message) from None
        if isinstance(value, list):
            return [Row(None, i, v) for i, v in enumerate(value)]
    rows: list[Row] = []
    problems: list[Problem] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            rows.append(Row(number, len(rows), parse_json(line)))
        except BadJSON as exc:
            problems.append(Problem(shown, number, None, exc.message))
    InputErrors.raise_if_any(problems)
    return rows


def _csv_rows(text: str, shown: str) -> list[Row]:
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        rows = []
        for i, record in enumerate(reader):
            if None in record:
                raise InputError(shown, reader.line_num, None, "row has more cells than the header")
            rows.append(Row(reader.line_num, i, {k: _cell(v) for k, v in record.items()}))
    except csv.Error as exc:
        raise InputError(shown, None, None, f"bad CSV: {exc}") from None
    return rows


def _cell(value: str | None) -> Any:
    if value is None:
        return None
    if value.strip().startswith(("{", "[")):
        try:
            return parse_json(value)
        except BadJSON:
            return value
    return value


class RowProblem(Exception):
    """What is wrong with one row: the field (a dotted path in the row), the message, the value."""

    def __init__(self, field: str, message: str, got: Any = MISSING) -> None:
        super().__init__(message)
        self.field = field
        self.message = message
        self.got = got


_Bad = RowProblem


class CaseCollector:
    """Cases validated row by row with every problem located; an id seen twice is one of them."""

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.cases: list[Case] = []
        self.problems: list[Problem] = []
        self._seen: dict[str, int | None] = {}

    @staticmethod
    def _prefix(row: Row) -> str:
        return "" if row.line is not None else str(row.index)

    def bad(self, row: Row, exc: RowProblem) -> None:
        """Record that ``row`` could not be mapped to a case."""
        field = ".".join(p for p in (self._prefix(row), exc.field) if p) or None
        has = exc.got is not MISSING
        self.problems.append(
            Problem(self.shown, row.line, field, exc.message, exc.got if has else None, has)
        )

    def add(self, row: Row, data: dict[str, Any]) -> None:
        """Validate ``data`` (the case mapped from ``row``) and keep it, or record its problems."""
        try:
            case = Case.model_validate(data)
        except ValidationError as exc:
            self.problems.extend(
                problems_from_validation(exc, self.shown, row.line, self._prefix(row))
            )
            return
        if case.id in self._seen:
            line = self._seen[case.id]
            where = "" if line is None else f" (line {line})"
            self.problems.append(
                Problem(
                    self.shown, row.line, "id", f"id repeats an earlier row{where}", case.id, True
                )
            )
        self._seen[case.id] = row.line
        self.cases.append(case)

    def finish(self) -> list[Case]:
        """The cases.

        Raises:
            InputErrors: Every problem recorded, or "no rows" when there was no row at all.
        """
        if not self.problems and not self.cases:
            self.problems.append(Problem(self.shown, None, None, "no rows"))
        InputErrors.raise_if_any(self.problems)
        return self.cases


def _get(row: Any, paths: Mapping[str, tuple[str, ...]], dst: str) -> tuple[str, Any]:
    for path in paths[dst]:
        value = resolve(row, path)
        if value is not MISSING:
            return path, value
    return (paths[dst][0] if paths[dst] else dst), MISSING


#: Prefix of the ids `export inspect-samples` makes up for calls recorded without one (Inspect
#: needs an id to pair a call with its result); importing the file gives the calls no id again.
GENERATED_CALL_ID = "casework-call-"


def _text(content: Any, at: str) -> str:
    if isinstance(content, list):  # content parts: keep the text ones
        content = "\n".join(
            p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)
        )
    if content is None:
        return ""
    if not isinstance(content, str):
        raise _Bad(f"{at}.content", "content must be a string or a list of parts", content)
    return content


def _call(raw: Any, at: str) -> dict[str, Any]:
    """A tool call as Inspect (`function`, `arguments`) or OpenAI (`function.name`) writes it."""
    if not isinstance(raw, Mapping):
        raise _Bad(at, "a tool call must be an object", raw)
    fn = raw.get("function")
    name, arguments = (
        (fn.get("name"), fn.get("arguments"))
        if isinstance(fn, Mapping)
        else (
            fn,
            raw.get("arguments"),
        )
    )
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except ValueError:
            raise _Bad(f"{at}.arguments", "arguments must be a JSON object", arguments) from None
    if not isinstance(name, str) or not name:
        raise _Bad(f"{at}.function", "a tool call needs the name of its function", raw)
    if not isinstance(arguments, Mapping):
        raise _Bad(f"{at}.arguments", "arguments must be a JSON object", arguments)
    call_id = raw.get("id")
    call: dict[str, Any] = {"name": name, "arguments": dict(arguments)}
    if isinstance(call_id, str) and call_id and not call_id.startswith(GENERATED_CALL_ID):
        call["id"] = call_id
    return call


def _answer(m: Mapping[str, Any], at: str) -> tuple[Any, str | None]:
    """A tool message's result (exact when casework wrote it) and error."""
    meta = m.get("metadata")
    if isinstance(meta, Mapping) and "casework_result" in meta:
        result = meta["casework_result"]
    else:
        text = _text(m.get("content", ""), at)
        try:
            result = json.loads(text) if text.strip() else None
        except ValueError:
            result = text
    error = m.get("error")
    if isinstance(error, Mapping):
        error = error.get("message")
    return result, (str(error) if error not in (None, "") else None)


def _turns(value: Any, at: str) -> list[dict[str, Any]]:
    """An input: a string (one user turn) or a list of chat messages.

    Assistant messages keep their tool calls; a tool message answering one of them (by
    `tool_call_id`) becomes that call's result or error, any other tool message a tool turn.
    """
    if isinstance(value, str):
        if not value.strip():
            raise _Bad(at, "input must not be empty", value)
        return [{"role": "user", "content": value}]
    if not isinstance(value, list) or not value:
        raise _Bad(at, "input must be a string or a non-empty list of messages", value)
    turns: list[dict[str, Any]] = []
    calls: dict[str, dict[str, Any]] = {}
    for i, m in enumerate(value):
        here = f"{at}.{i}"
        role = m.get("role") if isinstance(m, Mapping) else None
        if not isinstance(role, str) or role not in _ROLES:
            raise _Bad(here, "message needs a role of user, assistant, system or tool", m)
        assert isinstance(m, Mapping)
        answered = m.get("tool_call_id")
        if role == "tool" and isinstance(answered, str) and answered in calls:
            call = calls.pop(answered)
            call["result"], error = _answer(m, here)
            if error is not None:
                call["error"] = error
            continue
        turn: dict[str, Any] = {"role": role, "content": _text(m.get("content", ""), here)}
        raw_calls = m.get("tool_calls") if role == "assistant" else None
        if raw_calls:
            if not isinstance(raw_calls, list):
                raise _Bad(f"{here}.tool_calls", "must be a list of tool calls", raw_calls)
            turn["tool_calls"] = [
                _call(c, f"{here}.tool_calls.{k}") for k, c in enumerate(raw_calls)
            ]
            for c, raw in zip(turn["tool_calls"], raw_calls, strict=True):
                if isinstance(raw.get("id"), str):
                    calls[raw["id"]] = c
        turns.append(turn)
    return turns


def _goal(turns: list[dict[str, Any]], limit: int = 200) -> str:
    last = next(
        (t["content"] for t in reversed(turns) if t["role"] == "user"), turns[-1]["content"]
    )
    flat = " ".join(str(last).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _tools(value: Any, at: str) -> list[Any]:
    """Tool requirements: names, or ``{name, arguments}`` (plain argument values match exactly)."""
    if value is MISSING or value is None:
        return []
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise _Bad(at, "must be a list of tool names or {name, arguments} objects", value)
    out: list[Any] = []
    for i, item in enumerate(value):
        if isinstance(item, Mapping) and isinstance(item.get("arguments"), Mapping):
            args = {
                k: v if isinstance(v, Mapping) and "match" in v else {"match": "exact", "value": v}
                for k, v in item["arguments"].items()
            }
            item = {**item, "arguments": args}
        elif not isinstance(item, (str, Mapping)):
            raise _Bad(f"{at}.{i}", "must be a tool name or a {name, arguments} object", item)
        out.append(item)
    return out


def _facts(value: Any, at: str) -> list[str]:
    if value is MISSING or value is None or value == "":
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise _Bad(at, "answer facts must be a string or a list of strings", value)


def _case_dict(row: Any, paths: Mapping[str, tuple[str, ...]], d: CaseDefaults) -> dict[str, Any]:
    if not isinstance(row, Mapping):
        raise _Bad("", "a row must be an object", row)
    at, raw_id = _get(row, paths, "id")
    if raw_id is MISSING or isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
        raise _Bad(
            at, "every row needs an id (a string or an integer; map one with id=PATH)", raw_id
        )
    case_id = str(raw_id)
    if (why := case_id_problem(case_id)) is not None:
        raise _Bad(at, why, case_id)
    at, raw_input = _get(row, paths, "input")
    if raw_input is MISSING:
        raise _Bad(at, "every row needs an input (map one with input=PATH)")
    turns = _turns(raw_input, at)
    meta = row.get("metadata")
    whole = meta.get(WHOLE_CASE) if isinstance(meta, Mapping) else None
    if d.format == "inspect" and whole is not None:
        if not isinstance(whole, Mapping) or not isinstance(whole.get("situation"), Mapping):
            raise _Bad(f"metadata.{WHOLE_CASE}", "must be the case as casework exported it", whole)
        # Everything but the id and the conversation, which Inspect holds in its own fields.
        return {**whole, "id": case_id, "situation": {**whole["situation"], "turns": turns}}
    at, outcome = _get(row, paths, "outcome")
    if outcome is MISSING:
        if d.format != "inspect":
            raise _Bad(at, "every labelled row needs an outcome (map one with outcome=PATH)")
        outcome = "resolve"
    values = {k: _get(row, paths, k) for k in ("goal", "slice", "split", "state", "satisfiable")}
    label: dict[str, Any] = {
        "outcome": outcome,
        "required_tools": _tools(*reversed(_get(row, paths, "required_tools"))),
        "forbidden_tools": _tools(*reversed(_get(row, paths, "forbidden_tools"))),
        "answer_facts": _facts(*reversed(_get(row, paths, "answer_facts"))),
        "guideline_version": _or(
            _get(row, paths, "guideline_version")[1], IMPORT_GUIDELINE[d.format]
        ),
    }
    return {
        "id": case_id,
        "slice": _or(values["slice"][1], d.slice),
        "split": _or(values["split"][1], d.split),
        "source": "hand",
        "satisfiable": _or(values["satisfiable"][1], True),
        "situation": {
            "goal": _or(values["goal"][1], _goal(turns)),
            "turns": turns,
            "state": _or(values["state"][1], {}),
        },
        "label": label,
    }


def _or(value: Any, default: Any) -> Any:
    return default if value is MISSING or value is None else value


def cases_from_rows(
    rows: Sequence[Row], shown: str, paths: Mapping[str, tuple[str, ...]], defaults: CaseDefaults
) -> list[Case]:
    """Labelled cases of the rows (pure), every problem of every row located.

    Raises:
        InputErrors: Rows that do not map to a valid case, or ids repeated.
    """
    collector = CaseCollector(shown)
    for row in rows:
        try:
            data = _case_dict(row.value, paths, defaults)
        except RowProblem as exc:
            collector.bad(row, exc)
            continue
        collector.add(row, data)
    return collector.finish()


@dataclass(frozen=True)
class CasesImportReport:
    """What `casework import jsonl|inspect-samples` released.

    Attributes:
        dataset: The dataset.
        file: The file read.
        imported: Ids of the new cases.
        version: The release (``None``: content unchanged).
    """

    dataset: str
    file: str
    imported: list[str]
    version: VersionRecord | None


def existing_cases(project: Project, dataset: str, new: Sequence[Case], shown: str) -> list[Case]:
    """The dataset's cases an import adds to (none for a new dataset); call under its lock.

    Raises:
        InputErrors: A new case's id is already in the dataset (every one, located).
    """
    folder = project.dataset_dir(dataset)
    existing = list(load_dataset(project, dataset).cases) if (folder / CASES_FILE).exists() else []
    known = {c.id for c in existing}
    InputErrors.raise_if_any(
        Problem(
            shown, None, "id", f"case id '{c.id}' is already in dataset '{dataset}'", c.id, True
        )
        for c in new
        if c.id in known
    )
    return existing


def import_cases(
    project: Project,
    path: Path,
    dataset: str,
    defaults: CaseDefaults,
    mapping: Sequence[str] = (),
    message: str | None = None,
) -> CasesImportReport:
    """Import the rows of ``path`` as labelled cases of ``dataset`` and release a version.

    Every row is read and checked first; any bad row, or an id already in the dataset, is
    reported (all of them, by line) and nothing is written.

    Raises:
        UsageError: A bad mapping or slice.
        InputErrors: Bad rows or existing ids.
    """
    check_name(dataset, "dataset")
    check_name(defaults.slice, "slice")
    paths = parse_case_map(mapping)
    shown = project.relative(path)
    if not path.is_file():
        raise InputError(shown, None, None, "file not found")
    cases = cases_from_rows(read_rows(path.read_bytes(), shown), shown, paths, defaults)
    with dataset_lock(project, dataset):
        existing = existing_cases(project, dataset, cases, shown)
        version = release(
            project,
            dataset,
            [*existing, *cases],
            message or f"import {defaults.format}: {len(cases)} case(s) from {shown}",
        )
    return CasesImportReport(dataset, shown, [c.id for c in cases], version)
