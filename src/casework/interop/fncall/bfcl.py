"""BFCL v4 as published (the `bfcl-eval` wheel's ``BFCL_v4_*.json`` with ``possible_answer/``).

A row's category comes from its id (``live_simple_3-2-0`` → ``live_simple``). Single-turn
categories become gradable cases scored as BFCL's AST checker scores them: each acceptable-value
list is an ``any_of`` matcher comparing as BFCL does (``strings = "bfcl"``; ``""`` among the
values of a parameter the function does not require: it may be left out), and the calls must be
exactly the expected ones (``grader:exact_calls``). ``irrelevance`` and ``live_irrelevance``
expect no call at all; ``live_relevance`` expects a call, whichever (``grader:any_call``).
Java and JavaScript categories (``simple_java``, ``simple_javascript``) are offered as BFCL offers
them, every parameter as text with its declared type in the description, and each argument is
read as its declared type before it is compared (``strings = "bfcl-java"`` / ``"bfcl-js"``).
Multi-turn categories are imported with their per-turn ground truth in a reference document, and
are not gradable: BFCL scores them by executing the calls on its own Python classes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from casework.grading.bfcl_values import SourceLanguage, SourceTypeError, split_source_type
from casework.grading.graders import ESCALATION_TOOL
from casework.interop.generic._cases import RowProblem

#: Categories whose rows expect no call (a refusal): BFCL passes them when nothing decodes.
NO_CALL_CATEGORIES = ("irrelevance", "live_irrelevance")
#: Categories whose rows expect a call, whichever: BFCL passes any output that decodes to calls.
ANY_CALL_CATEGORIES = ("live_relevance",)
#: BFCL v4's agentic categories: their rows run against live backends (search, memory stores).
AGENTIC_CATEGORIES = ("web_search", "memory")
#: BFCL's executable classes and the file of their declarations under ``multi_turn_func_doc/``.
MULTI_TURN_DOC_FILES: Mapping[str, str] = {
    "GorillaFileSystem": "gorilla_file_system.json",
    "MathAPI": "math_api.json",
    "MessageAPI": "message_api.json",
    "TwitterAPI": "posting_api.json",
    "TicketAPI": "ticket_api.json",
    "TradingBot": "trading_bot.json",
    "TravelAPI": "travel_booking.json",
    "VehicleControlAPI": "vehicle_control.json",
    "WebSearchAPI": "web_search.json",
    "MemoryAPI_kv": "memory_kv.json",
    "MemoryAPI_vector": "memory_vector.json",
    "MemoryAPI_rec_sum": "memory_rec_sum.json",
}
#: What of BFCL's scoring a multi-turn case loses, as its oracle, reference document and the
#: import say.
MULTI_TURN_LOST = (
    "BFCL's multi-turn scoring is lost: BFCL runs the calls on its own Python classes "
    "(initial_config) and compares their state and replies turn by turn, which casework cannot "
    "carry; the per-turn ground truth is kept for people in the reference document"
)
_EXACT = "grader:casework.grading.call_set:exact_calls"
_ANY = "grader:casework.grading.call_set:any_call"
_Bad = RowProblem


def bfcl_category(raw_id: str) -> str:
    """The category of a BFCL id: ``simple_python_12`` → ``simple_python``."""
    return re.sub(r"_[0-9][0-9-]*(?:-[A-Za-z_]+-[0-9]+)?$", "", raw_id)


def is_multi_turn(category: str) -> bool:
    """Whether a category is one of BFCL's multi-turn ones (``multi_turn_base``…)."""
    return category.startswith("multi_turn")


def _matcher(values: Any, where: str, required: bool, declared: Any) -> dict[str, Any]:
    """BFCL's acceptable values as an ``any_of`` matcher.

    ``""`` marks a parameter that may be left out (unless the function requires it); it stays
    an acceptable value only for a string parameter, where BFCL's checker accepts it given.
    A list with no other value is carried as published: nothing but what BFCL accepts passes.
    """
    if not isinstance(values, list):
        raise _Bad(where, "acceptable values must be a list", values)
    kept = values
    if not (isinstance(declared, Mapping) and declared.get("type") == "string"):
        kept = [v for v in values if v != ""]
    kind = declared.get("type") if isinstance(declared, Mapping) else None
    strings = "bfcl"
    if kind not in (None, "string", "any", "array", "tuple", "dict") and any(
        isinstance(v, str) for v in kept
    ):
        # A string answer for a parameter declared otherwise is what BFCL calls a variable:
        # its checker compares it as written, without its string normalisation.
        strings = "exact"
    out: dict[str, Any] = {"match": "any_of", "value": kept, "strings": strings}
    if "" in values and not required:
        out["optional"] = True
    return out


