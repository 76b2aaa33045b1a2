"""A stand-in simulated user: rules over the simulator's prompt, offline and deterministic.

NOT a model. It reads only what casework sends the simulator: the scenario in the system message
(goal, what the user knows) and the conversation so far, in which the assistant speaks as
``user``. Spec: ``python:llm.user:reply`` (``[models.user] script``), imported from the project
root.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from casework.llm import Message
from casework.schema import STOP_TOKEN


def _known(system: str) -> str:
    found = re.search(r"^What you know: (.+)$", system, re.MULTILINE)
    return found.group(1).strip() if found else "I don't know."


def reply(messages: Sequence[Message]) -> str:
    """The customer's next message."""
    system = messages[0].content
    assistant = messages[-1].content
    if assistant.startswith("(The conversation starts"):
        goal = re.search(r"^Your goal: (.+)$", system, re.MULTILINE)
        return (
            "Will I need an umbrella tomorrow?" if goal and "umbrella" in goal.group(1) else "Hi."
        )
    if "?" in assistant:  # the assistant asks: answer with what the scenario says the user knows
        return _known(system)
    return f"Great, thanks. {STOP_TOKEN}"
