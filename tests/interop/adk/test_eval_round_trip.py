"""ADK → casework → ADK on an eval set ADK itself writes: nothing is lost silently.

The eval set is made the way `adk web` adds a session to an eval set: ADK's own
``EvaluationGenerator.convert_events_to_eval_invocations`` turns a session's events into
invocations (the ``invocation_events`` form of intermediate data, with call ids and tool
responses in the last invocation too), ADK's ``EvalCase``/``EvalSet`` models hold them, and
ADK's ``LocalEvalSetsManager`` writes the file. casework imports it, exports it, and ADK's own
``EvalSet`` model reads the export back. What differs is exactly what the import's notes and
the export's left-out counts say.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from google.adk.evaluation.conversation_scenarios import ConversationScenario
from google.adk.evaluation.eval_case import (
    EvalCase,
    Invocation,
    InvocationEvents,
    SessionInput,
    get_all_tool_calls,
    get_all_tool_responses,
)
from google.adk.evaluation.eval_set import EvalSet
from google.adk.evaluation.evaluation_generator import EvaluationGenerator
from google.adk.evaluation.local_eval_sets_manager import LocalEvalSetsManager
from google.adk.events.event import Event
from google.genai import types

from casework.grading.grade import grade
from casework.interop.adk import ImportOptions
from casework.interop.adk._convert import cases_from_adk, eval_set_from_cases
from casework.interop.adk._format import read_adk_file
from casework.schema import Trajectory

APP = "refunds"


def _event(invocation: str, author: str, role: str, *parts: types.Part) -> Event:
    return Event(
        invocation_id=invocation,
        author=author,
        content=types.Content(role=role, parts=list(parts)),
    )


def _call(call_id: str, name: str, **args: Any) -> types.Part:
    return types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))


def _response(call_id: str, name: str, response: dict[str, Any]) -> types.Part:
    return types.Part(
        function_response=types.FunctionResponse(id=call_id, name=name, response=response)
    )


def _session_events() -> list[Event]:
    """Two invocations of a refunds agent, as an ADK session records them."""
    text = types.Part.from_text
    return [
        _event("e-1", "user", "user", text(text="Where is my order ORD-1?")),
        _event(
            "e-1",
            APP,
            "model",
            text(text="Let me look that up."),
            _call("call-1", "get_order", order_id="ORD-1"),
        ),
        _event("e-1", APP, "user", _response("call-1", "get_order", {"status": "delivered"})),
        _event("e-1", APP, "model", text(text="It was delivered yesterday.")),
        _event("e-2", "user", "user", text(text="The mug is broken, refund it.")),
        _event("e-2", APP, "model", _call("call-2", "get_order", order_id="ORD-404")),
        _event("e-2", APP, "user", _response("call-2", "get_order", {"error": "no order"})),
        _event("e-2", APP, "model", _call("call-3", "issue_refund", order_id="ORD-1")),
        _event("e-2", APP, "user", _response("call-3", "issue_refund", {"refund_id": "R-1"})),
        _event("e-2", APP, "model", text(text="Refunded: R-1.")),
    ]


def _adk_wrote(root: Path) -> Path:
    """The eval set file ADK's own code writes for the session and a scenario."""
    invocations = EvaluationGenerator.convert_events_to_eval_invocations(_session_events())
    manager = LocalEvalSetsManager(agents_dir=str(root))
    manager.create_eval_set(APP, "refunds_set")
    state: dict[str, Any] = {"refunds": []}
    manager.add_eval_case(
        APP,
        "refunds_set",
        EvalCase(
            eval_id="broken-mug",
            conversation=invocations,
            session_input=SessionInput(app_name=APP, user_id="u-1", state=state),
            final_session_state={"refunds": [{"order_id": "ORD-1"}], "last order": "ORD-1"},
        ),
    )
    manager.add_eval_case(
        APP,
        "refunds_set",
        EvalCase(
            eval_id="simulated",
            conversation_scenario=ConversationScenario(
                starting_prompt="I need a refund.",
                conversation_plan="Give order ORD-1 when asked, then accept the refund.",
            ),
            session_input=SessionInput(app_name=APP, user_id="u-1", state=state),
        ),
    )
    return root / APP / "refunds_set.evalset.json"


def _held(invocation: Invocation) -> dict[str, Any]:
    """What an invocation says, in ADK's own terms (its helpers read either intermediate form)."""
    data = invocation.intermediate_data
    final = invocation.final_response
    if isinstance(data, InvocationEvents):
        said = [
            p.text
            for e in data.invocation_events
            for p in ((e.content.parts or []) if e.content else [])
            if p.text
        ]  # fmt: skip
    else:
        responses = data.intermediate_responses if data is not None else []
        said = [p.text for _, parts in responses for p in parts if p.text]
    return {
        "said": said,
        "user": [p.text for p in invocation.user_content.parts or []],
        "final": [p.text for p in final.parts or []] if final else [],
        "calls": [(c.name, c.args) for c in get_all_tool_calls(data)],
        "responses": [(r.name, r.response) for r in get_all_tool_responses(data)],
        "ids": [c.id for c in get_all_tool_calls(data)],
    }


