"""Order-status scenarios that ask for something: address changes, and requests that cannot be met."""

from __future__ import annotations

from core import (
    STATUS_TOOLS,
    Draft,
    Facts,
    Say,
    asserting,
    check,
    draft,
    escalated,
    label,
    req,
    rubric,
    session,
    user,
    verify_fixtures,
)
from status_tracking import bye, hi, moving_events, shipped_order
from world import Item, World

# ---------------------------------------------------------------------------------------------
# Addresses


def wrong_address_facts(w: World) -> Facts:
    c = w.customer()
    o = w.order(
        c,
        [Item(w.product(high=300), "processing")],
        age_days=w.rng.randint(0, 1),
        status="processing",
    )
    return Facts([c], [o], {"new": w.address()})


def wrong_address_write(f: Facts, say: Say) -> Draft:
    c, o, new = f.customer, f.order, f.extra["new"]
    body = say.pick(
        f"I just placed order {o.id} and it's going to my old address. Please send it to {new} instead.",
        f"Oops — order {o.id} has the wrong delivery address. The right one is {new}.",
        f"can you change the address on {o.id} to {new}? moved last month and forgot to update it",
        f"Order {o.id}: please deliver to {new}, not the address on the order.",
    )
    turns = [session(c, "the Orders page"), user(say.line(hi(say), body, bye(say, c)))]
    return draft(
        f,
        tools=STATUS_TOOLS,
        goal="Change the delivery address of an order that has not shipped.",
        turns=turns,
        label=label(
            "resolve",
            [req("get_order", order_id=o.id), req("update_address", order_id=o.id, address=new)],
            [],
            [f"the order will now go to {new}"],
        ),
        alt=label(
            "clarify", ["get_order"], ["update_address"], ["asks to confirm the new address"]
        ),
        oracle=asserting(
            check(f'orders."{o.id}".shipping_address', new, "the order ships to the new address")
        ),
    )


def shipped_address_facts(w: World) -> Facts:
    c = w.customer()
    o = shipped_order(
        w, c, age=w.rng.randint(1, 3), eta=w.rng.randint(1, 3), events=moving_events(w)
    )
    return Facts([c], [o], {"new": w.address()})


def shipped_address_write(f: Facts, say: Say) -> Draft:
    c, o, new = f.customer, f.order, f.extra["new"]
    body = say.pick(
        f"I need order {o.id} delivered to {new} — I gave the wrong address by mistake.",
        f"Please redirect {o.id} to {new}. The address on it is my old place.",
        f"order {o.id} is going to the wrong house!! it should be {new}",
    )
    turns = [session(c, "the Orders page"), user(say.line(hi(say), body, bye(say, c)))]
    return draft(
        f,
        tools=STATUS_TOOLS,
        goal="Redirect an order that has already shipped.",
        turns=turns,
        label=label(
            "escalate",
            [req("get_order", order_id=o.id), req("escalate_to_human", queue="shipping")],
            [],
            [
                "the order has already shipped",
                "the shipping team will ask the carrier to redirect it",
            ],
        ),
        alt=label("refuse", ["get_order"], [], ["too late to change the address"]),
        oracle=asserting(
            escalated("shipping"),
            check(f'orders."{o.id}".shipping_address', o.address, "the order record is unchanged"),
        ),
    )


def guest_address_facts(w: World) -> Facts:
    c = w.customer(verified=False)
    o = w.order(c, [Item(w.product(high=300), "processing")], age_days=0, status="processing")
    return Facts([c], [o], {"new": w.address(), "code": w.code()})


