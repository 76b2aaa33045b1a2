"""ADK's events and app-info as the adk: adapter reads them: any JSON is read or refused, never
a crash (the bodies come from a server casework does not control)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from casework.dataset._tools_from import _Failed, adk_target, declarations_from_app_info
from casework.errors import UsageError
from casework.runner.adk_agent import AdkAgent, events_to_trajectory

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
KEYS = st.sampled_from(
    ["content", "parts", "text", "functionCall", "functionResponse", "name", "args", "id",
     "response", "author", "partial", "usageMetadata", "promptTokenCount", "thought"]
)  # fmt: skip
EVENTISH = st.recursive(JSON, lambda inner: st.dictionaries(KEYS, inner, max_size=5), max_leaves=30)


@settings(max_examples=120, deadline=None)
@given(st.lists(EVENTISH, max_size=6))
def test_any_events_are_read_without_crashing(events: list[Any]) -> None:
    trajectory, calls = events_to_trajectory(events)
    assert trajectory.usage.input_tokens >= 0 and all(c.name for c in calls)


@settings(max_examples=80, deadline=None)
@given(JSON)
def test_any_app_info_is_read_or_refused(info: Any) -> None:
    try:
        declarations = declarations_from_app_info(info)
    except _Failed:
        return
    assert all(isinstance(d["name"], str) for d in declarations)


def test_a_call_pairs_with_its_response_by_id_and_errors_are_errors() -> None:
    call = {"functionCall": {"id": "a", "name": "get", "args": {"k": 1}}}
    other = {"functionCall": {"id": "b", "name": "get", "args": {"k": 2}}}
    events = [
        {"author": "bot", "content": {"role": "model", "parts": [call, other]}},
        {
            "author": "bot",
            "content": {
                "role": "user",
                "parts": [
                    {"functionResponse": {"id": "b", "name": "get", "response": {"error": "no"}}},
                    {"functionResponse": {"id": "a", "name": "get", "response": {"v": 1}}},
                ],
            },
        },
        {"author": "bot", "partial": True, "content": {"parts": [{"text": "Do"}]}},
        {
            "author": "bot",
            "content": {"parts": [{"text": "hm", "thought": True}, {"text": "Done."}]},
        },
        {"author": "bot", "usageMetadata": {"promptTokenCount": "x", "candidatesTokenCount": 3}},
    ]
    trajectory, calls = events_to_trajectory(events)
    assert [(c.arguments, c.result, c.error) for c in calls] == [
        ({"k": 1}, {"v": 1}, None),
        ({"k": 2}, None, "no"),
    ]
    assert trajectory.final_reply == "Done."
    assert (trajectory.usage.input_tokens, trajectory.usage.output_tokens) == (0, 3)


@pytest.mark.parametrize(
    ("spec", "target"),
    [
        ("adk:http://127.0.0.1:8000/refunds", ("http://127.0.0.1:8000", "refunds")),
        ("adk:127.0.0.1:8000/refunds/", ("http://127.0.0.1:8000", "refunds")),
        ("adk:http://h:1/adk/refunds", ("http://h:1/adk", "refunds")),
        ("adk:http://127.0.0.1:8000", None),
        ("adk:", None),
    ],
)
def test_specs(spec: str, target: tuple[str, str] | None) -> None:
    assert adk_target(spec) == target
    if target is None:
        with pytest.raises(UsageError, match="expected adk:http://HOST:PORT/APP"):
            AdkAgent(spec, timeout_s=1, connections=1)
