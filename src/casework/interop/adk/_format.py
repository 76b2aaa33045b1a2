"""Google ADK's evaluation file formats, read into plain eval cases (no casework semantics).

Three shapes: an EvalSet (snake_case or camelCase keys), the legacy list of {query,
expected_tool_use, reference} and the older list of {name, data}. Entry points:
:func:`read_adk_file`, :func:`parse_adk`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from pydantic.alias_generators import to_camel

from casework.dataset.jsonl import problems_from_validation
from casework.decoding import load_json
from casework.errors import InputError, InputErrors, Problem
from casework.schema import ToolRequirement

__all__ = [
    "AdkEvalCase",
    "AdkFile",
    "AdkFormat",
    "AdkInvocation",
    "AdkScenario",
    "AdkToolUse",
    "parse_adk",
    "read_adk_file",
]

AdkFormat = Literal["eval_set", "query_list", "named_list"]
"""`eval_set`: an EvalSet object; `query_list`: the legacy list of {query, expected_tool_use,
reference} (one eval case per file); `named_list`: the older list of {name, data}."""

_SHAPES = (
    "expected an EvalSet object (eval_set_id, eval_cases), a list of "
    "{query, expected_tool_use, reference} or a list of {name, data}"
)

# ---------------------------------------------------------------------------------------------
# ADK's models, as far as casework reads them. ADK's EvalBaseModel takes snake_case names and
# their camelCase aliases; errors are located by the snake_case name ADK itself writes.


class _Adk(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="ignore", loc_by_alias=False
    )


class _FunctionCall(_Adk):
    id: str | None = None
    name: str
    args: dict[str, Any] | None = None


class _FunctionResponse(_Adk):
    id: str | None = None
    name: str | None = None
    response: dict[str, Any] | None = None


class _Part(_Adk):
    text: str | None = None
    thought: bool | None = None
    function_call: _FunctionCall | None = None
    function_response: _FunctionResponse | None = None


class _Content(_Adk):
    parts: list[_Part] | None = None
    role: str | None = None


class _InvocationEvent(_Adk):
    author: str = ""
    content: _Content | None = None


class _IntermediateData(_Adk):
    """ADK's IntermediateData and InvocationEvents (its other intermediate_data form) in one."""

    tool_uses: list[_FunctionCall] = Field(default_factory=list)
    tool_responses: list[_FunctionResponse] = Field(default_factory=list)
    intermediate_responses: list[Any] = Field(default_factory=list)
    invocation_events: list[_InvocationEvent] = Field(default_factory=list)


class _Invocation(_Adk):
    invocation_id: str = ""
    user_content: _Content
    final_response: _Content | None = None
    intermediate_data: _IntermediateData | None = None


class _SessionInput(_Adk):
    app_name: str = ""
    user_id: str = ""
    state: dict[str, Any] = Field(default_factory=dict)


class _Persona(_Adk):
    id: str = ""
    description: str = ""


class _Scenario(_Adk):
    """ADK's ConversationScenario (google/adk/evaluation/conversation_scenarios.py)."""

    starting_prompt: str
    conversation_plan: str
    user_persona: _Persona | str | None = None


class _EvalCase(_Adk):
    eval_id: str
    conversation: list[_Invocation] | None = None
    conversation_scenario: _Scenario | None = None
    session_input: _SessionInput | None = None
    rubrics: list[Any] | None = None
    final_session_state: dict[str, Any] | None = None


class _EvalSet(_Adk):
    eval_set_id: str
    name: str | None = None
    description: str | None = None
    eval_cases: list[_EvalCase]


