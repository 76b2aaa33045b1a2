"""Blind verdict sheets: write them (JSONL or CSV) and read people's answers back, located.

A sheet line shows what the check needs and nothing more: the question, the rubric, the fact
(fact items), the conversation, the agent's tool calls and its reply. Never the judge's verdict,
reason or evidence, the label, ``satisfiable``, provenance or the case id. Each line is signed
for its reviewer (:func:`verdict_signature`), as label sheets are, so an edited ``reviewer`` is
refused on import.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from casework.dataset.jsonl import json_objects, problems_from_validation
from casework.errors import Problem
from casework.grading.judge import OUTCOME_DEFINITIONS, CheckKind
from casework.labelling.sheets import csv_rows, escape_cell, unescape_cell
from casework.labelling.signing import line_signature, signature_matches
from casework.review._items import ReviewItem
from casework.schema import OUTCOMES

SheetFormat = Literal["jsonl", "csv"]

QUESTIONS: dict[str, str] = {
    "outcome": (
        "Which outcome does this reply take? Answer resolve, clarify, refuse or escalate. "
        + OUTCOME_DEFINITIONS
    ),
    "answer_fact": (
        "Does the reply state this fact? Answer yes or no. A paraphrase counts; a vague, hedged "
        "or contradicting statement does not."
    ),
}

#: Columns of a CSV verdict sheet, in order (`answer` is the person's).
CSV_COLUMNS = (
    "sheet",
    "item",
    "reviewer",
    "kind",
    "question",
    "rubric",
    "fact",
    "conversation",
    "tool_calls",
    "reply",
    "answer",
    "signature",
)

#: The field (JSONL key, CSV column) holding a line's signature.
SIGNATURE_FIELD = "signature"

_YES = {"yes", "y", "true"}
_NO = {"no", "n", "false"}

# The signed identity of a verdict line: the label sheets' signature over a kind of its own, so a
# label line's signature never passes for a verdict line's (or the other way round).
_SIGNED_KIND = "verdict"
_SIGNED_SCOPE = "judge"


def verdict_signature(key: bytes, reviewer: str, item: str) -> str:
    """The signature binding sheet item ``item`` (its opaque id) to ``reviewer``.

    Made with the workbench's sheet-signing secret
    (:func:`casework.labelling.sheet_key`), the one label sheets are signed with.
    """
    return line_signature(key, _SIGNED_KIND, _SIGNED_SCOPE, reviewer, item)


def verdict_signature_matches(
    key: bytes | None, signature: str | None, reviewer: str, item: str
) -> bool:
    """Whether ``signature`` is the one `judge sample` gave ``item`` on ``reviewer``'s sheet."""
    return signature_matches(key, signature, _SIGNED_KIND, _SIGNED_SCOPE, reviewer, item)


def sheet_line(item: ReviewItem, reviewer: str, *, signature: str = "") -> dict[str, Any]:
    """One blind sheet line for ``reviewer`` (the JSONL form; CSV flattens it).

    ``signature`` (:func:`verdict_signature`) comes last; import refuses a line without the
    one made for the reviewer it names.
    """
    return {
        "sheet": "verdict",
        "item": item.sheet_id,
        "reviewer": reviewer,
        "kind": item.kind,
        "question": QUESTIONS[item.kind],
        "rubric": item.rubric,
        "fact": item.fact,
        "conversation": [dict(t) for t in item.turns],
        "tool_calls": [dict(c) for c in item.tool_calls],
        "reply": item.reply,
        "answer": None,
        "signature": signature,
    }


def _conversation_text(turns: Sequence[Mapping[str, Any]]) -> str:
    out = []
    for turn in turns:
        out.append(f"{turn['role']}: {turn.get('content', '')}".rstrip())
        for call in turn.get("tool_calls", []):
            out.append(f"  -> {call['name']}({json.dumps(call['arguments'], ensure_ascii=False)})")
    return "\n".join(out)


def _calls_text(calls: Sequence[Mapping[str, Any]]) -> str:
    out = []
    for call in calls:
        text = f"{call['name']}({json.dumps(call['arguments'], ensure_ascii=False)})"
        if "error" in call:
            text += f" => error: {call['error']}"
        else:
            text += f" => {json.dumps(call.get('result'), ensure_ascii=False, default=str)}"
        out.append(text)
    return "\n".join(out)


def render_sheet(lines: Sequence[Mapping[str, Any]], fmt: SheetFormat) -> bytes:
    """A sheet's bytes: one JSON object per line, or CSV with :data:`CSV_COLUMNS`.

    CSV cells a spreadsheet would run as a formula start with an apostrophe
    (:func:`casework.labelling.escape_cell`); import removes it.
    """
    if fmt == "jsonl":
        return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n", quoting=csv.QUOTE_ALL)
    writer.writerow(CSV_COLUMNS)
    for line in lines:
        shown = dict(line)
        shown["conversation"] = _conversation_text(line["conversation"])
        shown["tool_calls"] = _calls_text(line["tool_calls"])
        writer.writerow(
            [escape_cell("" if shown[c] is None else str(shown[c])) for c in CSV_COLUMNS]
        )
    return buffer.getvalue().encode("utf-8")


