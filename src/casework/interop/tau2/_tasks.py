"""τ²-bench tasks to cases (pure): scenario, label, golden actions and τ²'s own scoring.

Entry point: :func:`cases_from_tau2`. Ids the name rule refuses (telecom's brackets, ``|``,
colons, over 200 characters) become safe ids, the original kept as ``provenance.original_id``;
what τ² scores with (reward basis, criteria, initial state) is carried as ``oracle.tau2``, and
a part of the reward basis casework cannot score is named per task, the case not gradable.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, get_args

from pydantic import ValidationError

from casework.dataset.jsonl import problems_from_validation
from casework.errors import InputErrors, Problem
from casework.interop.tau2._tools import Tau2Tool, kind_by_name
from casework.names import name_problem
from casework.schema._base import Split
from casework.schema._records import Case, Tau2RewardPart

#: Guideline version written on imported labels.
TAU2_GUIDELINE = "tau2-import"
#: τ²'s reward basis when a task names none (its `EvaluationCriteria` default).
DEFAULT_REWARD_BASIS: tuple[Tau2RewardPart, ...] = ("DB", "COMMUNICATE")
_PARTS = frozenset(get_args(Tau2RewardPart))
_POLICY_WORDS = ("policy", "not allowed", "refuse", "deny", "should not", "cannot", "must not")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_DASHES = re.compile(r"-{2,}")
_ID_MAX = 200


@dataclass(frozen=True)
class Tau2Domain:
    """A τ²-bench domain as read.

    Attributes:
        name: The folder's name (the default slice and id prefix).
        tasks: The tasks (``tasks.json``).
        tasks_file: The tasks file, as shown in messages.
        splits: Task id to casework split, from the split file.
        db: The database's content and its bytes as JSON (``db.json``, or telecom's
            ``db.toml``), or ``None``.
        tools: The domain's tools, by name.
        tools_source: Where the tools were read (``tau2.domains.airline.tools``, a file), or
            ``None`` (no tools found).
        user_tools: The simulated user's own tools (telecom's device), by name.
        evaluator: The τ² domain whose environment scores the tasks (``None``: τ²'s evaluator
            does not know this domain, so what only it can score is lost).
    """

    name: str
    tasks: list[Any]
    tasks_file: str
    splits: dict[str, Split]
    db: Any
    tools: dict[str, Tau2Tool]
    tools_source: str | None
    user_tools: dict[str, Tau2Tool] = field(default_factory=dict)
    evaluator: str | None = None


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
    """What the tasks held that casework's own checks do not use, counted per kind.

    ``lost`` names, per task (by original id), the parts of the reward basis nothing scores.
    """

    counts: dict[str, int] = field(default_factory=dict)
    lost: dict[str, list[str]] = field(default_factory=dict)
    _task: set[str] = field(default_factory=set)

    def add(self, what: str) -> None:
        """Note that the task being read holds ``what`` (counted once per task)."""
        self._task.add(what)

    def end_task(self) -> None:
        """Count the task just read once for each kind it held."""
        for what in self._task:
            self.counts[what] = self.counts.get(what, 0) + 1
        self._task.clear()


class _Bad(Exception):
    def __init__(self, pointer: str, message: str, got: Any = None, has_got: bool = False) -> None:
        super().__init__(message)
        self.pointer = pointer
        self.message = message
        self.got = got
        self.has_got = has_got


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
            continue  # the user's own actions: τ²'s evaluator replays them (oracle.tau2)
        if action.get("compare_args") is not None:
            notes.add("actions' compare_args (casework's golden replay compares whole states)")
        name = action["name"]
        kind = tools[name].kind if name in tools else kind_by_name(name)
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
            notes.add("message_history messages other than user and assistant text (not shown)")
            continue
        content = m.get("content")
        if m.get("tool_calls"):
            notes.add("message_history tool calls (not shown to the agent)")
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
    return patch, _turns(init.get("message_history") or [], notes)


def _raw_id(task: Mapping[str, Any]) -> str:
    tid = task.get("id")
    if isinstance(tid, bool) or not isinstance(tid, (str, int)):
        raise _Bad("/id", "every task needs an id (a string or an integer)", tid, True)
    return str(tid)


def safe_id(prefix: str, original: str) -> str:
    """The case id of task ``original``: ``prefix + original`` when the name rule takes it.

    Otherwise every run of other characters becomes ``-``, the text is cut to fit, and 10 hex
    of the original's sha256 are appended, so two originals never meet on one id.
    """
    wanted = prefix + original
    if name_problem(wanted) is None:
        return wanted
    digest = hashlib.sha256(original.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    text = (
        _DASHES.sub("-", _UNSAFE.sub("-", wanted))
        .strip("-._")[: _ID_MAX - len(digest) - 1]
        .rstrip("-._")
    )
    return f"{text}-{digest}" if text else digest


def _reward_basis(criteria: Mapping[str, Any]) -> list[Tau2RewardPart]:
    raw = criteria.get("reward_basis")
    if raw is None:
        return list(DEFAULT_REWARD_BASIS)
    if not isinstance(raw, list) or not raw:
        raise _Bad("/evaluation_criteria/reward_basis", "must be a non-empty list", raw, True)
    for i, part in enumerate(raw):
        if not isinstance(part, str) or part not in _PARTS:  # a list here is unhashable
            why = f"must be one of {', '.join(sorted(_PARTS))}"
            raise _Bad(f"/evaluation_criteria/reward_basis/{i}", why, part, True)
    return list(dict.fromkeys(raw))


def _lost(
    basis: Sequence[str], criteria: Mapping[str, Any], init: Any, domain: Tau2Domain
) -> list[str]:
    """The parts of ``basis`` nothing can score for this task (empty: all of it is carried).

    With a domain τ²'s evaluator knows, it scores every part from ``oracle.tau2`` as published
    (NL assertions go to casework's judge through ``label.nl_assertions``). Without it, only
    casework's own checks remain: the database by golden replay of the agent's actions (lost
    when the user acts, or initialization actions or the user's data set the state up), and
    communicate_info by matched facts.
    """
    if domain.evaluator is not None:
        return []
    actions = criteria.get("actions") or []
    by_user = any(
        isinstance(a, Mapping) and a.get("requestor", "assistant") != "assistant" for a in actions
    )
    data = init.get("initialization_data") if isinstance(init, Mapping) else None
    set_up = isinstance(init, Mapping) and bool(init.get("initialization_actions"))
    set_up = set_up or (isinstance(data, Mapping) and bool(data.get("user_data")))
    lost = []
    for part in basis:
        if part in ("ENV_ASSERTION", "ACTION") or (part == "DB" and (by_user or set_up)):
            lost.append(part)
    return lost


def _scoring(
    task: Mapping[str, Any],
    criteria: Mapping[str, Any],
    domain: Tau2Domain,
    user_tools: dict[str, str] | None,
    notes: Tau2Notes,
) -> dict[str, Any]:
    basis = _reward_basis(criteria)
    init = task.get("initial_state")
    lost = _lost(basis, criteria, init, domain)
    if lost:
        notes.lost[_raw_id(task)] = lost
    return {
        "domain": domain.evaluator,
        "reward_basis": basis,
        "evaluation_criteria": dict(criteria),
        "initial_state": dict(init) if isinstance(init, Mapping) else None,
        "user_tools": user_tools,
        "lost": lost,
    }


def _criteria(
    task: Mapping[str, Any], domain: Tau2Domain, notes: Tau2Notes
) -> tuple[Mapping[str, Any], list[dict[str, Any]], list[str], list[str]]:
    """Criteria, golden actions, facts to communicate and natural-language assertions."""
    criteria = task.get("evaluation_criteria") or {}
    if not isinstance(criteria, Mapping):
        raise _Bad("/evaluation_criteria", "must be an object", criteria, True)
    actions = _actions(criteria, domain.tools, notes)
    facts = criteria.get("communicate_info") or []
    nl = criteria.get("nl_assertions") or []
    for key, value in (("communicate_info", facts), ("nl_assertions", nl)):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _Bad(f"/evaluation_criteria/{key}", "must be a list of strings", value, True)
    assertions = criteria.get("env_assertions") or []
    if not isinstance(assertions, list) or not all(isinstance(a, Mapping) for a in assertions):
        raise _Bad(
            "/evaluation_criteria/env_assertions", "must be a list of objects", assertions, True
        )
    return criteria, actions, list(facts), list(nl)


@dataclass(frozen=True)
class _Where:
    """Where the cases of one import point: ids, state and catalogues."""

    prefix: str
    slice: str
    split: Split
    db: Any
    state_ref: dict[str, str] | None
    user_tools: dict[str, str] | None


def _case(
    task: Any, case_id: str, domain: Tau2Domain, where: _Where, notes: Tau2Notes
) -> dict[str, Any]:
    if not isinstance(task, Mapping):
        raise _Bad("", "a task must be an object", task, True)
    scenario = _scenario(task, notes)
    criteria, actions, facts, nl = _criteria(task, domain, notes)
    patch, turns = _initial(task, where.db, notes)
    scoring = _scoring(task, criteria, domain, where.user_tools, notes)
    outcome, also = _outcome(task, actions)
    writes = sorted(n for n, t in domain.tools.items() if t.kind == "write")
    wrote = any(not a["optional"] and not _is_transfer(a["name"]) for a in actions)
    forbidden = writes if outcome != "resolve" and not wrote else []
    situation: dict[str, Any] = {
        "goal": scenario["goal"][:199] + ("…" if len(scenario["goal"]) > 199 else ""),
        "user_scenario": scenario,
        "turns": turns,
    }
    if where.state_ref is not None:
        situation["state_ref"] = where.state_ref
        situation["state_patch"] = patch
    elif patch:
        situation["state"] = {}
        notes.add("initial_state agent_data without a database")
    return {
        "id": case_id,
        "slice": where.slice,
        "split": domain.splits.get(_raw_id(task), where.split),
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
        "oracle": {"class": "state_assertion", "golden_actions": actions, "tau2": scoring},
        "provenance": {"original_id": _raw_id(task)},
    }


def cases_from_tau2(
    domain: Tau2Domain,
    options: Tau2Options,
    db: Any = None,
    state_ref: dict[str, str] | None = None,
    user_tools: dict[str, str] | None = None,
) -> tuple[list[Case], Tau2Notes]:
    """Cases of the domain's tasks (pure), with what casework's own checks leave out counted.

    Args:
        domain: The domain as read.
        options: Slice, split and id prefix.
        db: The database's content (to turn ``agent_data`` updates into a JSON Patch).
        state_ref: The ``state_ref`` every case names (``None``: no database).
        user_tools: The pinned catalogue of the user's own tools (``{path, sha256}``), if any.

    Raises:
        InputErrors: Tasks that do not map to a valid case (by JSON pointer), or repeated ids.
    """
    notes = Tau2Notes()
    prefix = options.id_prefix if options.id_prefix is not None else f"{domain.name}-"
    where = _Where(prefix, options.slice or domain.name, options.split, db, state_ref, user_tools)
    cases: list[Case] = []
    problems: list[Problem] = []
    seen: dict[str, str] = {}
    shown = domain.tasks_file
    for index, task in enumerate(domain.tasks):
        try:
            original = _raw_id(task) if isinstance(task, Mapping) else ""
            case_id = safe_id(prefix, original)
            data = _case(task, case_id, domain, where, notes)
            notes.end_task()
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
            why = "task id repeats" if seen[case.id] == original else "two task ids meet on one id"
            problems.append(Problem(shown, None, f"/{index}/id", why, original, True))
        seen[case.id] = original
        cases.append(case)
    if not problems and not cases:
        problems.append(Problem(shown, None, None, "no tasks"))
    InputErrors.raise_if_any(problems)
    return cases, notes
