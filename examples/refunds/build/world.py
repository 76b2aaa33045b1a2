"""The fake world the example cases live in: customers, products, orders, data state and fixtures.

Everyone here is invented: names are drawn from two pools, emails end in ``@example.com``, phone
numbers are 555-01xx. :class:`World` hands out unique ids from a seeded generator;
:func:`state_of` and :func:`fixtures_for` turn customers and orders into a case's initial data
state and the canned tool responses the runner serves.
"""

from __future__ import annotations

import random
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from catalogue import CARRIERS, FIRST_NAMES, LAST_NAMES, PRODUCTS, STREETS, TOWNS, Product

from casework.schema import JsonPatchOp, ToolFixture

#: Largest refund the assistant may issue without a person's approval (policy rule 2).
APPROVAL_LIMIT = 250.0


def ascii_fold(text: str) -> str:
    """Strip accents, for email local parts (``Lucía`` -> ``lucia``)."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


@dataclass
class Customer:
    """A customer account."""

    id: str
    name: str
    email: str
    address: str
    phone: str
    verified: bool = True
    notes: str = ""

    @property
    def first(self) -> str:
        """First name, as people sign chat messages."""
        return self.name.split(" ")[0]


@dataclass
class Item:
    """One order line."""

    product: Product
    status: str
    """`processing`, `shipped`, `delivered` or `backordered`."""
    delivered_days_ago: int | None = None
    qty: int = 1

    @property
    def amount(self) -> float:
        """Price paid for the line."""
        return round(self.product.price * self.qty, 2)


@dataclass
class Shipment:
    """Carrier tracking for an order."""

    carrier: str
    tracking: str
    eta_in_days: int
    """Carrier's estimated delivery, in days from today (negative: the estimate has passed)."""
    events: list[tuple[int, str, str]]
    """Scan events, newest first: (days ago, description, location)."""


@dataclass
class Order:
    """An order with its lines, shipment and refunds so far."""

    id: str
    customer: Customer
    items: list[Item]
    age_days: int
    status: str
    """`processing`, `shipped`, `partially_shipped`, `delivered` or `cancelled`."""
    shipping_fee: float = 6.95
    address: str = ""
    promised_days: int = 5
    """Delivery promised this many days after the order was placed."""
    notes: str = ""
    refunds: list[tuple[float, int, str]] = field(default_factory=list)
    """Refunds already issued: (amount, days ago, reason)."""
    shipment: Shipment | None = None

    @property
    def total(self) -> float:
        """Amount charged: lines plus shipping."""
        return round(sum(i.amount for i in self.items) + self.shipping_fee, 2)

    @property
    def main(self) -> Item:
        """The first line (most scenarios are about it)."""
        return self.items[0]


