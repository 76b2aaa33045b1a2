"""Function-calling rows to cases: per-case tools, expected calls, outcome classes.

Entry points: :func:`import_fncall` (project level: every row read and checked, each distinct
offered tool set written once as a catalogue file, then one release) over the pure
:func:`cases_from_fncall` (rows to cases, every problem located by line) and
:func:`parse_fncall_map` (``--map DST=SRC.PATH`` over a style's default paths). When2Call rows
are read as published: the slice is the row's category (``correct_answer``), the expected call
is the ``tool_call`` answer (``target_tool`` is the tool's declaration, not a call).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from casework.atomic import atomic_write_bytes
from casework.dataset import release
from casework.dataset.lock import dataset_lock
from casework.dataset.tools import parse_tool_declarations
from casework.errors import InputError, InputErrors, Problem, UsageError
from casework.interop._paths import MISSING, resolve
from casework.interop.fncall.bfcl import (
    AGENTIC_CATEGORIES,
    MULTI_TURN_DOC_FILES,
    MULTI_TURN_LOST,
    as_offered,
    bfcl_category,
    bfcl_label,
    is_multi_turn,
    multi_turn,
    reference_path,
    source_language,
)
from casework.interop.generic import read_rows
from casework.interop.generic._cases import CaseCollector, Row, RowProblem, existing_cases
from casework.names import check_name, name_problem
from casework.project import Project
from casework.schema import Case, Split, VersionRecord

FncallStyle = Literal["generic", "when2call", "bfcl"]
#: Row styles `casework import fncall` knows the field paths of.
FNCALL_STYLES: tuple[FncallStyle, ...] = get_args(FncallStyle)
#: Destination fields of ``--map``, with each style's default source paths.
FNCALL_FIELDS: Mapping[FncallStyle, Mapping[str, tuple[str, ...]]] = {
    "generic": {
        "id": ("id", "uuid"),
        "input": ("input", "question", "messages"),
        "tools": ("tools", "functions", "function"),
        "expected": ("expected", "expected_call", "ground_truth"),
        "outcome": ("outcome", "correct_answer"),
        "slice": ("slice",),
        "split": ("split",),
    },
    "when2call": {
        "id": ("uuid", "id"),
        "input": ("question",),
        "tools": ("tools",),
        "expected": ("answers.tool_call",),
        "outcome": ("correct_answer",),
        "slice": ("correct_answer",),
        "split": ("split",),
    },
    "bfcl": {
        "id": ("id",),
        "input": ("question",),
        "tools": ("function",),
        "expected": ("ground_truth",),
        "outcome": ("outcome",),
        "slice": ("slice",),
        "split": ("split",),
    },
}
#: Outcome classes of the rows (When2Call's and plain words) and the casework outcome of each.
OUTCOME_CLASSES: Mapping[str, str] = {
    "tool_call": "resolve",
    "call": "resolve",
    "resolve": "resolve",
    "direct": "resolve",
    "request_for_info": "clarify",
    "ask": "clarify",
    "clarify": "clarify",
    "cannot_answer": "refuse",
    "no_tool": "refuse",
    "irrelevant": "refuse",
    "refuse": "refuse",
    "escalate": "escalate",
}
FNCALL_GUIDELINE = "fncall-import"
_BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array", "int": "integer"}


_Bad = RowProblem


def parse_fncall_map(style: FncallStyle, specs: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """The style's source paths with ``--map DST=SRC.PATH`` applied (a user path replaces them).

    Raises:
        UsageError: A spec is not ``DST=SRC`` or names an unknown destination.
    """
    paths = dict(FNCALL_FIELDS[style])
    for spec in specs:
        dst, sep, src = (s.strip() for s in spec.partition("="))
        if not sep or not dst or not src:
            raise UsageError(f"'{spec}': expected DST=SRC.PATH (e.g. tools=meta.fns).", param="map")
        if dst not in paths:
            raise UsageError(
                f"'{spec}': unknown destination '{dst}'; use one of: {', '.join(paths)}.",
                param="map",
            )
        paths[dst] = (src,)
    return paths


def _get(row: Any, paths: Mapping[str, tuple[str, ...]], dst: str) -> tuple[str, Any]:
    for path in paths[dst]:
        value = resolve(row, path)
        if value is not MISSING:
            return path, value
    return paths[dst][0], MISSING


def _json_or(value: Any) -> Any:
    if isinstance(value, str) and value.strip().startswith(("{", "[")):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _schema(value: Any) -> Any:
    """A JSON Schema with BFCL's Python type names (``dict``, ``float``…) made JSON Schema's."""
    if isinstance(value, list):
        return [_schema(v) for v in value]
    if not isinstance(value, Mapping):
        return value
    out = {k: _schema(v) for k, v in value.items()}
    if isinstance(out.get("type"), str):
        out["type"] = _BFCL_TYPES.get(out["type"], out["type"])
        if out["type"] == "any":
            del out["type"]
    return out


def _tools(value: Any, at: str) -> list[dict[str, Any]]:
    if value is MISSING or value is None:
        raise _Bad(at, "every row needs its offered tools (a list; map one with tools=PATH)")
    value = _json_or(value)
    if not isinstance(value, list):
        raise _Bad(at, "offered tools must be a list of declarations", value)
    entries = [_json_or(v) for v in value]
    try:
        decls = parse_tool_declarations(entries, "row")
    except InputError as exc:
        first = exc.problem
        raise _Bad(f"{at}{first.field or ''}", first.message, first.got) from None
    return [
        {"name": d.name, "description": d.description, "parameters": _schema(d.parameters)}
        for d in decls.values()
    ]


def _input(value: Any, at: str) -> list[dict[str, Any]]:
    if isinstance(value, str):
        if not value.strip():
            raise _Bad(at, "input must not be empty", value)
        return [{"role": "user", "content": value}]
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        value = [m for turn in value for m in turn]  # BFCL: a list of turns of messages
    if not isinstance(value, list) or not value:
        raise _Bad(at, "input must be a string or a non-empty list of messages", value)
    turns = []
    for i, m in enumerate(value):
        if not isinstance(m, Mapping) or m.get("role") not in ("user", "assistant", "system"):
            raise _Bad(f"{at}.{i}", "message needs a role of user, assistant or system", m)
        if not isinstance(m.get("content", ""), str):
            raise _Bad(f"{at}.{i}.content", "content must be a string", m.get("content"))
        turns.append({"role": m["role"], "content": m.get("content", "")})
    if turns[-1]["role"] != "user":
        raise _Bad(at, "the last message must be the user's", value)
    return turns


def _call(item: Any, where: str) -> dict[str, Any]:
    item = _json_or(item)
    if isinstance(item, Mapping) and isinstance(item.get("name"), str):
        name = item["name"]
        args = _json_or(item.get("arguments", item.get("parameters", {}))) or {}
        if not isinstance(args, Mapping):
            raise _Bad(f"{where}.arguments", "arguments must be an object", args)
    else:
        raise _Bad(where, "an expected call is {name, arguments} (BFCL rows: --style bfcl)", item)
    return {"name": name, "arguments": {k: {"match": "exact", "value": v} for k, v in args.items()}}


def _calls(value: Any, at: str) -> list[dict[str, Any]]:
    """Expected calls: ``{name, arguments}`` objects (or their JSON text)."""
    value = _json_or(value)
    if value is MISSING or value is None or value == [] or value == "":
        return []
    if isinstance(value, list):
        return [_call(item, f"{at}.{i}") for i, item in enumerate(value)]
    return [_call(value, at)]


def _outcome(raw: Any, at: str, calls: list[dict[str, Any]]) -> str:
    if raw is MISSING or raw is None:
        return "resolve" if calls else "refuse"
    if not isinstance(raw, str) or raw.strip().lower() not in OUTCOME_CLASSES:
        raise _Bad(at, f"outcome class must be one of: {', '.join(OUTCOME_CLASSES)}", raw)
    return OUTCOME_CLASSES[raw.strip().lower()]


@dataclass(frozen=True)
class FncallOptions:
    """How rows are read and where their cases go.

    Attributes:
        style: ``generic``, ``when2call`` or ``bfcl`` (default source paths; BFCL's value lists).
        slice: Slice of rows that name none.
        split: Split of rows that name none.
        id_prefix: Prepended to each row's id.
    """

    style: FncallStyle = "generic"
    slice: str = "fncall"
    split: Split = "dev"
    id_prefix: str = ""


_Built = tuple[dict[str, Any], list[dict[str, Any]], dict[str, bytes]]


def _case_dict(
    row: Any,
    paths: Mapping[str, tuple[str, ...]],
    options: FncallOptions,
    dataset: str,
    docs: Mapping[str, list[dict[str, Any]]],
) -> _Built:
    """A row's case data, its offered tools and any reference document (path → bytes)."""
    if not isinstance(row, Mapping):
        raise _Bad("", "a row must be an object", row)
    at, raw_id = _get(row, paths, "id")
    if raw_id is MISSING or isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
        raise _Bad(
            at, "every row needs an id (a string or an integer; map one with id=PATH)", raw_id
        )
    case_id = options.id_prefix + str(raw_id)
    if (why := name_problem(case_id)) is not None:
        raise _Bad(at, f"case id '{case_id}' {why}", raw_id)
    if options.style == "bfcl" and is_multi_turn(bfcl_category(str(raw_id))):
        return _multi_turn_case(row, case_id, bfcl_category(str(raw_id)), dataset, docs)
    if options.style == "bfcl" and bfcl_category(str(raw_id)).startswith(AGENTIC_CATEGORIES):
        raise _Bad(
            at,
            "BFCL's agentic categories (web_search, memory) run against live backends and are "
            "not imported; import the single-turn and multi-turn files",
            raw_id,
        )
    at, raw_input = _get(row, paths, "input")
    if raw_input is MISSING:
        raise _Bad(at, "every row needs an input (map one with input=PATH)")
    turns = _input(raw_input, at)
    at_tools, raw_tools = _get(row, paths, "tools")
    language = source_language(bfcl_category(str(raw_id))) if options.style == "bfcl" else None
    published = raw_tools
    if language is not None:
        # Offered as BFCL offers them (arguments as source text); typed as published for the label.
        raw_tools = as_offered(_json_or(raw_tools), language)
    tools = _tools(raw_tools, at_tools)
    slice_ = _get(row, paths, "slice")[1]
    split = _get(row, paths, "split")[1]
    data: dict[str, Any] = {
        "id": case_id,
        "slice": options.slice if slice_ is MISSING or slice_ is None else slice_,
        "split": options.split if split is MISSING or split is None else split,
        "source": "hand",
        "situation": {"goal": _goal(turns), "turns": turns},
    }
    at_calls, raw_calls = _get(row, paths, "expected")
    if options.style == "bfcl":
        category = bfcl_category(str(raw_id))
        declared: dict[str, Any] = {t["name"]: t for t in tools}
        if language is not None:
            entries = [_json_or(f) for f in _json_or(published)]
            declared = {f["name"]: f for f in entries if isinstance(f, Mapping) and f.get("name")}
        read, oracle = bfcl_label(category, raw_calls, at_calls, declared)
        if slice_ is MISSING or slice_ is None:
            data["slice"] = category
        data["label"] = {**read, "guideline_version": FNCALL_GUIDELINE}
        data["oracle"] = oracle
        return data, tools, {}
    at, raw_outcome = _get(row, paths, "outcome")
    # Only a row whose class is a call has an expected call: When2Call's `answers` hold every
    # class's answer, the call included, whatever the row's class.
    resolving = raw_outcome is MISSING or raw_outcome is None
    if isinstance(raw_outcome, str):
        resolving = OUTCOME_CLASSES.get(raw_outcome.strip().lower()) == "resolve"
    calls = _calls(raw_calls, at_calls) if resolving else []
    outcome = _outcome(raw_outcome, at, calls)
    offered = {t["name"] for t in tools}
    if raw_outcome == "tool_call" and not calls:
        raise _Bad(at_calls, "a tool_call row needs its expected call", raw_calls)
    for i, call in enumerate(calls):
        if call["name"] not in offered:
            where = f"{at_calls}.{i}" if len(calls) > 1 else at_calls
            raise _Bad(where, "expected call names a tool the row does not offer", call["name"])
    label: dict[str, Any] = {"outcome": outcome, "guideline_version": FNCALL_GUIDELINE}
    if outcome == "resolve":
        label["required_tools"] = calls
        if not calls:
            label["forbidden_tools"] = sorted(offered)
    else:
        label["forbidden_tools"] = sorted(offered)
        if options.style == "when2call":
            # When2Call counts any call here as a wrong (or hallucinated) one, of an offered
            # tool or not: the row expects no call at all.
            data["oracle"] = {"ref": _NO_OTHER_CALLS}
    data["label"] = label
    return data, tools, {}


_NO_OTHER_CALLS = "grader:casework.grading.call_set:exact_calls"


def _multi_turn_case(
    row: Mapping[str, Any],
    case_id: str,
    category: str,
    dataset: str,
    docs: Mapping[str, list[dict[str, Any]]],
) -> _Built:
    read = multi_turn(row, category, docs)
    turns = _input(read.first_turn, "question.0")
    rel = reference_path(dataset, read.document)
    data = {
        "id": case_id,
        "slice": category,
        "split": "dev",
        "source": "hand",
        "situation": {"goal": _goal(turns), "turns": turns},
        "oracle": {"class": "human", "ref": rel, "not_gradable": MULTI_TURN_LOST},
    }
    tools = [{k: d[k] for k in ("name", "description", "parameters") if k in d} for d in read.tools]
    return data, _tools(tools, "involved_classes"), {rel: read.document}


def _goal(turns: list[dict[str, Any]], limit: int = 200) -> str:
    last = next((t["content"] for t in reversed(turns) if t["role"] == "user"), "")
    flat = " ".join(str(last).split()) or "answer the user"
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def catalogue_bytes(tools: Sequence[Mapping[str, Any]]) -> bytes:
    """A catalogue file's bytes: the declarations as canonical JSON (one file per distinct set)."""
    return (json.dumps(list(tools), indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def catalogue_path(dataset: str, data: bytes) -> str:
    """Where a tool set's catalogue file goes in the project (content-addressed)."""
    return f"catalogues/{dataset}/{hashlib.sha256(data).hexdigest()[:16]}.json"


def cases_from_fncall(
    rows: Sequence[Row],
    shown: str,
    paths: Mapping[str, tuple[str, ...]],
    options: FncallOptions,
    dataset: str,
    docs: Mapping[str, list[dict[str, Any]]] | None = None,
) -> tuple[list[Case], dict[str, bytes]]:
    """Cases of function-calling rows (pure), each naming its offered tools' catalogue file.

    Args:
        rows: The rows read.
        shown: The file's name in messages.
        paths: Source paths of the fields (:func:`parse_fncall_map`).
        options: Style, defaults, id prefix.
        dataset: The dataset (names the catalogue folder).
        docs: (BFCL multi-turn) Declarations of each of BFCL's classes, by class name.

    Returns:
        The cases, and each catalogue file's (or multi-turn reference document's) bytes by its
        project-relative path (a row that offers no tool offers none: ``situation.tools = []``).

    Raises:
        InputErrors: Every row that does not map to a valid case, by line; repeated ids.
    """
    files: dict[str, bytes] = {}
    collector = CaseCollector(shown)
    for row in rows:
        try:
            data, tools, documents = _case_dict(row.value, paths, options, dataset, docs or {})
        except RowProblem as exc:
            collector.bad(row, exc)
            continue
        files.update(documents)
        if tools:
            body = catalogue_bytes(tools)
            rel = catalogue_path(dataset, body)
            files[rel] = body
            data["situation"]["tools_file"] = rel
            data["situation"]["tools_sha256"] = hashlib.sha256(body).hexdigest()
        else:
            data["situation"]["tools"] = []
        collector.add(row, data)
    return collector.finish(), files


def join_answers(rows: Sequence[Row], answers: Sequence[Row], shown: str) -> list[Row]:
    """Rows with BFCL's separate answers (``{"id", "ground_truth"}`` lines) joined in by id.

    Raises:
        InputErrors: An answer without an id or ``ground_truth``, an id twice, or an id no row
            has, each by its line.
    """
    by_id: dict[str, Any] = {}
    problems: list[Problem] = []
    ids = {str(r.value.get("id")) for r in rows if isinstance(r.value, Mapping)}
    for a in answers:
        v = a.value
        if not isinstance(v, Mapping) or not isinstance(v.get("id"), (str, int)):
            problems.append(
                Problem(shown, a.line, "id", "an answer needs the id of its row", v, True)
            )
        elif "ground_truth" not in v:
            problems.append(
                Problem(shown, a.line, "ground_truth", "an answer needs a ground_truth")
            )
        elif str(v["id"]) in by_id:
            problems.append(Problem(shown, a.line, "id", "id answered twice", v["id"], True))
        elif str(v["id"]) not in ids:
            problems.append(Problem(shown, a.line, "id", "no row has this id", v["id"], True))
        else:
            by_id[str(v["id"])] = v["ground_truth"]
    InputErrors.raise_if_any(problems)
    return [
        Row(r.line, r.index, {**r.value, "ground_truth": by_id[str(r.value.get("id"))]})
        if isinstance(r.value, Mapping) and str(r.value.get("id")) in by_id
        else r
        for r in rows
    ]


@dataclass(frozen=True)
class FncallImportReport:
    """What `casework import fncall` released.

    Attributes:
        dataset: The dataset.
        file: The file read.
        imported: Ids of the new cases.
        outcomes: Cases per outcome.
        catalogues: Catalogue files written (one per distinct offered tool set, and one
            reference document per BFCL multi-turn row).
        version: The release (``None``: content unchanged).
        not_gradable: Cases imported without a label, by id, with what of the benchmark's
            scoring is lost (BFCL multi-turn rows).
    """

    dataset: str
    file: str
    imported: list[str]
    outcomes: dict[str, int]
    catalogues: list[str]
    version: VersionRecord | None
    not_gradable: dict[str, str] = field(default_factory=dict)


def _multi_turn_docs(project: Project, folder: Path) -> dict[str, list[dict[str, Any]]]:
    """BFCL's class declarations (``multi_turn_func_doc/*.json``, one per line), by class."""
    docs: dict[str, list[dict[str, Any]]] = {}
    for cls, name in MULTI_TURN_DOC_FILES.items():
        path = folder / name
        if path.is_file():
            shown = project.relative(path)
            docs[cls] = [
                dict(r.value) if isinstance(r.value, Mapping) else {}
                for r in read_rows(path.read_bytes(), shown)
            ]
    return docs


def import_fncall(
    project: Project,
    path: Path,
    dataset: str,
    options: FncallOptions,
    mapping: Sequence[str] = (),
    message: str | None = None,
    answers: Path | None = None,
) -> FncallImportReport:
    """Import function-calling rows as cases of ``dataset`` with per-case tool catalogues.

    ``answers`` is BFCL's separate ``possible_answer`` file, joined into the rows by id.

    Every row is read and checked first; any bad row, or an id already in the dataset, is
    reported (all of them, by line) and nothing is written.

    Raises:
        UsageError: A bad mapping, dataset or slice name.
        InputErrors: Bad rows or existing ids.
    """
    check_name(dataset, "dataset")
    check_name(options.slice, "slice")
    paths = parse_fncall_map(options.style, mapping)
    shown = project.relative(path)
    if not path.is_file():
        raise InputError(shown, None, None, "file not found")
    rows = read_rows(path.read_bytes(), shown)
    if answers is not None:
        where = project.relative(answers)
        if not answers.is_file():
            raise InputError(where, None, None, "file not found")
        rows = join_answers(rows, read_rows(answers.read_bytes(), where), where)
    docs = (
        _multi_turn_docs(project, path.parent / "multi_turn_func_doc")
        if options.style == "bfcl"
        else {}
    )
    cases, files = cases_from_fncall(rows, shown, paths, options, dataset, docs)
    with dataset_lock(project, dataset):
        existing = existing_cases(project, dataset, cases, shown)
        for rel, body in sorted(files.items()):
            target = project.path(rel)
            if not target.is_file() or target.read_bytes() != body:
                target.parent.mkdir(parents=True, exist_ok=True)
                atomic_write_bytes(target, body)
        version = release(
            project,
            dataset,
            [*existing, *cases],
            message or f"import fncall ({options.style}): {len(cases)} case(s) from {shown}",
        )
    outcomes: dict[str, int] = {}
    for c in cases:
        if c.label is not None:
            outcomes[c.label.outcome] = outcomes.get(c.label.outcome, 0) + 1
    return FncallImportReport(
        dataset,
        shown,
        [c.id for c in cases],
        dict(sorted(outcomes.items())),
        sorted(files),
        version,
        {c.id: c.oracle.not_gradable for c in cases if c.oracle.not_gradable is not None},
    )
