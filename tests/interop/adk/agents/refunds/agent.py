"""A small ADK agent for casework's tests: two Python tools, a model stand-in on loopback.

The model is ADK's LiteLlm wrapper pointed at an OpenAI-compatible stub server the test starts
on 127.0.0.1 (``CASEWORK_TEST_LLM_BASE``), so the agent runs offline and deterministically.
"""

from __future__ import annotations

import os
from typing import Any

from google.adk.agents import Agent
from google.adk.models.lite_llm import LiteLlm
from google.adk.tools.tool_context import ToolContext

_ORDERS = {"ORD-1": {"order_id": "ORD-1", "total": 79.0, "status": "delivered"}}


def get_order(order_id: str) -> dict[str, Any]:
    """Fetch one order by its id.

    Args:
        order_id: The order's id, e.g. ORD-1.
    """
    order = _ORDERS.get(order_id)
    if order is None:
        return {"error": f"no order {order_id}"}
    return dict(order)


def issue_refund(order_id: str, amount: float, tool_context: ToolContext) -> dict[str, Any]:
    """Refund an amount on an order.

    Args:
        order_id: The order to refund.
        amount: The amount in EUR.
    """
    refunds = list(tool_context.state.get("refunds", []))
    refunds.append({"order_id": order_id, "amount": amount})
    tool_context.state["refunds"] = refunds
    return {"refund_id": f"REF-{len(refunds)}", "amount": amount}


root_agent = Agent(
    name="refunds",
    description="Refunds desk of a small shop.",
    instruction="Help customers with refunds. Look the order up before refunding.",
    model=LiteLlm(
        model="openai/stub-model",
        api_base=os.environ.get("CASEWORK_TEST_LLM_BASE", "http://127.0.0.1:9/v1"),
        api_key="stub-key",
    ),
    tools=[get_order, issue_refund],
)
