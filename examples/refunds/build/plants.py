"""Leakage plants: what `casework leakage` must find in the example, and what it must let pass.

- Four *incidents*: two production sessions about the same event, mined weeks apart, one in dev and
  one in holdout. Same words, different customer, order and date: a cross-split near-duplicate.
- Two *template-like pairs*: short messages ("where is my order?") that are supposed to look alike.
- One *prompt copy*: a hand-written case that someone pasted into `agent/few_shot.md` while fixing
  a failure; the containment check must flag it (its text is kept in sync with that file by hand).
"""

from __future__ import annotations

from catalogue import PRODUCTS
from core import (
    ACCOUNT_TOOLS,
    REFUND_TOOLS,
    STATUS_TOOLS,
    Draft,
    Facts,
    Say,
    Scenario,
    asserting,
    check,
    draft,
    escalated,
    label,
    no_refund,
    refunds_of,
    req,
    rubric,
    session,
    user,
)
from world import Customer, Item, Order, World

# ---------------------------------------------------------------------------------------------
# Incidents: (dev twin, holdout twin) share a template; facts.extra["day"] differs.

_DUTCH_OVEN = next(p for p in PRODUCTS if p.sku == "DOV-5QT")

CRACKED_BATCH = (
    "Hi, my order {order} arrived on the {day} and the 5-quart Dutch oven inside was cracked right across "
    "the lid. The box had a Parcelway sticker saying it had been repacked at the Allentown depot, and the "
    "packing paper was soaked through, so I think it was dropped in the rain there. A friend who ordered "
    "the same pot the same week had exactly the same problem, so it is probably the whole batch that went "
    "through that depot. I don't want a replacement from the same batch, I would just like a refund for the "
    "pot please. I'm happy to send photos of the lid and of the box if that helps, and I kept the packaging "
    "in case you need it back. Thanks, {first}"
)

DOUBLE_CHARGE = (
    "I placed order {order} on the evening of the {day}, when your checkout kept timing out. The page froze "
    "after I pressed Pay, so I pressed it again, and now my banking app shows two payments of the same "
    "amount for the one order. The confirmation email only lists one order number. I saw on social media "
    "that lots of people had the same problem that night, so I assume it is something on your side rather "
    "than my bank. Could you make sure I am only charged once and that the second payment goes back to my "
    "card? I would rather not raise a dispute with my bank if it can be sorted out here. Many thanks, {first}"
)

FLOODED_DEPOT = (
    "My parcel for order {order} has been stuck at the Harrisburg facility since the {day}. The tracking "
    "page still says arrived at facility and nothing else, and the carrier's phone line just plays a "
    "message about flooding at the depot and says parcels will be delayed. It was supposed to be here well "
    "over a week ago. I'm not blaming you for the weather, but I would like to know whether it is actually "
    "coming or whether it has been damaged in the flood, and if it is lost I would like it sent again rather "
    "than refunded, because it is a present for a christening at the end of the month. Thanks, {first}"
)

RESET_OUTAGE = (
    "Since your app updated on the {day} it has signed me out and I can't get back in. I pressed Forgot "
    "password three times and no reset email has arrived, not even in the spam or promotions folders. My "
    "husband has the same problem on his phone, so I don't think it is just me. I would rather not create a "
    "new account because my order history and saved addresses are on this one. Is there something wrong "
    "with the reset emails at the moment, and is there another way to get back into my account today? I am "
    "signed out on the laptop as well. Thanks, {first}"
)

_DAYS = ["3rd", "4th", "6th", "9th", "11th", "12th", "14th", "17th", "19th", "21st", "23rd", "26th"]


def _day(w: World) -> str:
    return w.rng.choice(_DAYS)


def cracked_facts(w: World) -> Facts:
    c = w.customer()
    delivered = w.rng.randint(3, 12)
    o = w.order(
        c, [Item(_DUTCH_OVEN, "delivered", delivered)], age_days=delivered + 4, status="delivered"
    )
    return Facts([c], [o], {"day": _day(w)})


def cracked_write(f: Facts, say: Say) -> Draft:
    c, o = f.customer, f.order
    text = CRACKED_BATCH.format(order=o.id, day=f.extra["day"], first=c.first)
    price = o.main.amount
    return draft(
        f,
        tools=REFUND_TOOLS,
        goal="Get a refund for a Dutch oven from a batch damaged at a carrier depot.",
        turns=[session(c, "the Orders page"), user(text)],
        label=label(
            "resolve",
            ["check_refund_policy", req("issue_refund", order_id=o.id, amount=price)],
            ["create_return_label"],
            [f"refund of {price:.2f} USD for the Dutch oven", "no need to send it back"],
        ),
        alt=label("clarify", ["get_order"], ["issue_refund"], ["asks for photos"]),
        oracle=asserting(
            check(f"length({refunds_of(o.id)})", 1, "exactly one refund on the order"),
            check(f"{refunds_of(o.id)} | [0].amount", price, "the refund is the item price"),
        ),
    )


