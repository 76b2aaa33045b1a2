"""A stand-in simulated traveller: rules over the simulator's prompt, offline and deterministic.

NOT a model. It reads only what casework sends the simulator: the scenario in the system message
and the conversation so far (in which the agent speaks as ``user``). It opens vaguely, gives what
the scenario says it knows when the agent asks, and stops once the agent has answered.
Spec: ``python:llm.user:reply`` (``[models.user] script``), imported from the project root.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from casework.llm import Message
from casework.schema import STOP_TOKEN


def reply(messages: Sequence[Message]) -> str:
    """The traveller's next message."""
    system = messages[0].content
    agent = messages[-1].content
    if agent.startswith("(The conversation starts"):
        return "Hi, I need a flight."
    if "?" in agent:  # the agent asks: give what the scenario says the traveller knows
        known = re.search(r"^What you know: (.+)$", system, re.MULTILINE)
        return known.group(1).strip() if known else "I don't know."
    return f"Thanks, that's all. {STOP_TOKEN}"