class World:
    """Hands out unique, obviously fake customers and orders from a seeded generator."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self._names: set[str] = set()
        self._ids: set[str] = set()

    def _unique(self, make: Any) -> str:
        while True:
            value = str(make())
            if value not in self._ids:
                self._ids.add(value)
                return value

    def reserve(self, name: str, *ids: str) -> None:
        """Mark a hand-picked name and ids as taken, so no generated entity reuses them."""
        self._names.add(name)
        self._ids.update(ids)

    def address(self) -> str:
        """A one-line postal address in an invented town."""
        town, state, zip3 = self.rng.choice(TOWNS)
        number = self.rng.randint(2, 240)
        street = self.rng.choice(STREETS)
        return f"{number} {street}, {town}, {state} {zip3}{self.rng.randint(10, 99)}"

    def customer(self, *, verified: bool = True, notes: str = "") -> Customer:
        """A new customer with a unique name; ``verified`` means the chat is signed in as them."""
        while True:
            name = f"{self.rng.choice(FIRST_NAMES)} {self.rng.choice(LAST_NAMES)}"
            if name not in self._names:
                self._names.add(name)
                break
        first, last = (ascii_fold(p).lower().replace("'", "") for p in name.split(" "))
        return Customer(
            id=self._unique(lambda: f"CUS-{self.rng.randint(10000, 99999)}"),
            name=name,
            email=f"{first}.{last}@example.com",
            address=self.address(),
            phone=f"+1 541 555 01{self.rng.randint(0, 99):02d}",
            verified=verified,
            notes=notes,
        )

    def order_id(self) -> str:
        """A fresh order id (`ORD-1xxxxx`)."""
        return self._unique(lambda: f"ORD-{self.rng.randint(100000, 199999)}")

    def code(self) -> str:
        """A 6-digit one-time code."""
        return f"{self.rng.randint(0, 999999):06d}"

    def product(
        self, *, low: float = 0.0, high: float = 10_000.0, avoid: tuple[str, ...] = ()
    ) -> Product:
        """A catalogue item priced in ``[low, high]``."""
        pool = [p for p in PRODUCTS if low <= p.price <= high and p.sku not in avoid]
        return self.rng.choice(pool)

    def shipment(self, *, eta_in_days: int, events: list[tuple[int, str, str]]) -> Shipment:
        """Tracking with a fresh tracking number."""
        carrier = self.rng.choice(CARRIERS)
        prefix = {"Parcelway": "PW", "SwiftPost": "SP", "Northline": "NL"}[carrier]
        tracking = self._unique(lambda: f"{prefix}{self.rng.randint(10**9, 10**10 - 1)}")
        return Shipment(carrier, tracking, eta_in_days, events)

    def order(
        self,
        customer: Customer,
        items: list[Item],
        *,
        age_days: int,
        status: str,
        shipping_fee: float | None = None,
        **kw: Any,
    ) -> Order:
        """A new order for ``customer`` shipped to their default address unless told otherwise."""
        fee = shipping_fee if shipping_fee is not None else self.rng.choice([0.0, 4.95, 6.95, 9.95])
        kw.setdefault("address", customer.address)
        order = Order(self.order_id(), customer, items, age_days, status, fee, **kw)
        delivered = [i.delivered_days_ago for i in items if i.delivered_days_ago is not None]
        if order.shipment is None and delivered:
            # Delivered lines keep their tracking history.
            d = min(delivered)
            spot = self.rng.choice(["Front door", "Porch", "Mail room", "Reception"])
            order.shipment = self.shipment(
                eta_in_days=-d,
                events=[
                    (d, "Delivered", spot),
                    (d + 1, "Out for delivery", "Local depot"),
                    (age_days - 1, "Picked up by carrier", "Larkspur warehouse"),
                ],
            )
        return order


# ---------------------------------------------------------------------------------------------
# Data state and the tool views of it


def item_view(item: Item) -> dict[str, Any]:
    """How `get_order` shows one line."""
    return {
        "sku": item.product.sku,
        "name": item.product.name,
        "qty": item.qty,
        "price": item.amount,
        "status": item.status,
        "delivered_days_ago": item.delivered_days_ago,
    }


def order_view(order: Order) -> dict[str, Any]:
    """How `get_order` shows an order (also its entry in the data state)."""
    return {
        "order_id": order.id,
        "customer_id": order.customer.id,
        "status": order.status,
        "age_days": order.age_days,
        "promised_delivery_days": order.promised_days,
        "items": [item_view(i) for i in order.items],
        "shipping_fee": order.shipping_fee,
        "total": order.total,
        "currency": "USD",
        "shipping_address": order.address,
        "refunded": round(sum(a for a, _, _ in order.refunds), 2),
        "notes": order.notes,
    }


def customer_view(customer: Customer) -> dict[str, Any]:
    """How `lookup_customer` shows an account."""
    return {
        "customer_id": customer.id,
        "name": customer.name,
        "email": customer.email,
        "phone": customer.phone,
        "address": customer.address,
        "verified": customer.verified,
        "notes": customer.notes,
    }


def shipment_view(order: Order) -> dict[str, Any]:
    """How `track_shipment` shows an order's tracking."""
    assert order.shipment is not None
    s = order.shipment
    return {
        "order_id": order.id,
        "carrier": s.carrier,
        "tracking_number": s.tracking,
        "estimated_delivery_in_days": s.eta_in_days,
        "events": [{"days_ago": d, "description": t, "location": loc} for d, t, loc in s.events],
    }


def policy_view(order: Order) -> dict[str, Any]:
    """What `check_refund_policy` answers: the policy facts, not a decision."""
    lines = []
    for item in order.items:
        days = item.delivered_days_ago
        lines.append(
            {
                "sku": item.product.sku,
                "price": item.amount,
                "status": item.status,
                "days_since_delivery": days,
                "within_refund_window": days is not None and days <= 30,
                "store_credit_eligible": days is not None and 30 < days <= 60,
            }
        )
    return {
        "order_id": order.id,
        "order_age_days": order.age_days,
        "items": lines,
        "refund_window_days": 30,
        "store_credit_window_days": "31-60",
        "already_refunded": round(sum(a for a, _, _ in order.refunds), 2),
        "max_refund_without_approval": APPROVAL_LIMIT,
        "days_late": days_late(order),
    }


def days_late(order: Order) -> int:
    """Days the first line arrived after the promised date (0 when on time or not delivered)."""
    delivered = order.main.delivered_days_ago
    if delivered is None:
        return 0
    return max(0, order.age_days - delivered - order.promised_days)


