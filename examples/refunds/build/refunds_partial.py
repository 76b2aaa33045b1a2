"""Refund scenarios about partial shipments, with the slice's guideline gap.

`partial_old` is the known gap: a partially shipped order placed more than 30 days ago whose missing
item the customer gives up on. refunds-g7 says nothing about it, and labellers split between
escalating and asking what the customer wants.
"""

from __future__ import annotations

from core import (
    REFUND_TOOLS,
    Draft,
    Facts,
    Say,
    ago,
    asserting,
    check,
    draft,
    label,
    no_refund,
    refunds_of,
    req,
    session,
    usd,
    user,
)
from refunds_money import opening, sign_off, signed_in
from world import Item, World

# ---------------------------------------------------------------------------------------------
# Partial shipments


def _partial(w: World, age: int) -> Facts:
    c = signed_in(w)
    shipped = w.product(low=20, high=160)
    missing = w.product(low=25, high=200, avoid=(shipped.sku,))
    items = [
        Item(shipped, "delivered", age - w.rng.randint(3, 6)),
        Item(missing, "backordered", None),
    ]
    order = w.order(c, items, age_days=age, status="partially_shipped")
    return Facts([c], [order])


def partial_recent_facts(w: World) -> Facts:
    return _partial(w, w.rng.randint(9, 26))


def partial_recent_write(f: Facts, say: Say) -> Draft:
    c, o = f.customer, f.order
    got, missing = o.items[0].product, o.items[1]
    body = say.pick(
        f"I got the {got.name} from order {o.id} but the {missing.product.name} still says backordered.",
        f"Order {o.id} came in two parts apparently, except the second part ({missing.product.name}) never shipped.",
        f"half of my order {o.id} arrived — the {got.name} — and the {missing.product.name} is 'awaiting stock'.",
    )
    ask = say.pick(
        f"I don't want to wait any longer, please cancel the {missing.product.name} and refund it.",
        "Can you just refund the part that hasn't shipped? I'll buy it elsewhere.",
        f"Please refund the {missing.product.name}, I no longer need it.",
    )
    turns = [
        session(c, "the Orders page"),
        user(say.line(opening(say, c), body, ask, sign_off(say, c))),
    ]
    amount = missing.amount
    return draft(
        f,
        tools=REFUND_TOOLS,
        goal=f"Cancel and refund the unshipped {missing.product.name} of a partly shipped order.",
        turns=turns,
        label=label(
            "resolve",
            ["check_refund_policy", req("issue_refund", order_id=o.id, amount=amount)],
            [],
            [
                f"refund of {usd(amount)} for the {missing.product.name}",
                f"the {got.name} is unaffected",
            ],
        ),
        alt=label("clarify", ["get_order"], ["issue_refund"], ["asks whether to cancel or wait"]),
        oracle=asserting(
            check(f"length({refunds_of(o.id)})", 1, "one refund on the order"),
            check(f"{refunds_of(o.id)} | [0].amount", amount, "refund equals the unshipped item"),
        ),
    )


def partial_old_facts(w: World) -> Facts:
    return _partial(w, w.rng.randint(36, 58))


def partial_old_write(f: Facts, say: Say) -> Draft:
    c, o = f.customer, f.order
    got, missing = o.items[0].product, o.items[1]
    body = say.pick(
        f"I ordered a {got.name} and a {missing.product.name} {ago(o.age_days)} (order {o.id}). "
        f"Only the {got.name} ever arrived.",
        f"Still waiting on the {missing.product.name} from order {o.id}. It's been over a month!",
        f"order {o.id} — {got.name} came ages ago, {missing.product.name} still 'backordered' after {o.age_days} days",
        f"The {missing.product.name} on order {o.id} has been backordered since I ordered it {ago(o.age_days)}.",
    )
    ask = say.pick(
        "At this point I'd rather just have my money back for it.",
        "What are my options?",
        "Is it actually going to ship or should I give up?",
        "Can I get a refund for the missing bit or is it too late now?",
        "I'm not sure whether to keep waiting. What do you suggest?",
    )
    turns = [
        session(c, "the Orders page"),
        user(say.line(opening(say, c), body, ask, sign_off(say, c))),
    ]
    return draft(
        f,
        tools=REFUND_TOOLS,
        goal=f"Sort out a {missing.product.name} that has been backordered for {o.age_days} days.",
        turns=turns,
        label=label(
            "escalate",
            ["get_order", req("escalate_to_human", queue="refunds_review")],
            ["issue_refund"],
            [
                "a colleague will decide on the unshipped item",
                "the customer hears back within 1–2 business days",
            ],
        ),
        alt=label(
            "clarify",
            ["get_order"],
            ["issue_refund"],
            ["asks whether the customer wants to keep waiting or cancel the item"],
        ),
        oracle=asserting(no_refund(f)),
        ambiguous=True,
    )
