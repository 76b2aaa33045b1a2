"""A scripted simulated user for the τ² example: it says its goal, uses its phone, then stops.

Stands in for `[models.user]`'s LLM, offline. The first message is the scenario's goal as the
simulator's prompt gives it. A user with a phone of their own (τ²'s telecom) then plays the
task's golden user actions (read, like `golden_agent.py`, from the released cases) as tool
lines, once; every later message is the stop token.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from casework.schema import STOP_TOKEN


@cache
def _cases() -> list[dict[str, Any]]:
    """The released cases that have a simulated user, in id order."""
    out = []
    for path in sorted(Path.cwd().glob("datasets/*/cases.jsonl")):
        for line in path.read_text("utf-8").splitlines():
            case = json.loads(line)
            if case["situation"].get("user_scenario"):
                out.append(case)
    return sorted(out, key=lambda c: c["id"])


def _user_actions(system: str) -> list[dict[str, Any]]:
    """The golden user actions of the case whose scenario the prompt holds most fully.

    Some τ² telecom tasks share one scenario (they differ in how the phone starts out): a user
    who sees only the scenario cannot tell them apart, and plays the first one's actions.
    """
    best: tuple[int, list[dict[str, Any]]] = (0, [])
    for case in _cases():
        scenario = case["situation"]["user_scenario"]
        texts = [v.strip() for v in scenario.values() if isinstance(v, str) and v.strip()]
        if len(texts) > best[0] and all(text in system for text in texts):
            criteria = (case["oracle"].get("tau2") or {}).get("evaluation_criteria") or {}
            actions = [a for a in criteria.get("actions") or [] if a.get("requestor") == "user"]
            best = (len(texts), actions)
    return best[1]


def reply(messages: list[Any]) -> str:
    """The user's next message: the goal; then its own tool calls, if it has any; then stop."""
    system = str(messages[0].content)
    if len(messages) == 2:  # the scenario, then the cue to open the conversation
        return system.split("Your goal: ", 1)[1].split("\n", 1)[0]
    has_phone = "Your own device has these tools" in system
    used = any(str(m.content).startswith("(result)") for m in messages)
    actions = _user_actions(system) if has_phone and not used else []
    if actions:
        return "\n".join(
            f"TOOL: {a['name']} {json.dumps(a.get('arguments') or {})}" for a in actions
        )
    return STOP_TOKEN
