"""τ²-bench domains in: ``tasks.json``, a split file, the domain's database and tools.

Entry points: :func:`import_tau2` (project level: the domain's tasks become the cases of one
slice, released as one version) over :func:`read_tau2_domain` (files to a :class:`Tau2Domain`)
and the pure :func:`cases_from_tau2` (tasks to cases, every problem located by a JSON pointer).
Tool declarations come from ``tools.json`` in the domain folder, else from ``tools.py`` read
statically (:func:`tools_from_python`: never imported, never run).
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from casework.atomic import atomic_write_bytes
from casework.dataset import (
    CASES_FILE,
    dataset_lock,
    load_dataset,
    parse_tool_declarations,
    problems_from_validation,
)
from casework.dataset import release as release_cases
from casework.decoding import load_json
from casework.errors import InputError, InputErrors, Problem, UsageError
from casework.names import check_name, name_problem
from casework.project import Project
from casework.schema import Case, Split, VersionRecord

#: Guideline version written on imported labels.
TAU2_GUIDELINE = "tau2-import"
#: τ²-bench split names and the casework split each becomes (``base`` is every task: ignored).
TAU2_SPLITS: Mapping[str, Split] = {"train": "dev", "dev": "dev", "test": "holdout"}
_READ_PREFIXES = ("get_", "search_", "list_", "find_", "calculate", "think", "check_", "lookup")
_POLICY_WORDS = ("policy", "not allowed", "refuse", "deny", "should not", "cannot", "must not")
_PY_TYPES = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "list": "array",
    "List": "array",
    "dict": "object",
    "Dict": "object",
}


@dataclass(frozen=True)
class Tau2Tool:
    """One tool of the domain: its declaration and whether it writes.

    Attributes:
        declaration: ``{"name", "description", "parameters"}`` (the `agent/tools.json` format).
        kind: ``read``, ``write``, ``think`` or ``generic`` (τ²-bench's tool types).
    """

    declaration: dict[str, Any]
    kind: str


@dataclass(frozen=True)
class Tau2Domain:
    """A τ²-bench domain folder as read.

    Attributes:
        name: The folder's name (the default slice and id prefix).
        tasks: The tasks (``tasks.json``).
        tasks_file: The tasks file, as shown in messages.
        splits: Task id to casework split, from the split file.
        db: The database file (``db.json``), or ``None``.
        tools: The domain's tools, by name.
        tools_source: ``tools.json``, ``tools.py`` or ``None`` (no tools found).
    """

    name: str
    tasks: list[Any]
    tasks_file: str
    splits: dict[str, Split]
    db: Path | None
    tools: dict[str, Tau2Tool]
    tools_source: str | None


@dataclass(frozen=True)
class Tau2Options:
    """Where imported cases go.

    Attributes:
        slice: Slice of the cases (default: the domain folder's name).
        split: Split of tasks the split file does not place.
        id_prefix: Prepended to each task id (default: the domain name and ``-``).
    """

    slice: str | None = None
    split: Split = "dev"
    id_prefix: str | None = None


@dataclass
class Tau2Notes:
    """What a task held that casework cannot carry, counted per kind."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, what: str) -> None:
        """Count one task holding ``what``."""
        self.counts[what] = self.counts.get(what, 0) + 1


class _Bad(Exception):
    def __init__(self, pointer: str, message: str, got: Any = None, has_got: bool = False) -> None:
        super().__init__(message)
        self.pointer = pointer
        self.message = message
        self.got = got
        self.has_got = has_got


def _doc_first(doc: str | None) -> str:
    if not doc:
        return ""
    return " ".join(doc.strip().split("\n\n")[0].split())


def _py_type(annotation: ast.expr | None) -> dict[str, Any]:
    if annotation is None:
        return {}
    node = annotation.value if isinstance(annotation, ast.Subscript) else annotation
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)
    if isinstance(name, str) and name in _PY_TYPES:
        return {"type": _PY_TYPES[name]}
    return {}


def _tool_kind(decorators: Sequence[ast.expr]) -> str | None:
    for deco in decorators:
        target = deco.func if isinstance(deco, ast.Call) else deco
        name = target.id if isinstance(target, ast.Name) else getattr(target, "attr", "")
        if name != "is_tool":
            continue
        args = deco.args if isinstance(deco, ast.Call) else []
        if args and isinstance(args[0], ast.Attribute):
            return args[0].attr.lower()
        return "generic"
    return None


def tools_from_python(source: str, shown: str) -> dict[str, Tau2Tool]:
    """Tools of a τ²-bench ``tools.py``, read with :mod:`ast` (the module is never imported).

    A tool is a function or method decorated with ``@is_tool(ToolType.X)``: its name, the first
    paragraph of its docstring, and one parameter per argument but ``self`` (JSON type from a
    ``str`` / ``int`` / ``float`` / ``bool`` / ``list`` / ``dict`` annotation, required unless it
    has a default).

    Raises:
        InputError: The file is not valid Python.
    """
    try:
        tree = ast.parse(source, filename=shown)
    except SyntaxError as exc:
        raise InputError(shown, exc.lineno, None, f"not valid Python: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError):
        raise InputError(shown, None, None, "not valid Python (too deeply nested)") from None
    try:
        return _tools_of(tree)
    except RecursionError:
        raise InputError(shown, None, None, "not valid Python (too deeply nested)") from None


def _tools_of(tree: ast.AST) -> dict[str, Tau2Tool]:
    tools: dict[str, Tau2Tool] = {}
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        kind = _tool_kind(node.decorator_list)
        if kind is None:
            continue
        args = [a for a in node.args.args if a.arg != "self"]
        first_default = len(args) - len(node.args.defaults)
        props = {a.arg: _py_type(a.annotation) for a in args}
        required = [a.arg for i, a in enumerate(args) if i < first_default]
        params: dict[str, Any] = {"type": "object", "properties": props, "required": required}
        decl = {
            "name": node.name,
            "description": _doc_first(ast.get_docstring(node)),
            "parameters": params,
        }
        tools[node.name] = Tau2Tool(decl, kind)
    return tools


def _kind_by_name(name: str) -> str:
    return "read" if name.startswith(_READ_PREFIXES) else "write"


def _tools_from_json(data: Any, shown: str) -> dict[str, Tau2Tool]:
    decls = parse_tool_declarations(data, shown)
    entries = data["tools"] if isinstance(data, dict) else data
    kinds = {
        e.get("name"): e.get("tool_type")
        for e in (x.get("function", x) if isinstance(x, dict) else {} for x in entries)
        if isinstance(e, dict)
    }
    out = {}
    for name, d in decls.items():
        kind = kinds.get(name)
        kind = kind.lower() if isinstance(kind, str) else _kind_by_name(name)
        out[name] = Tau2Tool(
            {"name": name, "description": d.description, "parameters": d.parameters}, kind
        )
    return out


def _splits(data: Any, shown: str) -> dict[str, Split]:
    if not isinstance(data, dict):
        raise InputError(shown, None, None, "a split file is an object of split: [task id]", data)
    out: dict[str, Split] = {}
    problems: list[Problem] = []
    for name, ids in data.items():
        if name == "base" or name not in TAU2_SPLITS:
            continue
        if not isinstance(ids, list):
            problems.append(
                Problem(shown, None, f"/{name}", "must be a list of task ids", ids, True)
            )
            continue
        for i, tid in enumerate(ids):
            key = str(tid)
            split = TAU2_SPLITS[name]
            if key in out and out[key] != split:
                problems.append(
                    Problem(shown, None, f"/{name}/{i}", "task is in two splits", tid, True)
                )
            out[key] = split
    InputErrors.raise_if_any(problems)
    return out


def read_tau2_domain(
    folder: Path, shown: str, split_file: Path | None = None, split_shown: str | None = None
) -> Tau2Domain:
    """Read a τ²-bench domain folder: ``tasks.json``, ``split_tasks.json``, ``db.json``, tools.

    Raises:
        InputError: A missing ``tasks.json``, or a file that is not what it should be.
    """
    tasks_path = folder / "tasks.json"
    tasks_shown = f"{shown}/tasks.json"
    if not folder.is_dir():
        raise InputError(shown, None, None, "not a folder (give the τ²-bench domain folder)")
    if not tasks_path.is_file():
        raise InputError(tasks_shown, None, None, "file not found")
    tasks = load_json(tasks_path.read_bytes(), tasks_shown)
    if not isinstance(tasks, list):
        raise InputError(tasks_shown, None, None, "tasks must be a JSON list", tasks)
    if split_file is None and (folder / "split_tasks.json").is_file():
        split_file, split_shown = folder / "split_tasks.json", f"{shown}/split_tasks.json"
    splits: dict[str, Split] = {}
    if split_file is not None:
        where = split_shown or str(split_file)
        if not split_file.is_file():
            raise InputError(where, None, None, "file not found")
        splits = _splits(load_json(split_file.read_bytes(), where), where)
    tools: dict[str, Tau2Tool] = {}
    source: str | None = None
    if (folder / "tools.json").is_file():
        where = f"{shown}/tools.json"
        tools = _tools_from_json(load_json((folder / "tools.json").read_bytes(), where), where)
        source = "tools.json"
    elif (folder / "tools.py").is_file():
        where = f"{shown}/tools.py"
        text = (folder / "tools.py").read_bytes().decode("utf-8", errors="replace")
        tools, source = tools_from_python(text, where), "tools.py"
    db = folder / "db.json"
    return Tau2Domain(
        folder.name, tasks, tasks_shown, splits, db if db.is_file() else None, tools, source
    )


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _scenario(task: Mapping[str, Any], notes: Tau2Notes) -> dict[str, Any]:
    scen = task.get("user_scenario")
    if not isinstance(scen, Mapping):
        raise _Bad("/user_scenario", "every task needs a user_scenario object", scen, True)
    instr = scen.get("instructions")
    persona = _text(scen.get("persona"))
    if isinstance(instr, str):
        if not instr.strip():
            raise _Bad("/user_scenario/instructions", "instructions must not be empty", instr, True)
        return {"goal": " ".join(instr.split()), "persona": persona, "instructions": instr.strip()}
    if not isinstance(instr, Mapping):
        raise _Bad(
            "/user_scenario/instructions", "must be a string or an object", instr, has_got=True
        )
    reason = _text(instr.get("reason_for_call"))
    if not reason:
        raise _Bad(
            "/user_scenario/instructions/reason_for_call",
            "every task's user needs a reason_for_call",
            instr.get("reason_for_call"),
            True,
        )
    return {
        "goal": " ".join(reason.split()),
        "persona": persona,
        "known_info": _text(instr.get("known_info")),
        "unknown_info": _text(instr.get("unknown_info")),
        "instructions": _text(instr.get("task_instructions")),
    }


def _actions(
    criteria: Mapping[str, Any], tools: Mapping[str, Tau2Tool], notes: Tau2Notes
) -> list[dict[str, Any]]:
    raw = criteria.get("actions") or []
    if not isinstance(raw, list):
        raise _Bad("/evaluation_criteria/actions", "must be a list", raw, True)
    out = []
    for i, action in enumerate(raw):
        at = f"/evaluation_criteria/actions/{i}"
        if not isinstance(action, Mapping) or not isinstance(action.get("name"), str):
            raise _Bad(at, "an action needs a name", action, True)
        args = action.get("arguments") or {}
        if not isinstance(args, Mapping):
            raise _Bad(f"{at}/arguments", "must be an object", args, True)
        if action.get("requestor", "assistant") != "assistant":
            notes.add("actions of the user (requestor user)")
            continue
        if action.get("compare_args") is not None:
            notes.add("actions' compare_args")
        name = action["name"]
        kind = tools[name].kind if name in tools else _kind_by_name(name)
        out.append({"name": name, "arguments": dict(args), "optional": kind in ("read", "think")})
    return out


def _is_transfer(name: str) -> bool:
    return "transfer" in name or "escalat" in name


def _policy_reason(task: Mapping[str, Any]) -> bool:
    desc = task.get("description")
    if isinstance(desc, Mapping):
        if _text(desc.get("relevant_policies")):
            return True
        text = " ".join(_text(desc.get(k)) for k in ("purpose", "notes")).lower()
        return any(w in text for w in _POLICY_WORDS)
    return isinstance(desc, str) and any(w in desc.lower() for w in _POLICY_WORDS)


def _outcome(
    task: Mapping[str, Any], actions: Sequence[Mapping[str, Any]]
) -> tuple[str, list[str]]:
    """The outcome and the further acceptable ones (see docs/interop.md)."""
    transfer = any(_is_transfer(a["name"]) for a in actions)
    writes = [a for a in actions if not a["optional"] and not _is_transfer(a["name"])]
    policy = _policy_reason(task)
    if transfer:
        return "escalate", ["refuse"] if not writes and policy else []
    if not writes and policy:
        return "refuse", ["escalate"]
    return "resolve", []


def _turns(history: Any, notes: Tau2Notes) -> list[dict[str, Any]]:
    if not isinstance(history, list):
        raise _Bad("/initial_state/message_history", "must be a list", history, True)
    turns = []
    for m in history:
        role = m.get("role") if isinstance(m, Mapping) else None
        if role not in ("user", "assistant"):
            notes.add("message_history messages other than user and assistant text")
            continue
        content = m.get("content")
        if m.get("tool_calls"):
            notes.add("message_history tool calls")
        if not isinstance(content, str) or not content.strip():
            continue
        turns.append({"role": role, "content": content})
    return turns


def _patch(update: Any, base: Any, pointer: str = "") -> list[dict[str, Any]]:
    """JSON Patch ops that apply τ²'s deep-update of ``base`` by ``update``."""
    ops: list[dict[str, Any]] = []
    for key, value in update.items():
        path = f"{pointer}/{str(key).replace('~', '~0').replace('/', '~1')}"
        here = base.get(key) if isinstance(base, Mapping) else None
        if isinstance(value, Mapping) and isinstance(here, Mapping):
            ops.extend(_patch(value, here, path))
        else:
            ops.append({"op": "add", "path": path, "value": value})
    return ops


def _initial(task: Mapping[str, Any], db: Any, notes: Tau2Notes) -> tuple[list[Any], list[Any]]:
    init = task.get("initial_state")
    if init is None:
        return [], []
    if not isinstance(init, Mapping):
        raise _Bad("/initial_state", "must be an object or null", init, True)
    data = init.get("initialization_data") or {}
    patch: list[Any] = []
    if isinstance(data, Mapping):
        agent_data = data.get("agent_data")
        if isinstance(agent_data, Mapping):
            patch = _patch(agent_data, db)
        if data.get("user_data"):
            notes.add("initial_state user_data (the user's own device state)")
    if init.get("initialization_actions"):
        notes.add("initial_state initialization_actions")
    return patch, _turns(init.get("message_history") or [], notes)


def _task_id(task: Mapping[str, Any], domain: Tau2Domain, options: Tau2Options) -> str:
    tid = task.get("id")
    if isinstance(tid, bool) or not isinstance(tid, (str, int)):
        raise _Bad("/id", "every task needs an id (a string or an integer)", tid, True)
    prefix = options.id_prefix if options.id_prefix is not None else f"{domain.name}-"
    case_id = prefix + str(tid)
    if (why := name_problem(case_id)) is not None:
        raise _Bad("/id", f"case id '{case_id}' {why}", tid, True)
    return case_id


def _criteria(
    task: Mapping[str, Any], domain: Tau2Domain, notes: Tau2Notes
) -> tuple[list[dict[str, Any]], list[str], list[str]]:
    """Golden actions, facts to communicate and natural-language assertions of a task."""
    criteria = task.get("evaluation_criteria") or {}
    if not isinstance(criteria, Mapping):
        raise _Bad("/evaluation_criteria", "must be an object", criteria, True)
    actions = _actions(criteria, domain.tools, notes)
    facts = criteria.get("communicate_info") or []
    nl = criteria.get("nl_assertions") or []
    for key, value in (("communicate_info", facts), ("nl_assertions", nl)):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _Bad(f"/evaluation_criteria/{key}", "must be a list of strings", value, True)
    if criteria.get("reward_basis"):
        notes.add("evaluation_criteria.reward_basis (casework checks every criterion given)")
    if criteria.get("env_assertions"):
        notes.add("evaluation_criteria.env_assertions")
    return actions, list(facts), list(nl)


def _case(
    task: Any,
    domain: Tau2Domain,
    options: Tau2Options,
    db: Any,
    state_ref: dict[str, str] | None,
    notes: Tau2Notes,
) -> dict[str, Any]:
    if not isinstance(task, Mapping):
        raise _Bad("", "a task must be an object", task, True)
    case_id = _task_id(task, domain, options)
    scenario = _scenario(task, notes)
    actions, facts, nl = _criteria(task, domain, notes)
    patch, turns = _initial(task, db, notes)
    outcome, also = _outcome(task, actions)
    writes = sorted(n for n, t in domain.tools.items() if t.kind == "write")
    wrote = any(not a["optional"] and not _is_transfer(a["name"]) for a in actions)
    forbidden = writes if outcome != "resolve" and not wrote else []
    situation: dict[str, Any] = {
        "goal": scenario["goal"][:199] + ("…" if len(scenario["goal"]) > 199 else ""),
        "user_scenario": scenario,
        "turns": turns,
    }
    if state_ref is not None:
        situation["state_ref"] = state_ref
        situation["state_patch"] = patch
    elif patch:
        situation["state"] = {}
        notes.add("initial_state agent_data without a db.json")
    return {
        "id": case_id,
        "slice": options.slice or domain.name,
        "split": domain.splits.get(str(task["id"]), options.split),
        "source": "hand",
        "situation": situation,
        "label": {
            "outcome": outcome,
            "acceptable_outcomes": also,
            "forbidden_tools": forbidden,
            "matched_facts": [{"text": f, "match": "normalised"} for f in facts],
            "nl_assertions": nl,
            "guideline_version": TAU2_GUIDELINE,
        },
        "oracle": {"class": "state_assertion", "golden_actions": actions}
        if actions
        else {"class": "human"},
    }


def cases_from_tau2(
    domain: Tau2Domain,
    options: Tau2Options,
    db: Any = None,
    state_ref: dict[str, str] | None = None,
) -> tuple[list[Case], Tau2Notes]:
    """Cases of the domain's tasks (pure), with what could not be carried counted.

    Args:
        domain: The domain as read.
        options: Slice, split and id prefix.
        db: The database's content (to turn ``agent_data`` updates into a JSON Patch).
        state_ref: The ``state_ref`` every case names (``None``: no database).

    Raises:
        InputErrors: Tasks that do not map to a valid case (by JSON pointer), or repeated ids.
    """
    notes = Tau2Notes()
    cases: list[Case] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    shown = domain.tasks_file
    for index, task in enumerate(domain.tasks):
        try:
            data = _case(task, domain, options, db, state_ref, notes)
        except _Bad as exc:
            problems.append(
                Problem(shown, None, f"/{index}{exc.pointer}", exc.message, exc.got, exc.has_got)
            )
            continue
        try:
            case = Case.model_validate(data)
        except ValidationError as exc:
            problems.extend(problems_from_validation(exc, shown, None, str(index)))
            continue
        if case.id in seen:
            problems.append(Problem(shown, None, f"/{index}/id", "task id repeats", case.id, True))
        seen.add(case.id)
        cases.append(case)
    if not problems and not cases:
        problems.append(Problem(shown, None, None, "no tasks"))
    InputErrors.raise_if_any(problems)
    return cases, notes


@dataclass(frozen=True)
class Tau2ImportReport:
    """What `casework import tau2` did.

    Attributes:
        dataset: The dataset.
        slice: The slice the domain's cases make up (replaced as a whole).
        imported: Ids of the cases.
        state: The database copied into the project (``None``: the domain has none).
        tools: The tools file written (``None``: the domain declares no tools).
        tools_source: Where the tools were read (``tools.json``, ``tools.py``).
        not_carried: What the tasks held that casework cannot carry, per kind.
        version: The release (``None``: content unchanged).
    """

    dataset: str
    slice: str
    imported: list[str]
    state: str | None
    tools: str | None
    tools_source: str | None
    not_carried: dict[str, int]
    version: VersionRecord | None


def _copy_in(project: Project, data: bytes, rel: str) -> dict[str, str]:
    target = project.path(rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    if not target.is_file() or target.read_bytes() != data:
        atomic_write_bytes(target, data)
    return {"path": rel, "sha256": hashlib.sha256(data).hexdigest()}


def import_tau2(
    project: Project,
    folder: Path,
    dataset: str,
    options: Tau2Options,
    split_file: Path | None = None,
    message: str | None = None,
) -> Tau2ImportReport:
    """Import a τ²-bench domain folder's tasks as the slice of ``dataset`` and release a version.

    The database is copied to ``states/<dataset>/<slice>.db.json`` and the tools to
    ``catalogues/<dataset>/<slice>.tools.json`` (each case names both, pinned by sha256). The
    slice's cases are replaced as a whole, so importing a later revision of the task file
    releases a version whose diff is exactly the changed, added and removed tasks.

    Raises:
        UsageError: A bad dataset, slice or id prefix.
        InputErrors: Bad files or tasks (all of them, located); nothing is written.
    """
    check_name(dataset, "dataset")
    shown = project.relative(folder)
    domain = read_tau2_domain(
        folder, shown, split_file, project.relative(split_file) if split_file else None
    )
    slice_ = options.slice or domain.name
    if name_problem(slice_) is not None:
        raise UsageError(f"slice '{slice_}': {name_problem(slice_)} (give --slice)", param="slice")
    options = Tau2Options(slice_, options.split, options.id_prefix)
    db_bytes = domain.db.read_bytes() if domain.db else None
    db = load_json(db_bytes, f"{shown}/db.json") if db_bytes is not None else None
    if db is not None and not isinstance(db, dict):
        raise InputError(f"{shown}/db.json", None, None, "the database must be a JSON object")
    probe_ref = {"path": "states/x.json", "sha256": "0" * 64} if db is not None else None
    cases, notes = cases_from_tau2(domain, options, db, probe_ref)
    with dataset_lock(project, dataset):
        kept = _other_slices(project, dataset, slice_, cases, domain.tasks_file)
        state_ref = (
            _copy_in(project, db_bytes, f"states/{dataset}/{slice_}.db.json")
            if db_bytes is not None
            else None
        )
        tools_rel = f"catalogues/{dataset}/{slice_}.tools.json" if domain.tools else None
        pin = None
        if tools_rel is not None:
            decls = [t.declaration for t in domain.tools.values()]
            body = (json.dumps(decls, indent=2, ensure_ascii=False) + "\n").encode()
            pin = _copy_in(project, body, tools_rel)
        cases = [_with(c, state_ref, pin) for c in cases]
        version = release_cases(
            project,
            dataset,
            [*kept, *cases],
            message or f"import tau2: {len(cases)} task(s) of {shown}",
        )
    return Tau2ImportReport(
        dataset,
        slice_,
        [c.id for c in cases],
        state_ref["path"] if state_ref else None,
        tools_rel,
        domain.tools_source,
        dict(sorted(notes.counts.items())),
        version,
    )


def _other_slices(
    project: Project, dataset: str, slice_: str, cases: Sequence[Case], shown: str
) -> list[Case]:
    """The dataset's cases outside ``slice_`` (kept); an id shared with them is an error."""
    existing = (
        list(load_dataset(project, dataset).cases)
        if (project.dataset_dir(dataset) / CASES_FILE).exists()
        else []
    )
    kept = [c for c in existing if c.slice != slice_]
    clash = {c.id for c in kept} & {c.id for c in cases}
    InputErrors.raise_if_any(
        Problem(shown, None, "id", "case id is in another slice of the dataset", i, True)
        for i in sorted(clash)
    )
    return kept


def _with(case: Case, state_ref: dict[str, str] | None, tools: dict[str, str] | None) -> Case:
    if state_ref is None and tools is None:
        return case
    situation = case.situation.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    if state_ref is not None:
        situation["state_ref"] = state_ref
    if tools is not None:
        situation["tools_file"] = tools["path"]
        situation["tools_sha256"] = tools["sha256"]
    data = case.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    data["situation"] = situation
    return Case.model_validate(data)