class _Legacy(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _LegacyToolUse(_Legacy):
    tool_name: str
    tool_input: dict[str, Any]


class _LegacyTurn(_Legacy):
    query: str
    expected_tool_use: list[_LegacyToolUse] = Field(default_factory=list)
    reference: str = ""


class _LegacySession(_Legacy):
    state: dict[str, Any] = Field(default_factory=dict)


class _LegacyNamed(_Legacy):
    name: str
    data: list[_LegacyTurn]
    initial_session: _LegacySession | None = None
    initial_state: Any = None


_EVAL_SET = TypeAdapter(_EvalSet)
_QUERY_LIST = TypeAdapter(list[_LegacyTurn])
_NAMED_LIST = TypeAdapter(list[_LegacyNamed])

# ---------------------------------------------------------------------------------------------
# What an ADK file says, in casework's terms


@dataclass(frozen=True)
class AdkToolUse:
    """One expected tool call of an invocation (an ADK FunctionCall, with its response if any)."""

    name: str
    args: dict[str, Any]
    id: str | None = None
    result: Any = None
    error: str | None = None


@dataclass(frozen=True)
class AdkInvocation:
    """One user message and what the agent is expected to do with it."""

    user_text: str
    tool_uses: tuple[AdkToolUse, ...]
    final_response: str | None
    intermediate_responses: tuple[tuple[str, str], ...] = ()
    """Sub-agents' text replies before the final response, as ``(author, text)``."""


@dataclass(frozen=True)
class AdkScenario:
    """ADK's ConversationScenario: a simulated user opens with a fixed prompt and follows a plan."""

    starting_prompt: str
    conversation_plan: str
    persona: str = ""
    """The persona's description (or the id of one of ADK's registered personas)."""


@dataclass(frozen=True)
class AdkEvalCase:
    """One ADK eval case: a conversation of invocations (or a scenario) and the session state."""

    eval_id: str
    invocations: tuple[AdkInvocation, ...]
    state: dict[str, Any]
    id_field: str | None
    """Where the eval id sits in the file (`eval_cases.0.eval_id`), for messages; ``None`` when
    ADK names the eval case after the file (the legacy query list)."""
    scenario: AdkScenario | None = None
    """The conversation scenario of an eval case with no conversation (``invocations`` empty)."""
    final_state: dict[str, Any] | None = None
    """ADK's ``final_session_state``: the session state expected when the conversation ends."""


@dataclass(frozen=True)
class AdkFile:
    """The eval cases of one ADK file."""

    path: str
    format: AdkFormat
    cases: tuple[AdkEvalCase, ...]
    eval_set_id: str | None = None
    notes: tuple[str, ...] = ()
    """What the file holds that casework does not import (rubrics, final session state...)."""


def read_adk_file(path: Path, shown: str | None = None) -> AdkFile:
    """Read one ADK eval file (any of the three shapes).

    Args:
        path: The file.
        shown: How to name the file in messages (default: ``path`` as given).

    Raises:
        InputErrors: The file is missing, not JSON, or not an ADK eval file (every problem listed).
    """
    name = shown or str(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(name, None, None, "file not found") from None
    data = load_json(raw, name)
    return parse_adk(data, shown=name, file_name=path.name)


def parse_adk(data: Any, *, shown: str, file_name: str = "") -> AdkFile:
    """Recognise the shape of parsed ADK JSON and read its eval cases.

    Args:
        data: The parsed JSON.
        shown: File name for messages.
        file_name: Name of the file: ADK names the single eval case of a legacy query list after
            it.

    Raises:
        InputErrors: Unknown shape, missing or malformed fields (every problem listed).
    """
    if isinstance(data, dict):
        if not {"eval_cases", "evalCases", "eval_set_id", "evalSetId"} & set(data):
            raise InputError(shown, None, None, f"not an ADK eval file: {_SHAPES}", sorted(data))
        return _eval_set(data, shown)
    if not isinstance(data, list):
        raise InputError(shown, None, None, f"not an ADK eval file: {_SHAPES}", data)
    if not data:
        raise InputError(shown, None, None, "holds no eval cases")
    first = data[0]
    if isinstance(first, dict) and "query" in first:
        return _query_list(data, shown, file_name or shown)
    if isinstance(first, dict) and ("data" in first or "name" in first):
        return _named_list(data, shown)
    got = sorted(first) if isinstance(first, dict) else first
    raise InputError(shown, None, "0", f"not an ADK eval file: {_SHAPES}", got)


def _validate(adapter: Any, data: Any, shown: str) -> Any:
    try:
        return adapter.validate_python(data)
    except ValidationError as exc:
        raise InputErrors(problems_from_validation(exc, shown, None)) from None


def _eval_set(data: dict[str, Any], shown: str) -> AdkFile:
    parsed: _EvalSet = _validate(_EVAL_SET, data, shown)
    if not parsed.eval_cases:
        raise InputError(shown, None, "eval_cases", "holds no eval cases")
    problems: list[Problem] = []
    cases: list[AdkEvalCase] = []
    notes: list[str] = []
    for i, ec in enumerate(parsed.eval_cases):
        where = f"eval_cases.{i}"
        state = ec.session_input.state if ec.session_input else {}
        if ec.conversation is None and ec.conversation_scenario is not None:
            scenario = _scenario(ec.conversation_scenario, shown, where, problems, notes)
            if scenario is not None:
                cases.append(
                    AdkEvalCase(
                        ec.eval_id,
                        (),
                        state,
                        f"{where}.eval_id",
                        scenario=scenario,
                        final_state=ec.final_session_state,
                    )
                )
            continue
        if ec.conversation is None:
            problems.append(Problem(shown, None, f"{where}.conversation", "field required"))
            continue
        if not ec.conversation:
            problems.append(
                Problem(shown, None, f"{where}.conversation", "holds no invocation", [], True)
            )
            continue
        invocations = [
            _invocation(inv, shown, f"{where}.conversation.{j}", problems)
            for j, inv in enumerate(ec.conversation)
        ]
        cases.append(
            AdkEvalCase(
                ec.eval_id,
                tuple(invocations),
                state,
                f"{where}.eval_id",
                final_state=ec.final_session_state,
            )
        )
        ids = sum(use.id is not None for use in invocations[-1].tool_uses)
        if ids:
            notes.append(
                f"{shown}: {where}: the last invocation's {ids} call id(s) not kept: its calls are "
                "expected by name and arguments (as ADK's tool_trajectory_avg_score compares them)"
                "; their results are kept as replay fixtures"
            )
        if ec.rubrics:
            notes.append(
                f"{shown}: {where}: rubrics not imported (write them as the case's rubric)"
            )
        notes += _intermediate_notes(invocations, f"{shown}: {where}")
    InputErrors.raise_if_any(problems)
    return AdkFile(shown, "eval_set", tuple(cases), parsed.eval_set_id, tuple(notes))


def _scenario(
    raw: _Scenario, shown: str, where: str, problems: list[Problem], notes: list[str]
) -> AdkScenario | None:
    field = f"{where}.conversation_scenario"
    if not raw.starting_prompt.strip() or not raw.conversation_plan.strip():
        problems.append(
            Problem(
                shown,
                None,
                field,
                "needs a starting_prompt and a conversation_plan",
                raw.model_dump(exclude_none=True),
                True,
            )
        )
        return None
    persona = raw.user_persona
    text = persona if isinstance(persona, str) else (persona.description if persona else "")
    if persona is not None and not isinstance(persona, str):
        notes.append(
            f"{shown}: {field}.user_persona: kept as its description only "
            "(its id and behaviors are ADK's persona registry's)"
        )
    return AdkScenario(raw.starting_prompt, raw.conversation_plan, text)


def _text(content: _Content | None) -> str:
    """Text parts of a content joined by newlines, without the model's thoughts."""
    if content is None or not content.parts:
        return ""
    return "\n".join(p.text for p in content.parts if p.text and not p.thought)


def _invocation(inv: _Invocation, shown: str, where: str, problems: list[Problem]) -> AdkInvocation:
    user_text = _text(inv.user_content)
    if not user_text.strip():
        problems.append(
            Problem(
                shown,
                None,
                f"{where}.user_content",
                "holds no text part: casework user turns are text",
                inv.user_content.model_dump(exclude_none=True),
                True,
            )
        )
    data = inv.intermediate_data or _IntermediateData()
    calls = list(data.tool_uses)
    responses = list(data.tool_responses)
    said: list[tuple[str, str]] = []  # text of the events (ADK's other intermediate form)
    for event in data.invocation_events:
        texts = []
        for part in (event.content.parts or []) if event.content else []:
            if part.function_call is not None:
                calls.append(part.function_call)
            if part.function_response is not None:
                responses.append(part.function_response)
            if part.text and not part.thought:
                texts.append(part.text)
        if texts:
            said.append((event.author, "\n".join(texts)))
    by_id = {r.id: r.response for r in responses if r.id is not None}
    uses = []
    for k, call in enumerate(calls):
        _check_tool_name(
            call.name, shown, f"{where}.intermediate_data.tool_uses.{k}.name", problems
        )
        response = by_id.get(call.id) if call.id is not None else None
        uses.append(_tool_use(call.name, call.args or {}, call.id, response))
    return AdkInvocation(
        user_text,
        tuple(uses),
        _text(inv.final_response) or None,
        _intermediate(data.intermediate_responses) + tuple(said),
    )


def _intermediate_notes(invocations: list[AdkInvocation], where: str) -> list[str]:
    """What of the sub-agents' replies an import cannot keep."""
    notes = []
    if invocations and invocations[-1].intermediate_responses:
        notes.append(
            f"{where}: the last invocation's intermediate_responses (sub-agent replies) not "
            "imported: casework grades the final reply only"
        )
    if any(inv.intermediate_responses for inv in invocations[:-1]):
        notes.append(f"{where}: intermediate_responses kept as assistant turns, without authors")
    return notes


def _intermediate(raw: list[Any]) -> tuple[tuple[str, str], ...]:
    """``(author, text)`` of ADK's ``intermediate_responses`` (``[author, [part…]]`` pairs)."""
    out = []
    for item in raw:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], list)):
            continue
        author = item[0] if isinstance(item[0], str) else ""
        texts = [
            p["text"]
            for p in item[1]
            if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
        ]
        if texts:
            out.append((author, "\n".join(texts)))
    return tuple(out)


