"""Agents used by the tests (importable as ``python:tests.runner.sample_agents:NAME``)."""

from __future__ import annotations

import asyncio
import random
import re
from typing import Any

from casework.runner import ToolError, Tools
from casework.schema import AgentInput, Trajectory

#: Every AgentInput the spy agents received, as JSON.
RECEIVED: list[dict[str, Any]] = []


def _order(request: AgentInput) -> str | None:
    found = re.search(r"order (o\d+)", request.turns[-1].content)
    return found.group(1) if found else None


def good(request: AgentInput, tools: Tools) -> Trajectory:
    """Look the order up; refund delivered orders, refuse others, escalate on request."""
    text = request.turns[-1].content
    if "human" in text:
        tools.call("escalate_to_human", reason="asked for a person")
        return Trajectory(final_reply="I've passed you to a colleague.", agent_version="good-1")
    order_id = _order(request)
    order = tools.call("get_order", order_id=order_id)
    if order["status"] != "delivered":
        return Trajectory(
            final_reply="Sorry, I can't refund an order that has not been delivered yet.",
            outcome="refuse",
            agent_version="good-1",
        )
    tools.call("issue_refund", order_id=order_id, amount=order["total"])
    return Trajectory(
        final_reply=f"Refunded {order['total']}.", outcome="resolve", agent_version="good-1"
    )


def sloppy(request: AgentInput, tools: Tools) -> Trajectory:
    """Refunds everything without looking (the known-worse system)."""
    order_id = _order(request)
    if order_id is None:
        return Trajectory(final_reply="Done!", outcome="resolve", agent_version="sloppy-1")
    tools.call("issue_refund", order_id=order_id, amount=10)
    return Trajectory(final_reply="Refunded.", outcome="resolve", agent_version="sloppy-1")


def flaky(request: AgentInput, tools: Tools) -> Trajectory:
    """The good agent, but it skips the lookup half the time (seeded)."""
    if random.Random(request.seed).random() < 0.5:
        return Trajectory(final_reply="Done.", outcome="resolve", agent_version="flaky-1")
    return good(request, tools)


async def good_async(request: AgentInput, tools: Tools) -> Trajectory:
    """The good agent, async."""
    await asyncio.sleep(0)
    return good(request, tools)


def spy(request: AgentInput, tools: Tools) -> Trajectory:
    """Keeps what it received, calls a tool that has no fixture, then answers."""
    RECEIVED.append(request.model_dump(mode="json"))
    try:
        tools.call("no_such_tool", x=1)
    except ToolError as exc:
        return Trajectory(final_reply=f"tool said: {exc}")
    return Trajectory(final_reply="unexpected success")


#: What :func:`keep` received, one tuple per trial.
REACHED: list[tuple[Any, ...]] = []


def keep(request: AgentInput, tools: Tools) -> str:
    """Keeps the objects it received (the tests walk everything reachable from them)."""
    REACHED.append((request, tools))
    return "kept"


def reply_only(request: AgentInput) -> str:
    """A one-argument agent returning a bare string."""
    return "hello " + request.turns[-1].content


def crash(request: AgentInput, tools: Tools) -> Trajectory:
    """Always raises."""
    raise RuntimeError("boom")


def mutate(request: AgentInput, tools: Tools) -> Trajectory:
    """Scribbles on its input (must not leak into later trials)."""
    out = good(request, tools)
    request.turns[0].content = "MUTATED"
    return out