def charge_facts(w: World) -> Facts:
    c = w.customer()
    p = w.product(low=40, high=200)
    o = w.order(c, [Item(p, "processing")], age_days=w.rng.randint(1, 3), status="processing")
    return Facts([c], [o], {"day": _day(w)})


def charge_write(f: Facts, say: Say) -> Draft:
    c, o = f.customer, f.order
    text = DOUBLE_CHARGE.format(order=o.id, day=f.extra["day"], first=c.first)
    return draft(
        f,
        tools=REFUND_TOOLS,
        goal="Get back a payment taken twice during a checkout outage.",
        turns=[session(c, "the Help Centre"), user(text)],
        label=label(
            "escalate",
            ["get_order", req("escalate_to_human", queue="billing")],
            ["issue_refund"],
            ["billing will check both payments", "they reply within 1–2 business days"],
        ),
        alt=label("resolve", [req("issue_refund", order_id=o.id)], [], ["duplicate refunded"]),
        oracle=asserting(escalated("billing"), no_refund(f)),
    )


def flood_facts(w: World) -> Facts:
    c = w.customer()
    stale = w.rng.randint(11, 15)
    o = w.order(c, [Item(w.product(high=150), "shipped")], age_days=stale + 3, status="shipped")
    o.shipment = w.shipment(
        eta_in_days=-(stale - 2),
        events=[
            (stale, "Arrived at facility", "Harrisburg facility"),
            (stale + 2, "Picked up by carrier", "Larkspur warehouse"),
        ],
    )
    return Facts([c], [o], {"day": _day(w)})


def flood_write(f: Facts, say: Say) -> Draft:
    c, o = f.customer, f.order
    text = FLOODED_DEPOT.format(order=o.id, day=f.extra["day"], first=c.first)
    return draft(
        f,
        tools=STATUS_TOOLS,
        goal="Chase a parcel stuck at a flooded carrier depot for more than ten days.",
        turns=[session(c, "the Orders page"), user(text)],
        label=label(
            "escalate",
            [req("track_shipment", order_id=o.id), req("escalate_to_human", queue="shipping")],
            [],
            ["the parcel is treated as lost", "the shipping team will reship it"],
        ),
        alt=label("resolve", ["track_shipment"], [], ["wait for the depot to reopen"]),
        oracle=asserting(escalated("shipping")),
    )


def reset_facts(w: World) -> Facts:
    c = w.customer(verified=False)
    o = w.order(c, [Item(w.product(high=150), "delivered", 30)], age_days=34, status="delivered")
    return Facts([c], [o], {"day": _day(w)})


def reset_write(f: Facts, say: Say) -> Draft:
    c = f.customer
    text = RESET_OUTAGE.format(day=f.extra["day"], first=c.first)
    return draft(
        f,
        tools=ACCOUNT_TOOLS,
        goal="Get back into the account when password-reset emails do not arrive.",
        turns=[session(None, "the Sign-in page"), user(text)],
        label=label(
            "resolve",
            [],
            ["update_address"],
            [
                "reset emails can take up to 15 minutes",
                "check the spam folder",
                "use 'Forgot password' once more",
            ],
        ),
        alt=label(
            "escalate", [req("escalate_to_human", queue="general")], [], ["a person will reset it"]
        ),
        oracle=rubric(
            "Pass if the reply explains how to get a reset email (wait up to 15 minutes, check spam, request it "
            "once more from the sign-in page) without asking for the password. Fail if it promises to reset the "
            "password itself."
        ),
    )


INCIDENTS = [
    Scenario("refunds", "incident_cracked_batch", 2, cracked_facts, cracked_write),
    Scenario("refunds", "incident_double_charge", 2, charge_facts, charge_write),
    Scenario("order_status", "incident_flooded_depot", 2, flood_facts, flood_write),
    Scenario("account", "incident_reset_outage", 2, reset_facts, reset_write),
]
"""Each scenario yields exactly two cases: the dev twin first, then the holdout twin."""


# ---------------------------------------------------------------------------------------------
# Template-like pairs: short, common intents that are supposed to look alike.