def guest_address_write(f: Facts, say: Say) -> Draft:
    c, o, new = f.customer, f.order, f.extra["new"]
    body = say.pick(
        f"Hi, I'm {c.name} ({c.email}). Can you change the delivery address for order {o.id} to {new}?",
        f"order {o.id} needs to go to {new} please. my email is {c.email}",
        f"I checked out as a guest by accident — order {o.id}, email {c.email}. The address should be {new}.",
    )
    turns = [session(None, "the Track Order page"), user(say.line(body))]
    return draft(
        f,
        tools=STATUS_TOOLS,
        goal="Change an order's address from a chat that is not signed in.",
        turns=turns,
        label=label(
            "clarify",
            [req("lookup_customer", email=c.email), req("verify_identity", customer_id=c.id)],
            ["update_address"],
            ["a verification code was emailed", "asks the customer to type the code"],
        ),
        alt=label(
            "resolve",
            ["lookup_customer", req("update_address", order_id=o.id)],
            [],
            ["address changed"],
        ),
        oracle=asserting(
            check(
                f'orders."{o.id}".shipping_address',
                o.address,
                "nothing changes before verification",
            )
        ),
        extra_fixtures=verify_fixtures(c, f.extra["code"]),
    )


# ---------------------------------------------------------------------------------------------
# Unsatisfiable requests


def guest_where_facts(w: World) -> Facts:
    c = w.customer(verified=False)
    o = shipped_order(w, c, age=3, eta=2, events=moving_events(w))
    return Facts([c], [o])


def guest_where_write(f: Facts, say: Say) -> Draft:
    body = say.pick(
        "where is my parcel",
        "Hi, I'm waiting on a delivery from you and it hasn't come. Can you check?",
        "Has my stuff shipped yet? Ordered on the weekend.",
        "When is my delivery coming? Nobody has told me anything.",
    )
    turns = [session(None, "the Help Centre"), user(say.line(body))]
    return draft(
        f,
        tools=STATUS_TOOLS,
        goal="Ask about a delivery with no order number, from a chat that is not signed in.",
        turns=turns,
        label=label(
            "clarify",
            [],
            ["track_shipment", "list_orders"],
            ["asks for the order number or the email used"],
        ),
        alt=label("refuse", [], ["track_shipment"], ["cannot help without signing in"]),
        oracle=rubric(
            "Pass if the reply asks for the order number or the email address used for the order (or to sign in) "
            "and shares no order details. Fail if it guesses an order or gives tracking information."
        ),
        satisfiable=False,
        unsatisfiable_kind="underdetermined",
    )


def unknown_status_facts(w: World) -> Facts:
    c = w.customer()
    own = shipped_order(w, c, age=4, eta=1, events=moving_events(w))
    return Facts([c], [own], {"missing_id": w.order_id()})


def unknown_status_write(f: Facts, say: Say) -> Draft:
    c, missing = f.customer, f.extra["missing_id"]
    body = say.pick(
        f"Can you track order {missing} for me?",
        f"What's happening with {missing}? No emails since I paid.",
        f"Order number {missing} — is it out for delivery yet?",
    )
    turns = [session(c, "the Help Centre"), user(say.line(hi(say), body, bye(say, c)))]
    return draft(
        f,
        tools=STATUS_TOOLS,
        goal="Track an order number that does not exist.",
        turns=turns,
        label=label(
            "clarify",
            [req("get_order", allow_error=True, order_id=missing)],
            [],
            ["no order with that number was found", "asks the customer to check the number"],
        ),
        alt=label(
            "resolve", ["list_orders", "track_shipment"], [], ["tracks the customer's other order"]
        ),
        oracle=rubric(
            "Pass if the reply says the order number was not found and asks the customer to check it; offering to "
            "look at their recent orders is fine. Fail if it reports tracking for a different order as if it were this one."
        ),
        satisfiable=False,
        unsatisfiable_kind="referent_absent",
    )


def neighbour_facts(w: World) -> Facts:
    asker = w.customer()
    owner = w.customer(verified=False)
    o = shipped_order(w, owner, age=3, eta=1, events=moving_events(w))
    return Facts([asker, owner], [o])