def _tool_use(name: str, args: dict[str, Any], id_: str | None, response: Any) -> AdkToolUse:
    """A tool use; a response splits into result and error as Gemini's FunctionResponse says."""
    if not isinstance(response, dict):
        return AdkToolUse(name, args, id_)
    if "error" in response and "output" not in response:
        return AdkToolUse(name, args, id_, error=str(response["error"]))
    return AdkToolUse(name, args, id_, result=response.get("output", response))


def _check_tool_name(name: str, shown: str, where: str, problems: list[Problem]) -> None:
    try:
        ToolRequirement(name=name)
    except ValidationError as exc:
        message = str(exc.errors()[0]["msg"]).removeprefix("Value error, ")
        problems.append(Problem(shown, None, where, message, name, True))


def _query_list(data: list[Any], shown: str, file_name: str) -> AdkFile:
    turns: list[_LegacyTurn] = _validate(_QUERY_LIST, data, shown)
    problems: list[Problem] = []
    case = _legacy_case(turns, file_name, {}, "", shown, problems)
    InputErrors.raise_if_any(problems)
    return AdkFile(shown, "query_list", (case,))


def _named_list(data: list[Any], shown: str) -> AdkFile:
    named: list[_LegacyNamed] = _validate(_NAMED_LIST, data, shown)
    problems: list[Problem] = []
    cases, notes = [], []
    for i, item in enumerate(named):
        where = str(i)
        if not item.data:
            problems.append(Problem(shown, None, f"{where}.data", "holds no query", [], True))
            continue
        state = item.initial_session.state if item.initial_session else {}
        cases.append(_legacy_case(item.data, item.name, state, f"{where}.", shown, problems))
        if item.initial_state is not None:
            notes.append(
                f"{shown}: {where}.initial_state: not read (ADK reads initial_session.state)"
            )
    InputErrors.raise_if_any(problems)
    return AdkFile(shown, "named_list", tuple(cases), notes=tuple(notes))


def _legacy_case(
    turns: list[_LegacyTurn],
    eval_id: str,
    state: dict[str, Any],
    prefix: str,
    shown: str,
    problems: list[Problem],
) -> AdkEvalCase:
    invocations = []
    for j, turn in enumerate(turns):
        where = f"{prefix}data.{j}" if prefix else str(j)
        if not turn.query.strip():
            problems.append(Problem(shown, None, f"{where}.query", "must not be empty", "", True))
        for k, use in enumerate(turn.expected_tool_use):
            field = f"{where}.expected_tool_use.{k}.tool_name"
            _check_tool_name(use.tool_name, shown, field, problems)
        uses = tuple(AdkToolUse(u.tool_name, u.tool_input) for u in turn.expected_tool_use)
        invocations.append(AdkInvocation(turn.query, uses, turn.reference or None))
    return AdkEvalCase(eval_id, tuple(invocations), state, f"{prefix}name" if prefix else None)
