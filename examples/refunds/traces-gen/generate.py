"""Seeded production traces with planted failure shapes, as OTLP JSON GenAI spans (one trace a line).

`python traces-gen/generate.py --seed 7 --week 1 -n 3000 --out traces-gen/week1/traces.jsonl`
(from the example project) writes traces `casework mine` and `casework shapes build` read (format
`otel`), and beside them `traces.truth.tsv`: the planted shape of every session, tab-separated
(`success` for good traffic, `tail-N` for one-off failures). casework never reads the truth file
(trace folders are read for `.jsonl`, `.ndjson` and `.json` files only); the tests and the
benchmark score against it. Generated weeks are not committed (`traces-gen/.gitignore`).

Week 1 holds the 15 shapes of :data:`WEEK1`; week 2 drops `cancel_after_dispatch` and adds
`price_match_request`. Each shape is a set of templates: several paraphrases of each customer turn,
random customers, order ids, products and amounts, optional greetings and follow-ups, tool
sequences that vary in order and length, and failure signals that vary (thumbs down, abandoned,
escalated, tool errors, retries) — the variety a real shape has, not the clusterer's features.
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FIRST = ["Ada", "Bob", "Chen", "Dana", "Emeka", "Fatima", "Goran", "Hana", "Ines", "Jonas", "Kiri",
         "Luis", "Mei", "Nadia", "Omar", "Priya", "Quinn", "Rosa", "Sven", "Tariq", "Uma", "Vera"]  # fmt: skip
LAST = ["Fakename", "Placeholder", "Notreal", "Example", "Testperson", "Madeup", "Sample",
        "Dummy", "Fictive", "Invented", "Pretend", "Standin"]  # fmt: skip
PRODUCTS = ["glass kettle", "desk lamp", "blender", "toaster", "wool rug", "coffee grinder",
            "bath towel set", "cast iron pan", "table fan", "bedside clock", "knife block",
            "linen duvet", "ceramic vase", "stand mixer", "air purifier", "rice cooker"]  # fmt: skip
HELLO = ["", "Hi. ", "Hello, ", "Hey there. ", "Good morning. ", "Hi team, "]
THANKS = ["", " Thanks.", " Thank you.", " Please help.", " Cheers."]


@dataclass
class Conv:
    """One conversation being built: messages (OpenAI-like dicts) and session flags."""

    rng: random.Random
    customer: dict[str, str]
    messages: list[dict[str, Any]] = field(default_factory=list)
    feedback: str | None = None
    escalated: bool = False
    calls: int = 0

    def user(self, text: str) -> None:
        self.messages.append({"role": "user", "text": text})

    def say(self, text: str) -> None:
        self.messages.append({"role": "assistant", "text": text})

    def tool(
        self, name: str, args: dict[str, Any], result: Any = None, error: str | None = None
    ) -> None:
        self.calls += 1
        call_id = f"call_{self.rng.getrandbits(48):012x}"
        self.messages.append({"role": "assistant", "call": (call_id, name, args)})
        self.messages.append({"role": "tool", "id": call_id, "name": name, "result": result,
                              "error": error})  # fmt: skip


def _order(rng: random.Random) -> str:
    return f"ORD-{rng.randrange(100000, 999999)}"


def _amount(rng: random.Random) -> float:
    return round(rng.uniform(12, 240), 2)


def _open(c: Conv, lines: list[str], **kw: Any) -> None:
    r = c.rng
    text = r.choice(lines).format(**kw)
    name = c.customer["name"] if r.random() < 0.3 else ""
    intro = f"This is {name}. " if name else ""
    c.user(r.choice(HELLO) + intro + text + r.choice(THANKS))


def _fail_end(c: Conv, *, abandon: str | None = None) -> None:
    """End a failing conversation with one of several signals (the shape does not fix which)."""
    r = c.rng
    pick = r.random()
    if abandon and pick < 0.35:
        c.user(abandon)  # unanswered: abandoned
    elif pick < 0.8:
        c.feedback = r.choice(["thumbs_down", "down", "negative"])
    else:
        c.tool("transfer_to_human", {"reason": r.choice(["customer request", "unresolved"])},
               {"queued": True})  # fmt: skip
        c.say("I've passed this to a colleague who will contact you.")


# --- the planted shapes ---------------------------------------------------------------------


def wrong_account_order(c: Conv) -> None:
    r, o, p = c.rng, _order(c.rng), r_product(c.rng)
    _open(c, ["My {p} from order {o} never came, can you refund it?",
              "I want a refund for order {o}, the {p}.",
              "Order {o} ({p}) is wrong, I'd like my money back.",
              "Please check order {o}, I paid for a {p} and want to return it."], o=o, p=p)  # fmt: skip
    c.tool("get_order", {"order_id": o},
           {"order_id": o, "customer_id": f"CUS-{r.randrange(10000, 99999)}", "status": "delivered"})  # fmt: skip
    c.say(r.choice(["That order belongs to a different account, so I can't act on it.",
                    "I can't find that order under your account; it is registered to someone else.",
                    "This order number is linked to another customer account."]))  # fmt: skip
    c.user(r.choice(["But it's my order, I have the confirmation email!",
                     "That's impossible, I placed it myself.",
                     "I definitely bought it, maybe with my other email?"]))  # fmt: skip
    c.say("For security I can only discuss orders on the account you are signed in with.")
    _fail_end(c, abandon="So what am I supposed to do now?")


def r_product(rng: random.Random) -> str:
    return rng.choice(PRODUCTS)


def timeout_retry_storm(c: Conv) -> None:
    r, o = c.rng, _order(c.rng)
    _open(c, ["Where is my order {o}?", "Can you tell me the status of {o}?",
              "Order {o} hasn't arrived, what's going on?", "Any update on {o} please"], o=o)  # fmt: skip
    for _ in range(r.randint(2, 5)):
        c.tool("get_order", {"order_id": o}, "upstream timeout",
               error=r.choice(["timeout after 10s", "gateway timeout", "deadline exceeded"]))  # fmt: skip
    c.say(r.choice(["Sorry, our order system is not responding right now.",
                    "I'm having trouble reaching the order system.",
                    "The order lookup keeps timing out."]))  # fmt: skip
    _fail_end(c, abandon="Hello? Is anyone there?")


def late_partial_refund(c: Conv) -> None:
    r, o, p = c.rng, _order(c.rng), r_product(c.rng)
    days = r.randint(35, 120)
    _open(c, ["I bought a {p} {d} days ago (order {o}) and one part is broken, can I get part of the money back?",
              "Partial refund please for order {o}: the {p} is missing a piece. I got it {d} days ago.",
              "The {p} from {o} came {d} days ago and is half broken. Refund some of it?"], o=o, p=p, d=days)  # fmt: skip
    c.tool(
        "get_order",
        {"order_id": o},
        {"order_id": o, "status": "delivered", "delivered_days_ago": days},
    )
    c.say(r.choice(["Orders older than 30 days are outside the refund window.",
                    "I'm afraid the 30-day return window has passed for this order."]))  # fmt: skip
    c.user(r.choice(["It's defective, the window shouldn't matter!",
                     "Nobody told me about 30 days.", "Can you make an exception?"]))  # fmt: skip
    c.escalated = r.random() < 0.5
    _fail_end(c, abandon="This is ridiculous.")


def duplicate_refund(c: Conv) -> None:
    r, o = c.rng, _order(c.rng)
    a = _amount(r)
    _open(c, ["I still haven't got the refund for {o}.", "Where's my refund of ${a} for order {o}?",
              "The refund for {o} never showed up on my card.",
              "You promised a refund on {o} a week ago and nothing arrived."], o=o, a=a)  # fmt: skip
    c.tool("get_order", {"order_id": o}, {"order_id": o, "status": "refunded", "refund_amount": a})
    c.tool("issue_refund", {"order_id": o, "amount": a},
           error=r.choice(["already refunded", "refund exists for order", "duplicate refund rejected"]))  # fmt: skip
    c.say("It looks like a refund was already processed for that order.")
    _fail_end(c, abandon="It was NOT processed, I checked my bank.")


def address_after_shipping(c: Conv) -> None:
    r, o = c.rng, _order(c.rng)
    street = r.choice(["Elm Street", "Harbour Road", "Mill Lane", "Kings Avenue"])
    _open(c, ["I need to change the delivery address of {o} to {n} {s}.",
              "Wrong address on {o}! Please ship to {n} {s} instead.",
              "Can you update the shipping address for order {o}? New one is {n} {s}."],
          o=o, n=r.randint(1, 300), s=street)  # fmt: skip
    if r.random() < 0.5:
        c.tool("get_order", {"order_id": o}, {"order_id": o, "status": "shipped"})
    c.tool("update_address", {"order_id": o, "address": street},
           error=r.choice(["order already shipped", "address locked after dispatch"]))  # fmt: skip
    c.say("The parcel has already shipped, so the address can't be changed any more.")
    _fail_end(c, abandon="Then it will go to my old flat, great.")


def cancel_after_dispatch(c: Conv) -> None:
    r, o, p = c.rng, _order(c.rng), r_product(c.rng)
    _open(c, ["Cancel order {o} please, I don't want the {p} anymore.",
              "I changed my mind about the {p}. Cancel {o}.",
              "Please cancel my order {o} right away."], o=o, p=p)  # fmt: skip
    c.tool("cancel_order", {"order_id": o},
           error=r.choice(["cannot cancel: dispatched", "order dispatched from warehouse"]))  # fmt: skip
    c.say(r.choice(["It has left our warehouse so it can't be cancelled.",
                    "Unfortunately the order was dispatched and cancellation is no longer possible."]))  # fmt: skip
    _fail_end(c, abandon="So I have to pay for return shipping??")


def missing_item(c: Conv) -> None:
    r, o, p = c.rng, _order(c.rng), r_product(c.rng)
    q = r_product(r)
    _open(c, ["The box for {o} arrived but the {p} was not inside.",
              "My parcel {o} is missing the {p}, only the {q} was there.",
              "Got order {o} today and an item is missing: the {p}."], o=o, p=p, q=q)  # fmt: skip
    c.tool("get_order", {"order_id": o}, {"order_id": o, "status": "delivered", "items": [p, q]})
    c.say("Our records show every item of the order was packed and delivered.")
    c.user(r.choice(["It wasn't in the box, I promise.", "I'm telling you it's missing.",
                     "Check again, the item is missing."]))  # fmt: skip
    c.say("I can only go by the warehouse packing record.")
    _fail_end(c, abandon="Unbelievable.")


def promo_code(c: Conv) -> None:
    r, o = c.rng, _order(c.rng)
    code = r.choice(["SPRING20", "WELCOME10", "HOME15", "FREESHIP"])
    _open(c, ["My discount code {k} was not applied to order {o}.",
              "I used promo code {k} but got charged full price on {o}.",
              "Why didn't {k} work on my order {o}? I want the discount."], o=o, k=code)  # fmt: skip
    c.tool("get_order", {"order_id": o}, {"order_id": o, "status": "paid", "discount": 0})
    c.say(r.choice(["I'm unable to apply a promotion after checkout.",
                    "Promo codes can't be added to orders that are already paid."]))  # fmt: skip
    _fail_end(c, abandon="Then refund the difference.")


def reset_email_loop(c: Conv) -> None:
    r = c.rng
    ask = r.choice(["I never receive the password reset email.",
                    "The reset link email doesn't arrive.",
                    "Password reset mail is not coming through."])  # fmt: skip
    _open(c, [ask])
    c.tool("send_password_reset", {"customer_id": c.customer["id"]}, {"sent": True})
    c.say("I've sent a new password reset email; please check your spam folder.")
    c.user(ask)  # the same message again: a retry
    c.tool("send_password_reset", {"customer_id": c.customer["id"]}, {"sent": True})
    c.say("I've sent another reset email.")
    _fail_end(c, abandon=ask)


def wrong_currency(c: Conv) -> None:
    r, o = c.rng, _order(c.rng)
    a = _amount(r)
    cur = r.choice(["EUR", "GBP", "CAD"])
    _open(c, ["My refund for {o} came in USD but I paid in {u}.",
              "You refunded {o} in the wrong currency, I paid {a} {u}.",
              "The refund for order {o} was converted from {u} and I lost money on the exchange rate."],
          o=o, u=cur, a=a)  # fmt: skip
    c.tool("get_refund", {"order_id": o}, {"amount": a, "currency": "USD"})
    c.say("Refunds are always issued in USD, the store currency.")
    _fail_end(c, abandon="That's not what your site says about currency.")


def gift_card(c: Conv) -> None:
    r = c.rng
    card = f"GC-{r.randrange(1000, 9999)}-{r.randrange(1000, 9999)}"
    _open(c, ["What's the balance on gift card {g}?", "My gift card {g} says invalid at checkout.",
              "Can you check gift card {g}, it won't redeem."], g=card)  # fmt: skip
    c.tool("get_gift_card", {"card": card}, error=r.choice(["card not found", "unknown gift card"]))
    c.say("I can't find that gift card in our system.")
    _fail_end(c, abandon="It was a present, the number is on the card!")


def subscription_cancel(c: Conv) -> None:
    r = c.rng
    plan = r.choice(["coffee bean subscription", "monthly filter plan", "candle club membership"])
    _open(c, ["I want to cancel my {s}.", "How do I stop the {s}? Cancel it.",
              "Please end my {s} before the next charge."], s=plan)  # fmt: skip
    c.say(r.choice(["I'm not able to manage subscriptions from here.",
                    "Subscriptions are handled by a separate team."]))  # fmt: skip
    c.tool(
        r.choice(["escalate_to_human", "handoff_billing"]),
        {"topic": "subscription"},
        {"ticket": "open"},
    )
    c.say("I've opened a ticket; someone will be in touch.")
    if r.random() < 0.5:
        c.feedback = "thumbs_down"


def damaged_photo(c: Conv) -> None:
    r, o, p = c.rng, _order(c.rng), r_product(c.rng)
    _open(c, ["The {p} in order {o} arrived smashed.", "My {p} ({o}) came damaged, the box was crushed.",
              "Order {o}: the {p} is dented and scratched."], o=o, p=p)  # fmt: skip
    c.tool("get_order", {"order_id": o}, {"order_id": o, "status": "delivered"})
    c.say("I'm sorry! Could you upload a photo of the damage so I can file the claim?")
    c.user(r.choice(["The upload button doesn't work.", "How do I attach a photo here?",
                     "I already threw the box away, I can't take a photo."]))  # fmt: skip
    c.say("I need a photo before I can continue with a damage claim.")
    _fail_end(c, abandon="I can't send a photo, I told you.")


def tracking_invalid(c: Conv) -> None:
    r, o = c.rng, _order(c.rng)
    tn = f"1Z{r.getrandbits(40):010X}"
    _open(c, ["The tracking number {t} for {o} doesn't work.", "Courier site says {t} is unknown. Order {o}.",
              "Tracking for {o} shows nothing, number {t}."], o=o, t=tn)  # fmt: skip
    c.tool(
        "track_shipment",
        {"tracking": tn},
        error=r.choice(["unknown tracking number", "no such shipment"]),
    )
    if r.random() < 0.5:
        c.tool("track_shipment", {"tracking": tn}, error="unknown tracking number")
    c.say("The carrier doesn't recognise that tracking number yet.")
    _fail_end(c, abandon="It's been a week, it should be recognised.")


def split_shipment(c: Conv) -> None:
    r, o, p = c.rng, _order(c.rng), r_product(c.rng)
    q = r_product(r)
    _open(c, ["Only half of order {o} came: I got the {p} but not the {q}.",
              "Part of {o} arrived ({p}), the {q} is still missing.",
              "Order {o} arrived in two parts? The {q} hasn't come."], o=o, p=p, q=q)  # fmt: skip
    c.tool("get_order", {"order_id": o}, {"order_id": o, "status": "partially_shipped"})
    c.tool("issue_refund", {"order_id": o, "amount": _amount(r), "reason": "not received"},
           {"status": "issued"})  # fmt: skip
    c.say("I've refunded the whole order for you.")
    c.user(r.choice(["But I wanted the rest of the order, not a refund!",
                     "Wait, I still want the missing item shipped.",
                     "Why the full order? I have half of it."]))  # fmt: skip
    _fail_end(c, abandon="Please undo that refund.")


def price_match(c: Conv) -> None:
    r, o, p = c.rng, _order(c.rng), r_product(c.rng)
    _open(c, ["The {p} I bought in {o} is now cheaper on your site, can you match the price?",
              "Price dropped on the {p} two days after order {o}. Refund the difference?",
              "I paid more for the {p} ({o}) than it costs today, price match please."], o=o, p=p)  # fmt: skip
    c.tool("get_order", {"order_id": o}, {"order_id": o, "status": "delivered"})
    c.tool("get_price", {"product": p}, {"price": _amount(r)})
    c.say("We don't offer price adjustments after purchase.")
    _fail_end(c, abandon="Then I'll return it and buy it again.")


Shape = Callable[[Conv], None]
#: Week 1's planted shapes and their weights (shares of failing traffic, before the tail).
WEEK1: dict[str, tuple[Shape, float]] = {
    "wrong_account_order": (wrong_account_order, 12),
    "timeout_retry_storm": (timeout_retry_storm, 11),
    "late_partial_refund": (late_partial_refund, 10),
    "duplicate_refund": (duplicate_refund, 9),
    "address_after_shipping": (address_after_shipping, 8),
    "cancel_after_dispatch": (cancel_after_dispatch, 8),
    "missing_item": (missing_item, 7),
    "promo_code": (promo_code, 7),
    "reset_email_loop": (reset_email_loop, 6),
    "wrong_currency": (wrong_currency, 5),
    "gift_card": (gift_card, 5),
    "subscription_cancel": (subscription_cancel, 4),
    "damaged_photo": (damaged_photo, 4),
    "tracking_invalid": (tracking_invalid, 3),
    "split_shipment": (split_shipment, 3),
}
#: Week 2: one shape vanished, one new.
WEEK2 = {k: v for k, v in WEEK1.items() if k != "cancel_after_dispatch"} | {
    "price_match_request": (price_match, 8)
}

TAIL = [
    "My dog chewed the warranty card, does the warranty still count?",
    "Can you engrave a message on the cutting board I already received?",
    "The instruction manual is in Finnish only.",
    "Your delivery driver parked on my lawn and left tyre marks.",
    "I'd like an invoice made out to my company with a VAT number.",
    "The rug smells of vinegar, is that normal for wool?",
    "Can I pick up my order at your warehouse myself?",
    "My grandmother wants to pay by cheque, is that possible?",
    "The candle melted in the heatwave before I lit it.",
    "Is the blender safe to use at high altitude?",
    "I received someone else's handwritten note inside the box.",
    "Do you ship to research stations in Antarctica?",
]

GOOD_STATUS = ["Where is my order {o}?", "Status of order {o} please.", "Has {o} shipped yet?"]
GOOD_REFUND = [
    "The {p} from {o} arrived broken, refund please.",
    "I'd like to return the {p} ({o}).",
]


def success(c: Conv) -> None:
    r, o, p = c.rng, _order(c.rng), r_product(c.rng)
    if r.random() < 0.5:
        _open(c, GOOD_STATUS, o=o)
        c.tool(
            "get_order",
            {"order_id": o},
            {"order_id": o, "status": "shipped", "eta_days": r.randint(1, 4)},
        )
        c.say("It has shipped and should arrive within a few days.")
    else:
        _open(c, GOOD_REFUND, o=o, p=p)
        c.tool("get_order", {"order_id": o}, {"order_id": o, "status": "delivered"})
        c.tool("issue_refund", {"order_id": o, "amount": _amount(r)}, {"status": "issued"})
        c.say("Done: your refund is on its way.")
    c.user(r.choice(["Thanks!", "Great, thank you.", "Perfect."]))
    c.say("You're welcome!")
    if r.random() < 0.5:
        c.feedback = "thumbs_up"


def tail(c: Conv, text: str) -> None:
    c.user(text)
    c.say("I'm not sure I can help with that.")
    c.feedback = "thumbs_down"


# --- OTLP spans -----------------------------------------------------------------------------


def _kv(attrs: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for k, v in attrs.items():
        if isinstance(v, bool):
            out.append({"key": k, "value": {"boolValue": v}})
        else:
            out.append({"key": k, "value": {"stringValue": str(v)}})
    return out


def _genai(m: dict[str, Any]) -> dict[str, Any]:
    if m["role"] == "tool":
        body = m["error"] if m["error"] else m["result"]
        return {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": m["id"], "response": body}],
        }
    if "call" in m:
        cid, name, args = m["call"]
        return {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": cid, "name": name, "arguments": args}],
        }
    return {"role": m["role"], "parts": [{"type": "text", "content": m["text"]}]}


def to_otlp(c: Conv, session: str, trace_id: str, start_ns: int) -> dict[str, Any]:
    """One conversation as one OTLP export: an agent span, one chat span, one span per tool call."""
    rng = c.rng
    root = f"{rng.getrandbits(64):016x}"
    user = {"user.id": c.customer["id"], "user.full_name": c.customer["name"],
            "user.email": c.customer["email"], "gen_ai.conversation.id": session}  # fmt: skip
    root_attrs: dict[str, Any] = {
        "gen_ai.operation.name": "invoke_agent",
        "gen_ai.agent.name": "support",
        **user,
    }
    if c.feedback:
        root_attrs["feedback"] = c.feedback
    if c.escalated:
        root_attrs["escalated"] = True
    msgs = [_genai(m) for m in c.messages]
    spans = [
        {"traceId": trace_id, "spanId": root, "name": "invoke_agent support", "kind": 3,
         "startTimeUnixNano": str(start_ns), "endTimeUnixNano": str(start_ns + 9_000_000_000),
         "attributes": _kv(root_attrs), "status": {}},
        {"traceId": trace_id, "spanId": f"{rng.getrandbits(64):016x}", "parentSpanId": root,
         "name": "chat gpt-4o-mini", "kind": 3, "startTimeUnixNano": str(start_ns + 1000),
         "endTimeUnixNano": str(start_ns + 8_000_000_000),
         "attributes": _kv({"gen_ai.operation.name": "chat", **user,
                            "gen_ai.input.messages": json.dumps(msgs[:-1]),
                            "gen_ai.output.messages": json.dumps(msgs[-1:])}), "status": {}},
    ]  # fmt: skip
    for i, m in enumerate(x for x in c.messages if x["role"] == "tool"):
        attrs: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": m["name"],
                                 "gen_ai.tool.call.id": m["id"]}  # fmt: skip
        call = next(x["call"] for x in c.messages if "call" in x and x["call"][0] == m["id"])
        attrs["gen_ai.tool.call.arguments"] = json.dumps(call[2])
        if m["result"] is not None:
            attrs["gen_ai.tool.call.result"] = json.dumps(m["result"])
        status = {"code": 2, "message": m["error"]} if m["error"] else {}
        t = start_ns + 2000 + i * 1000
        spans.append({"traceId": trace_id, "spanId": f"{rng.getrandbits(64):016x}", "parentSpanId": root,
                      "name": f"execute_tool {m['name']}", "kind": 3, "startTimeUnixNano": str(t),
                      "endTimeUnixNano": str(t + 500), "attributes": _kv(attrs), "status": status})  # fmt: skip
    resource = {"attributes": _kv({"service.name": "larkspur-support-agent"})}
    return {
        "resourceSpans": [
            {"resource": resource, "scopeSpans": [{"scope": {"name": "gen"}, "spans": spans}]}
        ]
    }


def generate(
    seed: int, week: int, n: int, failing_share: float = 0.4
) -> tuple[list[str], list[dict[str, str]]]:
    """``n`` traces (JSON lines) and the truth (`session`, `shape`) of each, deterministic in ``seed``."""
    rng = random.Random(f"{seed}:{week}")
    shapes = WEEK1 if week == 1 else WEEK2
    names = list(shapes)
    weights = [shapes[k][1] for k in names]
    tails = list(range(len(TAIL)))
    rng.shuffle(tails)
    lines, truth = [], []
    start = 1_764_547_200_000_000_000 + (week - 1) * 7 * 86_400_000_000_000
    for i in range(n):
        first, last = rng.choice(FIRST), rng.choice(LAST)
        cust = {"name": f"{first} {last}", "email": f"{first}.{last}{rng.randrange(100)}@example.com".lower(),
                "id": f"CUS-{rng.randrange(10000, 99999)}"}  # fmt: skip
        c = Conv(rng, cust)
        roll = rng.random()
        if roll >= failing_share:
            success(c)
            label = "success"
        elif roll < failing_share * 0.02 and tails:
            t = tails.pop()
            tail(c, TAIL[t])
            label = f"tail-{t}"
        else:
            label = rng.choices(names, weights)[0]
            shapes[label][0](c)
        session = f"sess-w{week}-{seed}-{i:06d}"
        trace_id = f"{rng.getrandbits(128):032x}"
        lines.append(json.dumps(to_otlp(c, session, trace_id, start + i * 60_000_000_000)))
        truth.append({"session": session, "shape": label})
    return lines, truth


def main() -> None:
    """Command line: write the traces and their truth file."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--week", type=int, choices=(1, 2), default=1)
    parser.add_argument("-n", type=int, default=3000)
    parser.add_argument("--out", type=Path, required=True, help="Trace file to write (.jsonl).")
    args = parser.parse_args()
    lines, truth = generate(args.seed, args.week, args.n)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    side = args.out.with_suffix(".truth.tsv")
    side.write_text("".join(f"{t['session']}\t{t['shape']}\n" for t in truth), encoding="utf-8")
    failing = sum(t["shape"] != "success" for t in truth)
    print(f"{args.out}: {len(lines)} traces, {failing} planted failures; truth in {side}")


if __name__ == "__main__":
    main()