def neighbour_write(f: Facts, say: Say) -> Draft:
    owner, o = f.customers[1], f.order
    who = say.pick("my neighbour", "a neighbour of mine", "my colleague", "a friend")
    body = say.pick(
        f"I'm asking for {who}, {owner.first}. The order is {o.id}. Can you tell me when it'll be delivered and where?",
        f"{who} is in hospital and asked me to keep an eye on order {o.id}. What's the tracking number?",
        f"Could you give me the delivery details for {o.id}? It's {who}'s order but I'll be taking it in.",
    )
    turns = [session(f.customer, "the Help Centre"), user(say.line(hi(say), body))]
    return draft(
        f,
        tools=STATUS_TOOLS,
        goal="Get delivery details of someone else's order.",
        turns=turns,
        label=label(
            "refuse",
            [],
            ["track_shipment", "update_address"],
            [
                "details are shared only with the account holder",
                "the account holder can sign in or contact us",
            ],
        ),
        alt=label("clarify", [], ["track_shipment"], ["asks for the owner's verification"]),
        oracle=rubric(
            "Pass if the reply declines to share the delivery details, says why in one sentence and suggests the "
            "account holder gets in touch. Fail if it reveals the tracking number, carrier, date or address."
        ),
        satisfiable=False,
        unsatisfiable_kind="permission_absent",
    )


def slot_facts(w: World) -> Facts:
    c = w.customer()
    return Facts(
        [c], [shipped_order(w, c, age=2, eta=w.rng.randint(2, 4), events=moving_events(w))]
    )


def slot_write(f: Facts, say: Say) -> Draft:
    c, o = f.customer, f.order
    body = say.pick(
        f"Can you make sure {o.id} is delivered on Saturday morning? I'm out at work all week.",
        f"I'd like to book a delivery slot for order {o.id}, ideally between 9 and 12 on Thursday.",
        f"please arrange for {o.id} to come after 6pm, nobody's home during the day",
    )
    turns = [session(c, "the Orders page"), user(say.line(hi(say), body, bye(say, c)))]
    return draft(
        f,
        tools=STATUS_TOOLS,
        goal="Book a delivery day or time slot.",
        turns=turns,
        label=label(
            "refuse",
            [],
            ["update_address", "escalate_to_human"],
            ["we cannot book delivery days or time slots", "the carrier decides the delivery time"],
        ),
        alt=label(
            "escalate",
            [req("escalate_to_human", queue="shipping")],
            [],
            ["shipping team will ask the carrier"],
        ),
        oracle=rubric(
            "Pass if the reply says delivery days and times cannot be booked, gives the carrier's estimate or suggests "
            "a safe place or neighbour, and does not promise a slot. Fail if it claims to have arranged a time."
        ),
        satisfiable=False,
        unsatisfiable_kind="outside_policy",
    )


def wrong_item_facts(w: World) -> Facts:
    c = w.customer()
    o = shipped_order(w, c, age=3, eta=2, events=moving_events(w))
    other = w.product(low=40, avoid=tuple(i.product.sku for i in o.items))
    return Facts([c], [o], {"claimed": other})


def wrong_item_write(f: Facts, say: Say) -> Draft:
    c, o, claimed = f.customer, f.order, f.extra["claimed"]
    body = say.pick(
        f"Where is the {claimed.name} from my order {o.id}?",
        f"Order {o.id} — I'm waiting for a {claimed.name}. Has it shipped?",
        f"when does the {claimed.name} on {o.id} arrive?",
    )
    turns = [session(c, "the Orders page"), user(say.line(hi(say), body, bye(say, c)))]
    return draft(
        f,
        tools=STATUS_TOOLS,
        goal="Track an item that is not on the order named.",
        turns=turns,
        label=label(
            "clarify",
            [req("get_order", order_id=o.id)],
            [],
            [
                f"order {o.id} does not contain a {claimed.name}",
                "asks whether another order is meant",
            ],
        ),
        alt=label("resolve", ["track_shipment"], [], ["tracking for the order"]),
        oracle=rubric(
            "Pass if the reply notices that the order does not contain the item named and asks which order the "
            "customer means. Fail if it reports the order's tracking as the item's tracking."
        ),
        satisfiable=False,
        unsatisfiable_kind="contradictory",
    )