class _Answer(BaseModel):
    """The fields import reads from a sheet line (the shown ones are not checked)."""

    model_config = ConfigDict(extra="ignore")

    sheet: Literal["verdict"]
    item: str
    reviewer: str
    kind: CheckKind
    answer: str | None = None
    signature: str | None = None

    @field_validator("answer", mode="before")
    @classmethod
    def _blank(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value


@dataclass(frozen=True)
class SheetVerdict:
    """One answered (or unanswered) line of a returned verdict sheet.

    Attributes:
        path: The sheet, as shown in messages.
        line: Line (CSV: the line its record starts on).
        item: The opaque item id.
        reviewer: Who answered.
        kind: ``outcome`` or ``answer_fact``.
        answer: ``resolve|clarify|refuse|escalate`` or ``yes|no``; ``None`` when left blank.
        signature: The line's signature as returned (``None`` when missing).
    """

    path: str
    line: int
    item: str
    reviewer: str
    kind: CheckKind
    answer: str | None
    signature: str | None = None


def _normalise(answer: _Answer, shown: str, line: int) -> SheetVerdict | Problem:
    text = answer.answer.strip().casefold() if answer.answer is not None else None
    if text is not None and answer.kind == "outcome" and text not in OUTCOMES:
        allowed = f"{', '.join(OUTCOMES[:-1])} or {OUTCOMES[-1]}"
        return Problem(shown, line, "answer", f"must be {allowed}", answer.answer, True)
    if text is not None and answer.kind == "answer_fact":
        if text not in _YES | _NO:
            return Problem(shown, line, "answer", "must be yes or no", answer.answer, True)
        text = "yes" if text in _YES else "no"
    return SheetVerdict(
        shown, line, answer.item, answer.reviewer, answer.kind, text, answer.signature
    )


def _entry(obj: dict[str, Any], shown: str, line: int) -> SheetVerdict | list[Problem]:
    unknown = [
        Problem(shown, line, name, "unknown field", name, has_got=True)
        for name in obj
        if name not in CSV_COLUMNS
    ]
    if unknown:  # a misspelt `answer` would otherwise read as a blank answer
        return unknown
    try:
        answer = _Answer.model_validate(obj)
    except ValidationError as exc:
        return problems_from_validation(exc, shown, line)
    result = _normalise(answer, shown, line)
    return [result] if isinstance(result, Problem) else result


def _csv_objects(
    text: str, shown: str, problems: list[Problem]
) -> Iterator[tuple[int, dict[str, Any]]]:
    records = csv_rows(text, shown, problems)
    first = next(records, None)
    if first is None:
        return
    header = first[1]
    for name in header:
        if name not in CSV_COLUMNS:
            problems.append(Problem(shown, 1, name, "unknown column", name, has_got=True))
    for name in ("sheet", "item", "reviewer", "kind", "answer", "signature"):
        if name not in header:
            problems.append(Problem(shown, 1, name, "column missing from the header row"))
    if problems:
        return
    for line, row in records:
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            problems.append(
                Problem(
                    shown, line, None, f"row has {len(row)} cells but the header has {len(header)}"
                )
            )
            continue
        # Cells casework wrote are unescaped; the answer is the person's own text.
        yield (
            line,
            {
                name: cell if name == "answer" else unescape_cell(cell)
                for name, cell in zip(header, row, strict=True)
            },
        )


def read_verdict_sheet(path: Path, shown: str) -> tuple[list[SheetVerdict], list[Problem]]:
    """Parse a returned verdict sheet (``.jsonl`` or ``.csv``): its lines and every problem.

    Problems are syntax and field errors, located ``path:line: field``; whether the item exists
    and was given to that reviewer is checked by the importer.
    """
    if not path.is_file():
        return [], [Problem(shown, None, None, "file not found")]
    data = path.read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return [], [Problem(shown, line, None, "invalid UTF-8; save the sheet as UTF-8")]
    problems: list[Problem] = []
    suffix = path.suffix.casefold()
    if suffix == ".jsonl":
        objects: Iterator[tuple[int, dict[str, Any]]] = json_objects(
            data.removeprefix(b"\xef\xbb\xbf"), shown, problems, blank_lines_ok=True
        )
    elif suffix == ".csv":
        # A cell may be as long as the file (a long reply): lift the csv module's default limit.
        csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))
        objects = _csv_objects(text.removeprefix("\ufeff"), shown, problems)
    else:
        return [], [
            Problem(shown, None, None, "a sheet is a .jsonl or .csv file", path.suffix, True)
        ]
    entries: list[SheetVerdict] = []
    for number, obj in objects:
        result = _entry(obj, shown, number)
        if isinstance(result, list):
            problems.extend(result)
        else:
            entries.append(result)
    return entries, problems
