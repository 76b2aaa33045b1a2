"""A small rule-based support agent for the example shop, in two versions that behave stochastically.

``good`` follows the refunds policy (look things up, check the policy, verify identity, escalate
what a person must decide) and slips rarely; ``degraded`` is the same code with a sloppier
configuration: it skips lookups, misreads the refund window and trusts the conversation more.
Both read only what casework gives an agent (the conversation and the tools) and draw their slips
from the trial seed, so trials differ and reruns repeat.

Specs: ``python:agents.refunds_agent:good`` and ``python:agents.refunds_agent:degraded``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from casework.runner import ToolError, Tools
from casework.schema import AgentInput, Outcome, Trajectory

ORDER = re.compile(r"\b(ORD-\d{6}|order_[0-9a-f]{12})\b")
EMAIL = re.compile(r"\b([\w.+-]+@[\w-]+\.[\w.]+|email_[0-9a-f]{12})\b")
CODE = re.compile(r"\b(\d{6})\b")
ADDRESS = re.compile(
    r"\b(\d{1,4} [A-Z][\w']*(?: [A-Z][\w']*)*"
    r" (?:Road|Row|Court|Lane|Way|Street|View|Close|Avenue|Drive|Approach|Hill|Terrace|Place),"
    r" [A-Z][\w ]+, [A-Z]{2} \d{5}|address_[0-9a-f]{12})"
)
#: Tool renames the agent's code already knows (the demo migrates lookup_customer -> find_customer).
ALIASES = {"lookup_customer": ("find_customer",)}
SLOT = re.compile(
    r"(deliver(?:ed)? on (?:a )?\w+day|come after|arrive after|after \d+ ?(?:am|pm)|before \d+ ?(?:am|pm)|"
    r"arrange for|time slot|delivery slot|specific day|\w+day morning|\w+day afternoon|\w+day evening)"
)
SESSION = re.compile(r"Signed in as (.+?) \(([^,]+), ([^)]+)\)")

DAMAGE = (
    "broken",
    "damaged",
    "cracked",
    "crack",
    "stain",
    "stained",
    "burning",
    "snapped",
    "defect",
    "defective",
    "faulty",
    "dent",
    "dented",
    "split",
    "smashed",
    "leak",
    "leaking",
    "chip",
    "chipped",
    "shattered",
    "torn",
    "dead",
    "doesn't work",
    "does not work",
    "won't turn on",
    "won't switch on",
    "scratched",
    "scratch",
    "crushed",
)
THIRD_PARTY = (
    "his account",
    "her account",
    "his order",
    "her order",
    "for him",
    "for her",
    "my colleague",
    "colleague",
    "my neighbour",
    "my neighbor",
    "on behalf of",
)


@dataclass(frozen=True)
class Habits:
    """How carefully the agent works: each number is the chance of one kind of slip per trial."""

    version: str
    skip_policy: float = 0.0
    """Refund straight from the order without checking the policy."""
    stretch_window: float = 0.0
    """Treat the 31-60 day store-credit window as refundable."""
    refund_total: float = 0.0
    """Refund the order total instead of the item."""
    skip_verification: float = 0.0
    """Change an account address without verifying a guest."""
    obey_notes: float = 0.0
    """Follow instructions found in tool results."""
    refund_instead_of_escalating: float = 0.0
    """Refund what a person should decide."""


GOOD = Habits("refunds-agent-good-1.4", skip_policy=0.02, stretch_window=0.02)
DEGRADED = Habits(
    "refunds-agent-degraded-1.3",
    skip_policy=0.35,
    stretch_window=0.5,
    refund_total=0.35,
    skip_verification=0.5,
    obey_notes=0.5,
    refund_instead_of_escalating=0.45,
)


class Reply(Exception):
    """Raised to finish the trial with a reply and an outcome."""

    def __init__(self, text: str, outcome: Outcome) -> None:
        super().__init__(text)
        self.text = text
        self.outcome = outcome


class Agent:
    """One trial of the policy."""

    def __init__(self, request: AgentInput, tools: Tools, habits: Habits) -> None:
        self.tools = tools
        self.habits = habits
        self.rng = random.Random(request.seed)
        self.system = " ".join(t.content for t in request.turns if t.role == "system")
        self.users = [t.content for t in request.turns if t.role == "user"]
        self.text = " ".join(self.users)
        self.last = self.users[-1] if self.users else ""
        self.low = self.text.lower()
        self.earlier = [c for t in request.turns for c in t.tool_calls]
        self.said = " ".join(t.content for t in request.turns if t.role == "assistant")
        found = SESSION.search(self.system)
        self.customer = found.group(2) if found else None
        self.email = found.group(3) if found else None
        self.looked_up = False

    def slip(self, chance: float) -> bool:
        return self.rng.random() < chance

    def call(self, name: str, **args: Any) -> Any:
        declared = self.tools.names()
        if declared and name not in declared:
            name = next((alias for alias in ALIASES.get(name, ()) if alias in declared), name)
        return self.tools.call(name, args)

    def done(self, text: str, outcome: Outcome) -> Reply:
        return Reply(text, outcome)

    # -- entry -------------------------------------------------------------------------------

    def run(self) -> Reply:
        try:
            self.route()
        except Reply as reply:
            return reply
        return self.done("Could you tell me a little more about what you need?", "clarify")

    def has(self, *words: str) -> bool:
        return any(re.search(r"(?<![a-z])" + re.escape(w) + r"(?![a-z])", self.low) for w in words)

    def route(self) -> None:
        orders = ORDER.findall(self.text)
        if self.earlier:
            self.follow_up(orders)
        if self.has(
            "chargeback",
            "dispute",
            "disputing",
            "solicitor",
            "lawyer",
            "third message",
            "reviews everywhere",
        ):
            self.escalate("billing", "Customer threatens a chargeback or legal action.", orders)
        if self.has(
            "charged twice",
            "double charge",
            "two times",
            "taken twice",
            "two payments",
            "charged me twice",
            "pressed it again",
            "twice",
        ):
            self.escalate("billing", "Duplicate payment reported.", orders)
        address_given = bool(ADDRESS.search(self.text))
        if self.has("never arrived", "never showed up", "didn't arrive", "never came") and self.has(
            *DAMAGE
        ):
            if orders:
                self.order(orders[0])
            raise self.done(
                "I want to get this right: did the parcel arrive damaged, or did it never arrive?",
                "clarify",
            )
        if self.has(
            "password",
            "locked out",
            "can't log in",
            "cannot log in",
            "can't get back in",
            "signed me out",
        ) and not ADDRESS.search(self.text):
            raise self.done(
                "Use 'Forgot password' on the sign-in page; the reset email can land in the spam "
                "folder, so check there too.",
                "resolve",
            )
        if not address_given and self.has(
            "login email",
            "account email",
            "email address on my account",
            "change my email",
            "update my email",
            "change the email",
            "new email",
            "switch my email",
        ):
            raise self.done(
                "You can change it under Account settings › Login & security › Email; a "
                "confirmation link goes to the new address.",
                "resolve",
            )
        if self.has(
            "unsubscribe",
            "promo emails",
            "marketing",
            "newsletter",
            "off the list",
            "stop emailing",
            "stop sending",
        ):
            raise self.done(
                "Use the unsubscribe link at the bottom of every email, or Account settings › "
                "Communication preferences.",
                "resolve",
            )
        if self.has("merge", "combine my accounts", "combine them", "two accounts"):
            raise self.done(
                "I'm sorry, we can't merge accounts: each account stays separate.", "refuse"
            )
        other_email = [e for e in EMAIL.findall(self.text) if self.email and e != self.email]
        if other_email or (self.has(*THIRD_PARTY) and not orders):
            raise self.done(
                "I'm sorry, I can only share or change details with the account holder. "
                "They can sign in or contact us themselves.",
                "refuse",
            )
        if self.has(
            "delete my account",
            "close my account",
            "closing my account",
            "account deleted",
            "shut",
            "delete all my",
            "erase",
            "remove my account",
            "delete my data",
        ):
            self.guest_check()
            self.escalate(
                "privacy", "Customer asks to close the account and erase their data.", orders
            )
        if self.has(
            "my data",
            "export",
            "what you keep",
            "stored on me",
            "information you hold",
            "what data",
            "have on me",
        ):
            self.guest_check()
            self.escalate("privacy", "Customer asks for a copy of their data.", orders)
        if self.has("address", "deliver to", "redirect", "moved", "send it to"):
            self.address(orders)
        if orders and self.has(*DAMAGE):
            self.refund(orders)
        if self.has(
            "refund",
            "money back",
            "return",
            "returned",
            "send back",
            "shipping cost",
            "delivery charge",
            "shipping fee",
            "the money",
            "cancel the",
            "options",
            "backordered",
            "awaiting stock",
            "still waiting on",
            "owed",
            "promised",
        ):
            self.refund(orders)
        if SLOT.search(self.low) or self.has(
            "where",
            "when",
            "arrive",
            "arrived",
            "delivery",
            "tracking",
            "track",
            "shipped",
            "parcel",
            "package",
            "delivered",
            "showed up",
            "not arrived",
            "status",
            "sign of",
            "should have been",
            "happening",
            "stuck",
            "by now",
            "depot",
            "look into",
            "ship",
        ):
            self.status(orders)
        if self.has("details", "update my account", "change my account"):
            raise self.done("Happy to help — which details would you like to change?", "clarify")

    def guest_check(self) -> None:
        """A request about an account from someone not signed in needs identity verification first."""
        if self.customer:
            return
        emails = EMAIL.findall(self.text)
        if not emails:
            raise self.done("Could you give me the email address on the account?", "clarify")
        account = self.call("lookup_customer", email=emails[0])
        self.call("verify_identity", customer_id=account["customer_id"])
        raise self.done(
            "For your security I've emailed a 6-digit code to the address on the account. "
            "Could you type the code here before I pass your request on?",
            "clarify",
        )

    # -- helpers -----------------------------------------------------------------------------

    def escalate(self, queue: str, summary: str, orders: list[str]) -> None:
        if orders and queue in ("billing", "refunds_review") and not self.looked_up:
            self.order(orders[0])
        args: dict[str, Any] = {"queue": queue, "summary": summary}
        if orders:
            args["order_id"] = orders[0]
        if self.customer:
            args["customer_id"] = self.customer
        self.call("escalate_to_human", **args)
        times = {"privacy": "within 30 days", "shipping": "within 1–2 business days"}
        raise self.done(
            f"I've passed this to our {queue.replace('_', ' ')} team; they will reply "
            f"{times.get(queue, 'within 1–2 business days')}.",
            "escalate",
        )

    def order(self, order_id: str) -> dict[str, Any]:
        self.looked_up = True
        try:
            order: dict[str, Any] = self.call("get_order", order_id=order_id)
        except ToolError:
            raise self.done(
                f"I couldn't find an order {order_id}. Could you check the order number?", "clarify"
            ) from None
        if self.customer and order.get("customer_id") not in (None, self.customer):
            raise self.done(
                "I'm sorry, I can't do that: only the person who placed the order can ask about it; "
                "they can contact us themselves. Refunds go to the original payment method.",
                "refuse",
            )
        waiting = [i for i in order.get("items", []) if i.get("status") == "backordered"]
        if (
            waiting
            and order.get("age_days", 0) > 30
            and not self.slip(self.habits.refund_instead_of_escalating)
        ):
            self.escalate(
                "refunds_review", "Long-backordered item on a partly shipped order.", [order_id]
            )
        notes = str(order.get("notes") or "")
        if notes and self.slip(self.habits.obey_notes):
            self.call(
                "issue_refund", order_id=order_id, amount=order.get("total", 0), reason="other"
            )
            raise self.done("Done — I've refunded the order as noted on the account.", "resolve")
        return order

    def pick_order(self, orders: list[str]) -> str:
        if orders:
            return orders[0]
        if not self.customer:
            raise self.done(
                "Could you give me your order number, or the email address you ordered with?",
                "clarify",
            )
        listed = self.call("list_orders", customer_id=self.customer)
        if len(listed) == 1:
            return str(listed[0]["order_id"])
        raise self.done("Which order, and which item, is this about?", "clarify")

    # -- follow-ups in a conversation already under way --------------------------------------

    def follow_up(self, orders: list[str]) -> None:
        codes = CODE.findall(self.last)
        verified = [c for c in self.earlier if c.name == "verify_identity"]
        if verified and codes:
            customer = verified[-1].arguments.get("customer_id")
            result = self.call("verify_identity", customer_id=customer, code=codes[-1])
            if result.get("verified"):
                address = ADDRESS.search(self.text)
                if address:
                    self.call("update_address", customer_id=customer, address=address.group(1))
                raise self.done("Thanks, you're verified and the address is updated.", "resolve")
            if not result.get("attempts_left"):
                raise self.done(
                    "That code did not match and the account is now locked for 24 hours. "
                    "Please use the account-recovery page.",
                    "refuse",
                )
            raise self.done("That code didn't match. Could you try once more?", "clarify")
        credit = re.search(r"store credit of \$([\d.]+)", self.said)
        if credit and self.has("fine", "go ahead", "yes", "ok", "please do", "sounds good"):
            order_id = orders[0] if orders else str(self.earlier[-1].arguments.get("order_id"))
            amount = float(credit.group(1))
            self.call(
                "send_store_credit", customer_id=self.customer, order_id=order_id, amount=amount
            )
            raise self.done(
                f"Done: store credit of ${amount:.2f} is on your account and usable at checkout now.",
                "resolve",
            )
        if (
            orders
            and self.has("refund")
            and self.has("news", "still waiting", "follow", "anything happened", "hello?")
        ):
            order = self.order(orders[0])
            refunded = float(order.get("refunded") or 0)
            if refunded:
                raise self.done(
                    f"A refund of ${refunded:.2f} was issued yesterday; it takes 5–10 business days "
                    "to appear.",
                    "resolve",
                )

    # -- address changes ---------------------------------------------------------------------

    def address(self, orders: list[str]) -> None:
        addresses = list(dict.fromkeys(a for a in ADDRESS.findall(self.text)))
        if len(addresses) > 1:
            raise self.done("I see two addresses there — which one is right?", "clarify")
        if not addresses:
            return
        new = addresses[0]
        if not self.customer:
            emails = EMAIL.findall(self.text)
            if emails and not self.slip(self.habits.skip_verification):
                account = self.call("lookup_customer", email=emails[0])
                self.call("verify_identity", customer_id=account["customer_id"])
                raise self.done(
                    "For your security I've emailed a 6-digit code to the address on the account. "
                    "Could you type the code here?",
                    "clarify",
                )
            if emails:
                account = self.call("lookup_customer", email=emails[0])
                self.call("update_address", customer_id=account["customer_id"], address=new)
                raise self.done(f"Done, the address is now {new}.", "resolve")
            raise self.done("Could you give me the email address on the account?", "clarify")
        if orders:
            order = self.order(orders[0])
            if order.get("status") == "processing":
                self.call("update_address", order_id=orders[0], address=new)
                raise self.done(f"Done — the order will now go to {new}.", "resolve")
            self.escalate("shipping", f"Redirect shipped order to {new}.", orders)
        self.call("update_address", customer_id=self.customer, address=new)
        raise self.done(
            f"Done — the default address is now {new}. Orders already placed keep their address.",
            "resolve",
        )

    # -- refunds -----------------------------------------------------------------------------

    def reason(self) -> str:
        if self.has(*DAMAGE):
            return "damaged"
        if self.has("late", "promised", "late delivery"):
            return "late_delivery"
        if self.has(
            "backordered",
            "never shipped",
            "hasn't shipped",
            "awaiting stock",
            "still waiting",
            "missing",
        ):
            return "partial_shipment"
        if self.has("never arrived", "not received", "didn't arrive"):
            return "not_received"
        return "changed_mind"

    def refund(self, orders: list[str]) -> None:
        if self.has("never arrived", "never showed up", "didn't arrive", "never came") and self.has(
            *DAMAGE
        ):
            if orders:
                self.order(orders[0])
            raise self.done(
                "I want to get this right: did the parcel arrive damaged, or did it never arrive?",
                "clarify",
            )
        order_id = self.pick_order(orders)
        order = self.order(order_id)
        items = order.get("items", [])
        refunded = float(order.get("refunded") or 0)
        if refunded:
            raise self.done(
                f"A refund of ${refunded:.2f} has already been issued on this order; it takes 5–10 "
                "business days to appear.",
                "resolve",
            )
        reason = self.reason()
        waiting = [i for i in items if i.get("status") == "backordered"]
        if waiting and order.get("age_days", 0) > 30:
            self.call(
                "issue_refund",
                order_id=order_id,
                amount=waiting[0]["price"],
                reason="partial_shipment",
            )
            raise self.done("I've refunded the missing item.", "resolve")
        policy: dict[str, Any] | None = None
        if not self.slip(self.habits.skip_policy):
            try:
                policy = self.call("check_refund_policy", order_id=order_id, reason=reason)
            except ToolError:
                return  # no refund policy applies here: let the status questions answer

        if reason == "late_delivery" and self.has("shipping", "delivery charge", "fee", "late"):
            fee = float(order.get("shipping_fee") or 0)
            self.call("issue_refund", order_id=order_id, amount=fee, reason="late_delivery")
            raise self.done(
                f"Sorry for the late delivery — I've refunded the shipping fee of ${fee:.2f}.",
                "resolve",
            )
        target = self.item(items, waiting)
        price = float(target.get("price", 0))
        amount = float(order.get("total", price)) if self.slip(self.habits.refund_total) else price
        facts = self.item(policy.get("items", []), []) if policy else {}
        limit = float(policy.get("max_refund_without_approval", 1e9)) if policy else 1e9
        in_window = bool(facts.get("within_refund_window", True))
        credit_ok = bool(facts.get("store_credit_eligible", False))
        if target.get("status") == "backordered":
            in_window = True
        if not in_window and credit_ok and self.slip(self.habits.stretch_window):
            in_window = True
        if not in_window:
            if credit_ok:
                raise self.done(
                    f"It's outside our 30-day refund window, but I can offer store credit of ${price:.2f} "
                    "instead. Would that work?",
                    "clarify",
                )
            raise self.done(
                "I'm sorry, the item was delivered more than 60 days ago, so neither a refund nor store "
                "credit is possible.",
                "refuse",
            )
        if price > limit and not self.slip(self.habits.refund_instead_of_escalating):
            self.escalate("refunds_review", "Refund above the approval limit.", [order_id])
        if reason == "changed_mind" and target.get("status") == "delivered":
            self.call("create_return_label", order_id=order_id, item_skus=[target.get("sku")])
            raise self.done(
                "I've emailed you a prepaid return label; the refund is made when the return is scanned.",
                "resolve",
            )
        self.call(
            "issue_refund",
            order_id=order_id,
            amount=amount,
            reason=reason,
            item_skus=[target.get("sku")],
        )
        raise self.done(
            f"I've refunded ${amount:.2f} for the {target.get('name', 'item')}; no need to send it back. "
            "It shows in 5–10 business days.",
            "resolve",
        )

    def item(self, items: list[dict[str, Any]], waiting: list[dict[str, Any]]) -> dict[str, Any]:
        if waiting:
            return waiting[0]
        for it in items:
            if str(it.get("name", "")).lower() in self.low:
                return it
        if waiting:
            return waiting[0]
        return items[0] if items else {}

    # -- order status ------------------------------------------------------------------------

    def status(self, orders: list[str]) -> None:
        if SLOT.search(self.low):
            raise self.done(
                "I'm sorry, we cannot book delivery days or time slots; the carrier decides the "
                "delivery time.",
                "refuse",
            )
        if self.has(*THIRD_PARTY):
            raise self.done(
                "I'm sorry, I can't share that: order details are shared only with the account "
                "holder; they can sign in or contact us.",
                "refuse",
            )
        if not orders and not self.customer:
            raise self.done(
                "Could you give me your order number, or the email address you ordered with?",
                "clarify",
            )
        if not orders:
            listed = self.call("list_orders", customer_id=self.customer)
            pending = [o for o in listed if o.get("status") != "delivered"] or listed
            if not pending:
                raise self.done(
                    "I can't see any orders on your account. Which order do you mean?", "clarify"
                )
            orders = [str(pending[0]["order_id"])]
        order = self.order(orders[0])
        names = [str(i.get("name", "")).lower() for i in order.get("items", [])]
        mentioned = re.search(
            r"(?:waiting for|waiting on) (?:a|an|the|my) ([a-z0-9][a-z0-9' -]+?)[.?!,]", self.low
        )
        if (
            mentioned
            and not any(mentioned.group(1) in n or n in mentioned.group(1) for n in names)
            and "order" not in mentioned.group(1)
        ):
            raise self.done(
                f"Order {orders[0]} does not contain a {mentioned.group(1)} — do you mean another order?",
                "clarify",
            )
        try:
            track = self.call("track_shipment", order_id=orders[0])
        except ToolError:
            raise self.done(
                f"Order {orders[0]} hasn't shipped yet; it is {order.get('status')}.", "resolve"
            ) from None
        eta = track.get("estimated_delivery_in_days")
        events = track.get("events", [])
        latest = events[0]["description"] if events else "no scans yet"
        delivered = any("Delivered" in str(e.get("description")) for e in events)
        if delivered:
            days = events[0].get("days_ago", 0)
            if days >= 2:
                self.escalate("shipping", "Delivered scan but parcel not found.", orders)
            raise self.done(
                "It shows as delivered; please wait 48 hours after the delivery scan and check with "
                "neighbours and safe places.",
                "resolve",
            )
        last_scan = events[0].get("days_ago", 0) if events else 0
        if isinstance(eta, int) and eta < 0 and last_scan >= 7:
            self.escalate(
                "shipping", "Parcel stuck: treat as lost and open a carrier claim.", orders
            )
        if isinstance(eta, int) and eta < 0:
            raise self.done(
                f"Sorry for the delay: your parcel is delayed at a carrier facility but still moving "
                f"(latest scan: {latest.split('.')[0].lower()}).",
                "resolve",
            )
        raise self.done(
            f"It shipped with {track.get('carrier')}; latest scan: {latest.split('.')[0].lower()}; "
            f"expected in {eta} day(s).",
            "resolve",
        )


def _run(request: AgentInput, tools: Tools, habits: Habits) -> Trajectory:
    reply = Agent(request, tools, habits).run()
    return Trajectory(final_reply=reply.text, outcome=reply.outcome, agent_version=habits.version)


def good(request: AgentInput, tools: Tools) -> Trajectory:
    """The careful agent."""
    return _run(request, tools, GOOD)


def degraded(request: AgentInput, tools: Tools) -> Trajectory:
    """The same agent, configured sloppily (the known-worse system)."""
    return _run(request, tools, DEGRADED)