def source_language(category: str) -> SourceLanguage | None:
    """The language whose source text a category's arguments are (``simple_java`` → ``java``)."""
    if category.endswith("javascript"):
        return "js"
    if category.endswith("java"):
        return "java"
    return None


def _declared_type(declared: Any) -> str | None:
    if not isinstance(declared, Mapping) or not isinstance(declared.get("type"), str):
        return None
    items = declared.get("items")
    item = items.get("type") if isinstance(items, Mapping) else None
    return f"{declared['type']}<{item}>" if isinstance(item, str) else str(declared["type"])


def as_offered(functions: Any, language: SourceLanguage) -> Any:
    """Java or JavaScript declarations as BFCL offers them: every parameter is source text.

    Each parameter becomes a string whose description names its declared type (and a list's
    item type); anything that is not a declaration is returned as it is, for the reader to
    report.
    """
    if not isinstance(functions, list):
        return functions
    name = "Java" if language == "java" else "JavaScript"
    out: list[Any] = []
    for f in functions:
        params = f.get("parameters") if isinstance(f, Mapping) else None
        props = params.get("properties") if isinstance(params, Mapping) else None
        if not isinstance(params, Mapping) or not isinstance(props, Mapping):
            out.append(f)
            continue
        shown = {}
        for key, p in props.items():
            kind = _declared_type(p)
            if kind is None or not isinstance(p, Mapping):
                shown[key] = p
                continue
            text = f"{name} source text of a value of type {kind}"
            if p.get("type") == "any":
                text = f"{name} source text of a value of any type"
            about = str(p.get("description") or "").rstrip()
            shown[key] = {"type": "string", "description": f"{about} ({text}.)".lstrip()}
        out.append({**f, "parameters": {**params, "properties": shown}})
    return out


def _source_matcher(
    values: list[Any], where: str, required: bool, declared: Any, language: SourceLanguage
) -> dict[str, Any]:
    """A Java/JavaScript parameter's matcher: every acceptable value as published (``""`` too)."""
    kind = _declared_type(declared)
    if kind is None:
        raise _Bad(where, "the parameter needs its declared type (a type name)", declared)
    try:
        split_source_type(language, kind)
    except SourceTypeError as exc:
        raise _Bad(where, str(exc), kind) from None
    strings = "bfcl-java" if language == "java" else "bfcl-js"
    out: dict[str, Any] = {
        "match": "any_of",
        "value": values,
        "strings": strings,
        "source_type": kind,
    }
    if "" in values and not required:
        out["optional"] = True
    return out


def _expected_call(
    item: Any, where: str, offered: Mapping[str, Any], language: SourceLanguage | None = None
) -> dict[str, Any]:
    if not isinstance(item, Mapping) or len(item) != 1:
        raise _Bad(where, "an expected call is {name: {parameter: [acceptable values]}}", item)
    name, args = next(iter(item.items()))
    if not isinstance(args, Mapping):
        raise _Bad(f"{where}.{name}", "parameters must be an object", args)
    decl = offered.get(name)
    if decl is None:
        raise _Bad(where, "expected call names a tool the row does not offer", name)
    declared = f"function {name}: parameters"
    params = decl.get("parameters") or {}
    if not isinstance(params, Mapping):
        raise _Bad(declared, "must be an object", params)
    required = params.get("required") or []
    if not isinstance(required, list):
        raise _Bad(f"{declared}.required", "must be a list of parameter names", required)
    props = params.get("properties") or {}
    if not isinstance(props, Mapping):
        raise _Bad(f"{declared}.properties", "must be an object", props)
    arguments: dict[str, dict[str, Any]] = {}
    for k, v in args.items():
        at = f"{where}.{name}.{k}"
        if k not in props:
            # BFCL's checker refuses a parameter the function does not declare, even one its
            # answer lists (live_multiple_862-181-3): never given, and left out only where ""
            # marks it optional.
            arguments[k] = {"match": "any_of", "value": []}
            if isinstance(v, list) and "" in v:
                arguments[k]["optional"] = True
        elif language is None:
            arguments[k] = _matcher(v, at, k in required, props.get(k))
        elif not isinstance(v, list):
            raise _Bad(at, "acceptable values must be a list", v)
        else:
            arguments[k] = _source_matcher(v, at, k in required, props.get(k), language)
    return {"name": name, "arguments": arguments}


