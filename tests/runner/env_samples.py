"""A small shop tool environment and agents for the environment tests.

Importable as ``tests.runner.env_samples:Shop`` (environment) and
``python:tests.runner.env_samples:NAME`` (agents).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from casework.runner import ToolEnvironment, ToolError, Tools, tool
from casework.schema import AgentInput, Trajectory

#: Every AgentInput the spy agent received, as JSON.
RECEIVED: list[dict[str, Any]] = []


class Shop(ToolEnvironment):
    """Items with prices and stock; orders get ids from a counter in the state."""

    @tool(
        "Find items whose name contains the query.",
        {"type": "object", "properties": {"query": {"type": "string"}}},
    )
    def search_items(self, query: str) -> list[dict[str, Any]]:
        return [
            {"sku": sku, **item}
            for sku, item in sorted(self.data["items"].items())
            if query.lower() in item["name"].lower()
        ]

    @tool("Price an order of qty units of an item.")
    def price(self, sku: str, qty: int) -> float:
        return round(float(self._item(sku)["price"]) * qty, 2)

    @tool("Create an order; returns its new id.")
    def create_order(self, sku: str, qty: int) -> dict[str, Any]:
        item = self._item(sku)
        if item["stock"] < qty:
            raise ToolError(f"only {item['stock']} of {sku} in stock")
        item["stock"] -= qty
        order_id = f"O-{self.data['next_order']}"
        self.data["next_order"] += 1
        self.data["orders"][order_id] = {"sku": sku, "qty": qty, "total": self.price(sku, qty)}
        return {"order_id": order_id}

    @tool("Stock of an item.")
    def get_stock(self, sku: str) -> int:
        return int(self._item(sku)["stock"])

    def _item(self, sku: str) -> dict[str, Any]:
        if sku not in self.data["items"]:
            raise ToolError(f"no item {sku}")
        item: dict[str, Any] = self.data["items"][sku]
        return item


def _ask(request: AgentInput) -> tuple[int, str]:
    found = re.search(r"buy (\d+) (\w+)", request.turns[-1].content)
    assert found is not None
    return int(found.group(1)), found.group(2)


def buy_search(request: AgentInput, tools: Tools) -> Trajectory:
    """Search, price, then order: the long path."""
    qty, name = _ask(request)
    sku = tools.call("search_items", query=name)[0]["sku"]
    total = tools.call("price", sku=sku, qty=qty)
    order = tools.call("create_order", sku=sku, qty=qty)
    return Trajectory(final_reply=f"Ordered {order['order_id']} for {total}.", outcome="resolve")


def buy_direct(request: AgentInput, tools: Tools) -> Trajectory:
    """Order straight away by the sku it knows (A1 for mugs): the short path."""
    qty, _ = _ask(request)
    order = tools.call("create_order", sku="A1", qty=qty)
    return Trajectory(final_reply=f"Ordered {order['order_id']}.", outcome="resolve")


def buy_wrong(request: AgentInput, tools: Tools) -> Trajectory:
    """Says the right thing but orders one unit too many."""
    qty, name = _ask(request)
    sku = tools.call("search_items", query=name)[0]["sku"]
    order = tools.call("create_order", sku=sku, qty=qty + 1)
    return Trajectory(final_reply=f"Ordered {order['order_id']} for {qty}.", outcome="resolve")


async def racer(request: AgentInput, tools: Tools) -> Trajectory:
    """Reads the stock, yields to the other trials, orders, reads again (isolation probe)."""
    before = tools.call("get_stock", sku="A1")
    await asyncio.sleep(0.01)
    order = tools.call("create_order", sku="A1", qty=1)
    await asyncio.sleep(0.01)
    after = tools.call("get_stock", sku="A1")
    return Trajectory(
        final_reply=f"{before} {order['order_id']} {after}", outcome="resolve", metadata={}
    )


def spy(request: AgentInput, tools: Tools) -> Trajectory:
    """Keeps what it was given, then takes the long path."""
    RECEIVED.append(request.model_dump(mode="json"))
    return buy_search(request, tools)