def where_facts(w: World) -> Facts:
    c = w.customer()
    o = w.order(c, [Item(w.product(high=200), "shipped")], age_days=3, status="shipped")
    o.shipment = w.shipment(
        eta_in_days=2,
        events=[
            (0, "Departed facility", "Memphis hub"),
            (2, "Picked up by carrier", "Larkspur warehouse"),
        ],
    )
    return Facts([c], [o], {"text": ["Where is my order?", "where is my order??"]})


def where_write(f: Facts, say: Say) -> Draft:
    c, o = f.customer, f.order
    return draft(
        f,
        tools=STATUS_TOOLS,
        goal="Find out where the only open order is.",
        turns=[session(c, "the Orders page"), user(f.extra["pick"])],
        label=label(
            "resolve",
            [req("list_orders", customer_id=c.id), req("track_shipment", order_id=o.id)],
            [],
            ["carrier and latest scan", "expected in 2 days"],
        ),
        alt=label("clarify", [], [], ["asks for the order number"]),
        oracle=rubric(
            "Pass if the reply finds the customer's open order and gives its carrier, latest scan and estimate. "
            "Fail if it asks for an order number the session already makes unnecessary or invents a date."
        ),
    )


def password_facts(w: World) -> Facts:
    c = w.customer()
    return Facts([c], [], {"text": ["How do I change my password?", "how do I change my password"]})


def password_write(f: Facts, say: Say) -> Draft:
    return draft(
        f,
        tools=ACCOUNT_TOOLS,
        goal="Change the account password.",
        turns=[session(f.customer, "Account settings"), user(f.extra["pick"])],
        label=label(
            "resolve",
            [],
            ["escalate_to_human", "update_address"],
            ["Account settings › Login & security › Password"],
        ),
        alt=label("escalate", ["escalate_to_human"], [], ["a colleague will help"]),
        oracle=rubric(
            "Pass if the reply gives the Account settings › Login & security steps and does not ask for the "
            "current password. Fail if it escalates or claims to change the password."
        ),
    )


TEMPLATE_PAIRS = [
    Scenario("order_status", "template_where_is_my_order", 2, where_facts, where_write),
    Scenario("account", "template_change_password", 2, password_facts, password_write),
]
"""Each yields a dev case and a holdout case whose user text differs only in case and punctuation."""


# ---------------------------------------------------------------------------------------------
# The prompt copy (keep in sync with agent/few_shot.md, example 1, which changes name and order id)

FEW_SHOT_COPY = (
    "Hello! I ordered the walnut cutting board and the set of 6 glass storage jars last week (order "
    "ORD-118406). The jars were fine but the cutting board has a crack running along the grain from one "
    "end almost to the other, so it is no use for chopping any more. I'd like a refund for the board please, "
    "not a replacement. I've attached a photo of the crack. Thanks, Marta"
)


def copied_facts(w: World) -> Facts:
    board = next(p for p in PRODUCTS if p.sku == "BRD-WAL")
    jars = next(p for p in PRODUCTS if p.sku == "JAR-GL6")
    w.reserve("Marta Kowalczyk", "CUS-31877", "ORD-118406")
    c = Customer(
        "CUS-31877",
        "Marta Kowalczyk",
        "marta.kowalczyk@example.com",
        w.address(),
        "+1 541 555 0147",
    )
    o = Order(
        "ORD-118406",
        c,
        [Item(board, "delivered", 5), Item(jars, "delivered", 5)],
        9,
        "delivered",
        4.95,
        c.address,
    )
    return Facts([c], [o])


def copied_write(f: Facts, say: Say) -> Draft:
    c, o = f.customer, f.order
    price = o.main.amount
    return draft(
        f,
        tools=REFUND_TOOLS,
        goal="Get a refund for a cracked cutting board.",
        turns=[session(c, "the Orders page"), user(FEW_SHOT_COPY)],
        label=label(
            "resolve",
            ["check_refund_policy", req("issue_refund", order_id=o.id, amount=price)],
            ["create_return_label"],
            [f"refund of {price:.2f} USD for the cutting board", "no need to send it back"],
        ),
        alt=label("clarify", [], ["issue_refund"], ["asks for a photo"]),
        oracle=asserting(
            check(f"length({refunds_of(o.id)})", 1, "exactly one refund on the order"),
            check(f"{refunds_of(o.id)} | [0].amount", price, "the refund is the board's price"),
        ),
    )


PROMPT_COPY = Scenario("refunds", "damaged_item", 1, copied_facts, copied_write)