def test_an_eval_set_adk_writes_survives_the_round_trip(tmp_path: Path) -> None:
    written = _adk_wrote(tmp_path / "agents")
    original = EvalSet.model_validate_json(written.read_text(encoding="utf-8"))
    # ADK wrote the invocation_events form, with call ids and responses in the last invocation.
    last = original.eval_cases[0].conversation[-1]  # type: ignore[index]
    assert [c.id for c in get_all_tool_calls(last.intermediate_data)] == ["call-2", "call-3"]

    adk_file = read_adk_file(written, "refunds_set.evalset.json")
    cases = [i.case for i in cases_from_adk([adk_file], ImportOptions(slice="refunds"))]
    mug, simulated = cases
    # The last invocation's tool results are replay fixtures (the error one too).
    assert [(f.tool, f.match, f.response, f.error) for f in mug.situation.fixtures] == [
        ("get_order", {"order_id": "ORD-404"}, None, "no order"),
        ("issue_refund", {"order_id": "ORD-1"}, {"refund_id": "R-1"}, None),
    ]
    # ADK's expected final session state is state assertions over the trial's final state.
    assert [(a.expr, a.value) for a in mug.oracle.assertions] == [
        ('"refunds"', [{"order_id": "ORD-1"}]),
        ('"last order"', "ORD-1"),
    ]
    assert mug.oracle.class_ == "programmatic"  # its reference reply's check decides too
    final = {"refunds": [{"order_id": "ORD-1"}], "last order": "ORD-1", "seen": 1}
    verdict = grade(mug, Trajectory(final_reply="Refunded: R-1.", final_state=final))
    assert {c.name: c.status for c in verdict.checks}["state"] == "pass"
    # The scenario is played by casework's simulated user, opening with ADK's starting prompt.
    assert [t.content for t in simulated.situation.turns] == ["I need a refund."]
    assert simulated.situation.user_scenario is not None
    assert simulated.situation.user_scenario.goal.startswith("Give order ORD-1")
    # The model's words before its call are an assistant turn of the prefix.
    assert [t.content for t in mug.situation.turns[:3]] == [
        "Where is my order ORD-1?",
        "Let me look that up.",
        "It was delivered yesterday.",
    ]
    # The deliberate losses of the import are said: the last invocation's call ids, and the
    # authors of intermediate replies.
    assert adk_file.notes == (
        "refunds_set.evalset.json: eval_cases.0: the last invocation's 2 call id(s) not kept: "
        "its calls are expected by name and arguments (as ADK's tool_trajectory_avg_score "
        "compares them); their results are kept as replay fixtures",
        "refunds_set.evalset.json: eval_cases.0: intermediate_responses kept as assistant "
        "turns, without authors",
    )

    export = eval_set_from_cases(cases, eval_set_id="refunds_set", name="", description="")
    assert export.exported == ["broken-mug", "simulated"] and dict(export.left_out) == {}
    back = EvalSet.model_validate(export.eval_set)  # ADK's own model reads the export

    before = [_held(inv) for inv in original.eval_cases[0].conversation or []]
    after = [_held(inv) for inv in back.eval_cases[0].conversation or []]
    # Earlier invocations keep their call ids; the last one's ids are the ones the note counts.
    assert after[0] == before[0]
    assert after[-1]["ids"] != before[-1]["ids"]
    assert {**after[-1], "ids": None} == {**before[-1], "ids": None}
    for kept, read in zip(original.eval_cases, back.eval_cases, strict=True):
        assert read.eval_id == kept.eval_id
        assert read.session_input is not None and kept.session_input is not None
        assert read.session_input.state == kept.session_input.state
        assert read.conversation_scenario == kept.conversation_scenario
        assert read.final_session_state == kept.final_session_state


def test_a_second_trip_changes_nothing(tmp_path: Path) -> None:
    """casework → ADK → casework → ADK: the second export equals the first, byte for byte."""
    written = _adk_wrote(tmp_path / "agents")
    adk_file = read_adk_file(written, "set.evalset.json")
    cases = [i.case for i in cases_from_adk([adk_file], ImportOptions(slice="refunds"))]
    first = eval_set_from_cases(cases, eval_set_id="s", name="", description="").eval_set
    (tmp_path / "first.evalset.json").write_text(json.dumps(first), encoding="utf-8")
    again = read_adk_file(tmp_path / "first.evalset.json", "first.evalset.json")
    cases_again = [i.case for i in cases_from_adk([again], ImportOptions(slice="refunds"))]
    assert [c.model_dump() for c in cases_again] == [c.model_dump() for c in cases]
    second = eval_set_from_cases(cases_again, eval_set_id="s", name="", description="").eval_set
    assert json.dumps(second, sort_keys=True) == json.dumps(first, sort_keys=True)
