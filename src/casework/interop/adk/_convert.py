"""Google ADK eval cases ↔ casework cases: pure conversion, both ways.

Entry points: :func:`cases_from_adk` (eval cases read by :mod:`casework.interop.adk._format` →
casework cases) and :func:`eval_set_from_cases` (casework cases → an ADK EvalSet, JSON-ready).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from casework.interop.adk._format import AdkEvalCase, AdkFile, AdkScenario, AdkToolUse
from casework.interop.adk.oracle import CHECK, DEFAULT_THRESHOLD
from casework.schema import (
    ArgMatcher,
    Case,
    Label,
    Oracle,
    Situation,
    Split,
    StateAssertion,
    ToolCall,
    ToolFixture,
    ToolRequirement,
    Turn,
    UserScenario,
)

__all__ = [
    "GUIDELINE_VERSION",
    "INTERMEDIATE_AUTHOR",
    "IN_ORDER_REF",
    "RUBRIC",
    "AdkExport",
    "ImportOptions",
    "ImportedCase",
    "case_from_adk",
    "case_id_for",
    "cases_from_adk",
    "eval_set_from_cases",
    "reference_reply",
]

#: Guideline version recorded on imported labels: they were decided by ADK eval authors.
GUIDELINE_VERSION = "adk-import"
#: Rubric of imported cases whose last invocation carries a reference reply.
RUBRIC = "The reply conveys the same information as the reference answer: {reference}"
#: Author written on exported intermediate responses (casework keeps no sub-agent names).
INTERMEDIATE_AUTHOR = "agent"
#: Description of the state assertions an import makes of ADK's ``final_session_state``.
FINAL_STATE = "ADK final_session_state"
#: Oracle ref asking the runner to check the order of required tools (ADK's trajectory is ordered).
IN_ORDER_REF = "grader:tools_in_order"

# ---------------------------------------------------------------------------------------------
# Eval cases → casework cases


@dataclass(frozen=True)
class ImportOptions:
    """Where imported cases go."""

    slice: str
    split: Split = "dev"
    id_prefix: str = ""
    reference: Literal["response_match", "judge"] = "response_match"
    """How a reference reply is checked: ADK's own ``response_match_score`` (ROUGE-1, offline:
    :mod:`casework.interop.adk.oracle`) or the judge, with the reference in its rubric."""
    threshold: float = DEFAULT_THRESHOLD
    """The ``response_match_score`` a reply needs (ADK's default 0.8)."""


@dataclass(frozen=True)
class ImportedCase:
    """A casework case made from an ADK eval case, with where that eval case came from."""

    case: Case
    path: str
    id_field: str | None


_BAD_ID_CHARS = re.compile(r"[^A-Za-z0-9._~:+-]+")
_FILE_SUFFIXES = (".test.json", ".evalset.json", ".json")


def case_id_for(eval_id: str, prefix: str = "") -> str:
    """A casework id for an ADK eval id: ``prefix + eval_id``, sanitised.

    ADK names the eval case of a migrated legacy file after the file's path, so an eval id keeps
    only its last path component, without a `.test.json`, `.evalset.json` or `.json` ending;
    characters casework ids cannot hold become ``-``. Returns ``""`` when nothing usable is left.
    """
    name = re.split(r"[/\\]", eval_id.strip().rstrip("/\\"))[-1]
    for suffix in _FILE_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name.removesuffix(suffix)
            break
    text = _BAD_ID_CHARS.sub("-", prefix + name).lstrip("._~:+-")
    return text[:200].rstrip("-")


def _goal(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _call(use: AdkToolUse) -> ToolCall:
    return ToolCall(
        name=use.name, arguments=use.args, id=use.id, result=use.result, error=use.error
    )


def _replay_fixtures(uses: Sequence[AdkToolUse]) -> list[ToolFixture]:
    """The recorded results of tool uses as fixtures answering the same name and arguments.

    The first recorded answer of a name and arguments wins (a later one with the same arguments
    is a state change fixtures cannot replay; ADK's trajectory metric ignores results anyway).
    """
    out: dict[tuple[str, str], ToolFixture] = {}
    for use in uses:
        if use.result is None and use.error is None:
            continue
        key = (use.name, json.dumps(use.args, sort_keys=True))
        out.setdefault(
            key,
            ToolFixture(
                tool=use.name,
                match=use.args,
                response=use.result if use.error is None else None,
                error=use.error,
            ),
        )
    return list(out.values())


def _final_state(oracle: dict[str, Any], final: dict[str, Any] | None) -> dict[str, Any]:
    """The oracle with one equality assertion per key of ADK's expected final session state."""
    if not final:
        return oracle
    assertions = [
        # A JMESPath quoted identifier is a JSON string: any key reads as itself.
        StateAssertion(expr=json.dumps(key), value=value, description=FINAL_STATE)
        for key, value in final.items()
    ]
    klass = "state_assertion" if oracle["class"] == "human" else oracle["class"]
    return {**oracle, "class": klass, "assertions": assertions}


def _scenario_case(
    ec: AdkEvalCase, scenario: AdkScenario, case_id: str, options: ImportOptions
) -> Case:
    """A case played by casework's simulated user: ADK's starting prompt opens, the plan guides."""
    return Case(
        id=case_id,
        slice=options.slice,
        split=options.split,
        source="hand",
        situation=Situation(
            goal=_goal(scenario.conversation_plan),
            turns=[Turn(role="user", content=scenario.starting_prompt)],
            state=ec.state,
            user_scenario=UserScenario(goal=scenario.conversation_plan, persona=scenario.persona),
        ),
        label=Label(outcome="resolve", guideline_version=GUIDELINE_VERSION, labellers=[]),
        oracle=Oracle.model_validate(_final_state({"class": "human"}, ec.final_state)),
    )


def case_from_adk(ec: AdkEvalCase, case_id: str, options: ImportOptions) -> Case:
    """The casework case testing the last invocation of an ADK eval case.

    Earlier invocations become the conversation prefix (their user text, then their expected reply
    and tool calls as the assistant's turn); the last invocation's expected tool uses become
    required tools with exact argument matchers, and their recorded results replay fixtures; its
    reference reply goes into the rubric. A conversation scenario becomes a simulated user
    (``situation.user_scenario``) opening with the scenario's starting prompt.
    """
    if ec.scenario is not None:
        return _scenario_case(ec, ec.scenario, case_id, options)
    *earlier, last = ec.invocations
    turns: list[Turn] = []
    for inv in earlier:
        turns.append(Turn(role="user", content=inv.user_text))
        # Sub-agents' replies are assistant turns before the final one (authors are not kept).
        turns += [Turn(role="assistant", content=text) for _, text in inv.intermediate_responses]
        if inv.final_response or inv.tool_uses:
            calls = [_call(u) for u in inv.tool_uses]
            turns.append(Turn(role="assistant", content=inv.final_response or "", tool_calls=calls))
    turns.append(Turn(role="user", content=last.user_text))
    required = [
        ToolRequirement(
            name=u.name,
            arguments={k: ArgMatcher(match="exact", value=v) for k, v in u.args.items()},
        )
        for u in last.tool_uses
    ]
    oracle: dict[str, Any] = {"class": "human"}
    if last.final_response and options.reference == "judge":
        oracle = {"class": "rubric_judge", "rubric": RUBRIC.format(reference=last.final_response)}
    elif last.final_response:
        params = {"reference": last.final_response, "threshold": options.threshold}
        oracle = {"class": "programmatic", "check": CHECK, "check_params": params}
    if len(required) > 1:
        oracle["ref"] = IN_ORDER_REF
    return Case(
        id=case_id,
        slice=options.slice,
        split=options.split,
        source="hand",
        situation=Situation(
            goal=_goal(last.user_text),
            turns=turns,
            state=ec.state,
            fixtures=_replay_fixtures(last.tool_uses),
        ),
        label=Label(
            outcome="resolve",
            required_tools=required,
            guideline_version=GUIDELINE_VERSION,
            labellers=[],
        ),
        oracle=Oracle.model_validate(_final_state(oracle, ec.final_state)),
    )


def cases_from_adk(files: Sequence[AdkFile], options: ImportOptions) -> list[ImportedCase]:
    """Casework cases for every eval case of ``files``, with unique sanitised ids.

    Ids are ``options.id_prefix`` + the eval id (see :func:`case_id_for`), or + the eval case's
    1-based position in its file when the eval id leaves nothing; clashes within the batch get
    ``-2``, ``-3``...
    """
    out: list[ImportedCase] = []
    taken: set[str] = set()
    for adk_file in files:
        for position, ec in enumerate(adk_file.cases, start=1):
            base = case_id_for(ec.eval_id, options.id_prefix) or case_id_for(
                str(position), options.id_prefix
            )
            case_id, n = base, 1
            while case_id in taken:
                n += 1
                case_id = f"{base[: 200 - len(str(n)) - 1]}-{n}"
            taken.add(case_id)
            case = case_from_adk(ec, case_id, options)
            out.append(ImportedCase(case, adk_file.path, ec.id_field))
    return out


# ---------------------------------------------------------------------------------------------
# Casework cases → an ADK EvalSet


@dataclass
class AdkExport:
    """An EvalSet built from casework cases, and what was left out and why."""

    eval_set: dict[str, Any]
    exported: list[str] = field(default_factory=list)
    frozen: int = 0
    """Frozen cases skipped: no export path ever writes them."""
    unlabelled: int = 0
    """Unlabelled cases skipped: there is no expected behaviour to write."""
    unshaped: list[str] = field(default_factory=list)
    """Cases skipped because their conversation does not start and end with a user turn."""
    left_out: Counter[str] = field(default_factory=Counter)
    """What exported cases held that ADK cannot (system turns, fixtures, forbidden tools...)."""


def _content(text: str, role: str) -> dict[str, Any]:
    return {"parts": [{"text": text}], "role": role}


def _function_call(call: ToolCall, fallback_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """An ADK tool use, and its FunctionResponse (empty when the call recorded no result)."""
    has_response = call.result is not None or call.error is not None
    call_id = call.id or (fallback_id if has_response else None)
    use: dict[str, Any] = {"name": call.name, "args": call.arguments}
    if call_id is not None:
        use = {"id": call_id, **use}
    if not has_response:
        return use, {}
    if call.error is not None:
        response: dict[str, Any] = {"error": call.error}
    elif isinstance(call.result, dict) and not {"output", "error"} & set(call.result):
        response = call.result
    else:
        response = {"output": call.result}
    return use, {"id": call_id, "name": call.name, "response": response}


def _invocations(case: Case, left_out: Counter[str]) -> list[dict[str, Any]] | None:
    """The conversation of invocations, or ``None`` when the turns do not fit ADK's shape."""
    turns = [t for t in case.situation.turns if t.role in ("user", "assistant")]
    if len(turns) < len(case.situation.turns):
        left_out["system or tool turns"] += 1
    if not turns or turns[0].role != "user" or turns[-1].role != "user":
        return None
    out: list[dict[str, Any]] = []
    replies: list[str] = []
    uses: list[dict[str, Any]] = []
    responses: list[dict[str, Any]] = []
    for turn in turns:
        if turn.role == "user":
            if out:
                _close(out[-1], replies, uses, responses)
            replies, uses, responses = [], [], []
            out.append(
                {
                    "invocation_id": f"{case.id}/{len(out) + 1}",
                    "user_content": _content(turn.content, "user"),
                }
            )
            continue
        if turn.content:
            replies.append(turn.content)
        for call in turn.tool_calls:
            use, response = _function_call(call, f"{case.id}/{len(out)}/{len(uses) + 1}")
            uses.append(use)
            if response:
                responses.append(response)
    return out


def _close(
    invocation: dict[str, Any],
    replies: list[str],
    uses: list[dict[str, Any]],
    responses: list[dict[str, Any]],
) -> None:
    # The last reply is the final response; earlier ones are intermediate (sub-agent) responses.
    if replies:
        invocation["final_response"] = _content(replies[-1], "model")
    intermediate = [[INTERMEDIATE_AUTHOR, [{"text": text}]] for text in replies[:-1]]
    data: dict[str, Any] = {"tool_uses": uses, "intermediate_responses": intermediate}
    if responses:
        data["tool_responses"] = responses
    invocation["intermediate_data"] = data


def _expected_uses(
    case: Case, label: Label, left_out: Counter[str]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The last invocation's tool uses, and the responses its replay fixtures recorded."""
    uses, responses = [], []
    for n, req in enumerate(label.required_tools, start=1):
        exact = {k: m.value for k, m in req.arguments.items() if m.match == "exact"}
        if len(exact) < len(req.arguments):
            left_out["argument matchers other than exact"] += 1
        use: dict[str, Any] = {"name": req.name, "args": exact}
        fixture = _replayed(case, req.name, exact)
        if fixture is not None:
            call = ToolCall(
                name=req.name, arguments=exact, result=fixture.response, error=fixture.error
            )
            use, response = _function_call(call, f"{case.id}/last/{n}")
            responses.append(response)
        uses.append(use)
    return uses, responses


def _replayed(case: Case, name: str, args: dict[str, Any]) -> ToolFixture | None:
    """The fixture an import made of this expected call's recorded result, if any."""
    for fixture in case.situation.fixtures:
        if fixture.tool == name and fixture.match == args and not fixture.effects:
            return fixture
    return None


def _scenario_eval_case(case: Case, left_out: Counter[str]) -> dict[str, Any] | None:
    """ADK's conversation_scenario for a case played by a simulated user opening with one turn."""
    scenario = case.situation.user_scenario
    turns = case.situation.turns
    if scenario is None or len(turns) != 1 or turns[0].role != "user":
        return None
    if scenario.persona:
        left_out["simulated user's persona (ADK's personas are registry entries)"] += 1
    if scenario.known_info or scenario.unknown_info or scenario.instructions:
        left_out["simulated user's known/unknown info or instructions"] += 1
    if scenario.max_turns != UserScenario.model_fields["max_turns"].default:
        left_out["simulated user's max_turns"] += 1
    return {
        "eval_id": case.id,
        "conversation_scenario": {
            "starting_prompt": turns[0].content,
            "conversation_plan": scenario.goal,
        },
    }


def eval_set_from_cases(
    cases: Sequence[Case], *, eval_set_id: str, name: str, description: str
) -> AdkExport:
    """An ADK EvalSet (as JSON-ready data) with one eval case per exportable case.

    Frozen and unlabelled cases are skipped and counted. Each case's turns become invocations
    (a user turn opens one; the assistant turns after it give its reply and tool uses); the last
    invocation expects the label's required tools, with the values of exact argument matchers, and
    has no final response.
    """
    export = AdkExport(eval_set={})
    eval_cases = []
    for case in cases:
        if case.frozen:
            export.frozen += 1
            continue
        if case.label is None:
            export.unlabelled += 1
            continue
        scenario = _scenario_eval_case(case, export.left_out)
        if scenario is not None:
            _count_left_out(case, export.left_out)
            final = _final_session_state(case)
            if final:
                scenario["final_session_state"] = final
            if case.situation.state:
                scenario["session_input"] = {
                    "app_name": "",
                    "user_id": "",
                    "state": case.situation.state,
                }
            eval_cases.append(scenario)
            export.exported.append(case.id)
            continue
        conversation = _invocations(case, export.left_out)
        if conversation is None:
            export.unshaped.append(case.id)
            continue
        last = conversation[-1]
        uses, responses = _expected_uses(case, case.label, export.left_out)
        last["intermediate_data"] = {"tool_uses": uses, "intermediate_responses": []}
        if responses:
            last["intermediate_data"]["tool_responses"] = responses
        reference = reference_reply(case)
        if reference is not None:
            last["final_response"] = _content(reference, "model")
        _count_left_out(case, export.left_out)
        eval_case: dict[str, Any] = {"eval_id": case.id, "conversation": conversation}
        final = _final_session_state(case)
        if final:
            eval_case["final_session_state"] = final
        if case.situation.state:
            eval_case["session_input"] = {
                "app_name": "",
                "user_id": "",
                "state": case.situation.state,
            }
        eval_cases.append(eval_case)
        export.exported.append(case.id)
    export.eval_set = {
        "eval_set_id": eval_set_id,
        "name": name,
        "description": description,
        "eval_cases": eval_cases,
    }
    return export


def _goal_differs(case: Case) -> bool:
    """True when the goal is not what an import would make of the last user message."""
    scenario = case.situation.user_scenario
    if scenario is not None:
        return case.situation.goal != _goal(scenario.goal)
    users = [t for t in case.situation.turns if t.role == "user"]
    return not users or case.situation.goal != _goal(users[-1].content)


def reference_reply(case: Case) -> str | None:
    """The reference reply an ADK import put in the case's oracle (``None``: none there).

    It is the ``reference`` of the response-match check, or the tail of the judge's rubric.
    """
    if case.oracle.check == CHECK and case.oracle.check_params:
        reference = case.oracle.check_params.get("reference")
        return reference if isinstance(reference, str) else None
    rubric = case.oracle.rubric
    head = RUBRIC.split("{reference}")[0]
    if rubric is None or not rubric.startswith(head) or len(rubric) == len(head):
        return None
    return rubric[len(head) :]


def _other_fixtures(case: Case) -> bool:
    """Fixtures that are not the recorded result of an expected call (those ADK can hold)."""
    label = case.label
    expected = [
        (r.name, {k: m.value for k, m in r.arguments.items() if m.match == "exact"})
        for r in (label.required_tools if label else [])
    ]
    return any(f.effects or (f.tool, f.match) not in expected for f in case.situation.fixtures)


def _final_key(a: StateAssertion) -> str | None:
    """The session-state key an import's final_session_state assertion reads (else ``None``)."""
    if a.description != FINAL_STATE or a.op != "eq" or a.language != "jmespath":
        return None
    try:
        key = json.loads(a.expr)
    except ValueError:
        return None
    return key if isinstance(key, str) else None


def _final_session_state(case: Case) -> dict[str, Any]:
    """ADK's ``final_session_state`` of the assertions an import made of it."""
    out = {}
    for a in case.oracle.assertions:
        key = _final_key(a)
        if key is not None:
            out[key] = a.value
    return out


def _other_assertions(case: Case) -> bool:
    return any(_final_key(a) is None for a in case.oracle.assertions)


def _other_check(case: Case) -> bool:
    return case.oracle.class_ == "programmatic" and case.oracle.check != CHECK


def _other_threshold(case: Case) -> bool:
    """ADK keeps thresholds in its test_config.json, not in the eval set."""
    params = case.oracle.check_params or {}
    return case.oracle.check == CHECK and params.get("threshold", DEFAULT_THRESHOLD) != (
        DEFAULT_THRESHOLD
    )


def _count_left_out(case: Case, left_out: Counter[str]) -> None:
    label = case.label
    assert label is not None
    rubric = case.oracle.rubric is not None and reference_reply(case) is None
    for what, present in (
        ("forbidden tools", label.forbidden_tools),
        ("answer facts", label.answer_facts),
        ("fixtures other than the expected calls' recorded results", _other_fixtures(case)),
        ("state assertions other than ADK's final_session_state", _other_assertions(case)),
        ("injected adversity", case.situation.injected),
        ("outcome other than resolve", label.outcome != "resolve"),
        ("rubric other than a reference reply", rubric),
        ("oracle ref other than tools in order", case.oracle.ref not in (None, IN_ORDER_REF)),
        ("unsatisfiable flag", not case.satisfiable),
        ("programmatic check other than ADK's response match", _other_check(case)),
        ("response_match threshold other than ADK's default 0.8", _other_threshold(case)),
        ("goal other than the last user message", _goal_differs(case)),
    ):
        if present:
            left_out[what] += 1