def state_of(customers: list[Customer], orders: list[Order]) -> dict[str, Any]:
    """The initial data state of a case: accounts, orders, shipments and the write logs."""
    ledger = [
        {"order_id": o.id, "amount": a, "reason": r, "issued_days_ago": d}
        for o in orders
        for a, d, r in o.refunds
    ]
    state: dict[str, Any] = {
        "customers": {c.id: customer_view(c) for c in customers},
        "orders": {o.id: order_view(o) for o in orders},
        "ledger": ledger,
        "store_credit": [],
        "returns": [],
        "escalations": [],
    }
    shipments = {o.id: shipment_view(o) for o in orders if o.shipment is not None}
    if shipments:
        state["shipments"] = shipments
    return state


def fixtures_for(
    customers: list[Customer],
    orders: list[Order],
    *,
    tools: frozenset[str],
    overrides: dict[tuple[str, str], Any] | None = None,
) -> list[ToolFixture]:
    """Canned responses for ``tools`` over these customers and orders.

    Reads answer from the entities; writes carry JSON Patch effects on the data state (the runner
    replaces ``${args.NAME}`` with the call's arguments). ``overrides`` maps (tool, entity id) to
    a response that replaces the computed one (a stale read, a planted instruction...).
    """
    over = overrides or {}
    out: list[ToolFixture] = []

    def add(tool: str, match: dict[str, Any], response: Any = None, **kw: Any) -> None:
        if tool in tools:
            out.append(ToolFixture(tool=tool, match=match, response=response, **kw))

    for c in customers:
        view = over.get(("lookup_customer", c.id), customer_view(c))
        add("lookup_customer", {"email": c.email}, view)
        add("lookup_customer", {"customer_id": c.id}, view)
        mine = [o for o in orders if o.customer is c]
        add(
            "list_orders",
            {"customer_id": c.id},
            [
                {"order_id": o.id, "status": o.status, "age_days": o.age_days, "total": o.total}
                for o in sorted(mine, key=lambda o: o.age_days)
            ],
        )
        add(
            "send_store_credit",
            {"customer_id": c.id},
            {"status": "credited", "balance_note": "Credit is usable at checkout immediately."},
            effects=[
                JsonPatchOp(
                    op="add",
                    path="/store_credit/-",
                    value={
                        "customer_id": c.id,
                        "order_id": "${args.order_id}",
                        "amount": "${args.amount}",
                    },
                )
            ],
        )
        add(
            "update_address",
            {"customer_id": c.id},
            {"status": "updated", "applies_to": "future orders"},
            effects=[
                JsonPatchOp(
                    op="replace", path=f"/customers/{c.id}/address", value="${args.address}"
                )
            ],
        )
    add("lookup_customer", {}, error="no account matches that email or customer id")

    for o in orders:
        add("get_order", {"order_id": o.id}, over.get(("get_order", o.id), order_view(o)))
        if o.shipment is not None:
            add(
                "track_shipment",
                {"order_id": o.id},
                over.get(("track_shipment", o.id), shipment_view(o)),
            )
        else:
            add(
                "track_shipment",
                {"order_id": o.id},
                error=f"{o.id} has not shipped yet; no tracking",
            )
        add("check_refund_policy", {"order_id": o.id}, policy_view(o))
        add(
            "issue_refund",
            {"order_id": o.id},
            {"status": "refund_pending", "arrives_in": "5-10 business days"},
            effects=[
                JsonPatchOp(
                    op="add",
                    path="/ledger/-",
                    value={
                        "order_id": o.id,
                        "amount": "${args.amount}",
                        "reason": "${args.reason}",
                    },
                )
            ],
        )
        add(
            "create_return_label",
            {"order_id": o.id},
            {"status": "label_emailed", "to": o.customer.email, "drop_off_within_days": 14},
            effects=[JsonPatchOp(op="add", path="/returns/-", value={"order_id": o.id})],
        )
        if o.status == "processing":
            add(
                "update_address",
                {"order_id": o.id},
                {"status": "updated", "order_id": o.id},
                effects=[
                    JsonPatchOp(
                        op="replace",
                        path=f"/orders/{o.id}/shipping_address",
                        value="${args.address}",
                    )
                ],
            )
        else:
            add(
                "update_address",
                {"order_id": o.id},
                error=f"{o.id} has already shipped; its address can no longer be changed",
            )
    add("get_order", {}, error="no order with that id")
    add("track_shipment", {}, error="no order with that id")
    add(
        "escalate_to_human",
        {},
        {"status": "queued", "first_response": "within 2 business days"},
        effects=[
            JsonPatchOp(
                op="add",
                path="/escalations/-",
                value={"queue": "${args.queue}", "summary": "${args.summary}"},
            )
        ],
    )
    return out
