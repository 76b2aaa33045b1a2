"""A scripted simulated user for the τ² example: it says its goal, then ends the conversation.

Stands in for `[models.user]`'s LLM, offline: the first message is the scenario's goal as the
simulator's prompt gives it; every later one is the stop token.
"""

from __future__ import annotations

from typing import Any

from casework.schema import STOP_TOKEN


def reply(messages: list[Any]) -> str:
    """The user's next message: the goal first, then stop."""
    if len(messages) == 2:  # the scenario, then the cue to open the conversation
        return str(messages[0].content).split("Your goal: ", 1)[1].split("\n", 1)[0]
    return STOP_TOKEN
