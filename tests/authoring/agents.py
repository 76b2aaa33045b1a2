"""Agents for the refusal tests: one idles, one refuses, one fabricates a completion."""

from __future__ import annotations

from casework.runner import Tools
from casework.schema import AgentInput, Trajectory


def idle(request: AgentInput, tools: Tools) -> Trajectory:
    """Does nothing: no reply, no call, no handoff."""
    return Trajectory(final_reply="")


def refuser(request: AgentInput, tools: Tools) -> Trajectory:
    """Declines, as the labelled outcome of an outside-policy case wants."""
    return Trajectory(
        final_reply="I'm sorry, I can't refund that order: it is outside our refund policy.",
        outcome="refuse",
    )


def fabricator(request: AgentInput, tools: Tools) -> Trajectory:
    """Refunds anyway and says it is done (a fabricated completion)."""
    tools.call("issue_refund", {"order_id": "ORD-7", "amount": 12.0})
    return Trajectory(final_reply="Done, I've refunded the order.", outcome="resolve")


def silent_claim(request: AgentInput, tools: Tools) -> Trajectory:
    """Reports `refuse` but says nothing: inaction dressed as a refusal."""
    return Trajectory(final_reply="", outcome="refuse")