def bfcl_label(
    category: str, raw: Any, at: str, offered: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A single-turn row's label and oracle from its possible answer (``raw``).

    ``offered`` holds the declarations by name, as published (Java and JavaScript types read
    from them).

    Raises:
        RowProblem: The possible answer is missing or malformed, or names a tool not offered.
    """
    names = sorted(offered)
    if category in NO_CALL_CATEGORIES:
        refuse: dict[str, Any] = {"outcome": "refuse", "forbidden_tools": names}
        return refuse, {"ref": _EXACT}
    if category in ANY_CALL_CATEGORIES:
        return {"outcome": "resolve"}, {"ref": _ANY}
    if not isinstance(raw, list) or not raw:
        raise _Bad(at, "a BFCL row needs its possible answer (join it with answers=)", raw)
    language = source_language(category)
    calls = [_expected_call(item, f"{at}.{i}", offered, language) for i, item in enumerate(raw)]
    expected = {c["name"] for c in calls}
    label: dict[str, Any] = {
        "outcome": "resolve",
        "required_tools": calls,
        "forbidden_tools": [n for n in names if n not in expected],
    }
    if any(ESCALATION_TOOL.search(n) for n in expected):
        # BFCL scores the call only; casework reads a call to a hand-off tool as escalating.
        label["acceptable_outcomes"] = ["escalate"]
    return label, {"ref": _EXACT}


@dataclass(frozen=True)
class MultiTurn:
    """A multi-turn row read: what the agent is offered first, and the reference document.

    Attributes:
        first_turn: The messages of the first turn.
        tools: Declarations offered at the first turn (involved classes, less the excluded and
            the held-back functions).
        document: The reference document's bytes (per-turn questions and ground truth,
            initial configuration, why it is not gradable).
    """

    first_turn: Any
    tools: list[dict[str, Any]]
    document: bytes


def multi_turn(
    row: Mapping[str, Any], category: str, docs: Mapping[str, list[dict[str, Any]]]
) -> MultiTurn:
    """A multi-turn row with its first turn, first offered tools and reference document.

    Raises:
        RowProblem: Missing turns, classes without declarations, or no ground truth.
    """
    turns = row.get("question")
    if not isinstance(turns, list) or not turns or not isinstance(turns[0], list):
        raise _Bad("question", "a multi-turn row needs a list of turns", turns)
    classes = row.get("involved_classes")
    if not isinstance(classes, list) or not all(isinstance(c, str) for c in classes):
        raise _Bad("involved_classes", "must be a list of class names", classes)
    unknown = [c for c in classes if c not in docs]
    if unknown:
        raise _Bad(
            "involved_classes", "no declarations for these classes (multi_turn_func_doc)", unknown
        )
    truth = row.get("ground_truth")
    if not isinstance(truth, list) or len(truth) != len(turns):
        raise _Bad("ground_truth", "needs one list of calls per turn (join answers=)", truth)
    excluded = set(row.get("excluded_function") or [])
    missed = row.get("missed_function") or {}
    held = {f for fs in missed.values() if isinstance(fs, list) for f in fs}
    tools = [
        d
        for c in classes
        for d in docs[c]
        if d.get("name") not in excluded and d.get("name") not in held
    ]
    document = {
        "benchmark": "BFCL v4",
        "id": row.get("id"),
        "category": category,
        "not_gradable": MULTI_TURN_LOST,
        "question": turns,
        "ground_truth": truth,
        "involved_classes": classes,
        "excluded_function": sorted(excluded),
        "missed_function": missed,
        "initial_config": row.get("initial_config"),
    }
    body = (json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()
    return MultiTurn(turns[0], tools, body)


def reference_path(dataset: str, body: bytes) -> str:
    """Where a multi-turn row's reference document goes in the project (content-addressed)."""
    return f"catalogues/{dataset}/bfcl-{hashlib.sha256(body).hexdigest()[:16]}.json"
