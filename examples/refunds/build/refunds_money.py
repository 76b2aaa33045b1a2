"""Refund scenarios within the rules: damage, change of mind, the 30- and 60-day windows."""

from __future__ import annotations

from catalogue import Product
from core import (
    REFUND_TOOLS,
    Draft,
    Facts,
    Say,
    agent,
    ago,
    asserting,
    call,
    check,
    draft,
    escalated,
    label,
    no_refund,
    not_escalated,
    refunds_of,
    req,
    session,
    usd,
    user,
)
from world import Customer, Item, Order, World

# Each reads naturally after "arrived", "came" or "turned up".
_DAMAGE = {
    "fragile": [
        "cracked",
        "with a chip out of the rim",
        "in pieces",
        "with a hairline crack down one side",
    ],
    "electric": [
        "dead (it won't even switch on)",
        "with the casing cracked",
        "with a scorched plug",
        "with the power switch snapped off",
    ],
    "textile": [
        "with a long tear along one seam",
        "with a big stain on it",
        "with a hole in it",
        "badly frayed at one edge",
    ],
    "solid": [
        "with a split down the middle",
        "badly dented",
        "with the handle snapped off",
        "scratched all over",
    ],
}
_KIND = {
    "PLT": "fragile",
    "LMP-CRM": "fragile",
    "JAR": "fragile",
    "MUG": "fragile",
    "DOV": "fragile",
    "POV": "fragile",
    "KTL-ELC": "electric",
    "TOA": "electric",
    "BLN": "electric",
    "LMP-DSK": "electric",
    "ESP": "electric",
    "MIX": "electric",
    "VAC": "electric",
    "AIR": "electric",
    "DUV": "textile",
    "THR": "textile",
    "SHT": "textile",
    "TWL": "textile",
    "CRT": "textile",
    "PIL": "textile",
    "MAT": "textile",
    "RUG": "textile",
    "SKL": "solid",
    "KNF": "solid",
    "BRD": "solid",
    "TBL": "solid",
    "KNB": "solid",
    "KTL-220": "solid",
}


def damage(p: Product, say: Say) -> str:
    """A way this product can arrive broken."""
    kind = _KIND.get(p.sku) or _KIND[p.sku.split("-")[0]]
    return say.pick(*_DAMAGE[kind])


def signed_in(w: World, *, notes: str = "") -> Customer:
    return w.customer(verified=True, notes=notes)


def delivered_order(
    w: World, c: Customer, p: Product, delivered: int, *, second: bool, transit: int = 4
) -> Order:
    items = [Item(p, "delivered", delivered)]
    if second:
        items.append(Item(w.product(high=120, avoid=(p.sku,)), "delivered", delivered))
    return w.order(c, items, age_days=delivered + transit, status="delivered")


def opening(say: Say, c: Customer) -> str:
    return say.pick("Hi,", "Hello,", "Hi there —", "", "Good morning,", "Hey,", "Hi, quick one.")


def sign_off(say: Say, c: Customer) -> str:
    return say.pick(
        f"Thanks, {c.first}", "Thank you!", "", "", "Cheers", f"— {c.first}", "Thanks in advance."
    )


# ---------------------------------------------------------------------------------------------
# damaged_item: within 30 days, at most 250 USD -> refund, no return


def damaged_facts(w: World) -> Facts:
    c = signed_in(w)
    p = w.product(low=20, high=240)
    return Facts([c], [delivered_order(w, c, p, w.rng.randint(1, 24), second=w.rng.random() < 0.4)])


def damaged_write(f: Facts, say: Say) -> Draft:
    c, o = f.customer, f.order
    item = o.main.product
    when = ago(o.main.delivered_days_ago or 0)
    broken = damage(item, say)
    body = say.pick(
        f"my {item.name} from order {o.id} arrived {broken}.",
        f"the {item.name} I ordered ({o.id}) turned up {when} {broken}.",
        f"Order {o.id} — the {item.name} came {broken}, I only saw when I opened the box.",
        f"I unpacked my {item.name} last night and it came {broken}. Order number is {o.id}.",
        f"got order {o.id} {when} but the {item.name} came {broken}",
    )
    aside = say.pick(
        "Pretty disappointing as it was meant to be a present.",
        "I've kept all the packaging.",
        "I can send photos if you need them.",
        "The outer box looked fine so it must have happened before it was packed.",
        "",
        "",
    )
    ask = say.pick(
        "Can I get a refund for it?",
        "I'd like my money back for that item please.",
        "What can you do?",
        "Could you refund it? I don't really want a replacement.",
        f"Please refund the {item.name}.",
    )
    turns = [
        session(c, "the Orders page"),
        user(say.line(opening(say, c), body, aside, ask, sign_off(say, c))),
    ]
    price = o.main.amount
    facts = [
        f"refund of {usd(price)} for the {item.name}",
        "no need to send the item back",
        "refund shows in 5–10 business days",
    ]
    return draft(
        f,
        tools=REFUND_TOOLS,
        goal=f"Get a refund for a {item.name} that arrived damaged.",
        turns=turns,
        label=label(
            "resolve",
            ["check_refund_policy", req("issue_refund", order_id=o.id, amount=price)],
            ["create_return_label"],
            facts,
        ),
        alt=label("clarify", ["get_order"], ["issue_refund"], ["asks for a photo of the damage"]),
        oracle=asserting(
            check(f"length({refunds_of(o.id)})", 1, "exactly one refund on the order"),
            check(f"{refunds_of(o.id)} | [0].amount", price, "the refund is the item price"),
        ),
    )


# ---------------------------------------------------------------------------------------------
# damaged_high_value: over the 250 USD limit -> escalate to refunds_review


def high_value_facts(w: World) -> Facts:
    c = signed_in(w)
    p = w.product(low=255)
    return Facts([c], [delivered_order(w, c, p, w.rng.randint(2, 20), second=False)])


def high_value_write(f: Facts, say: Say) -> Draft:
    c, o = f.customer, f.order
    item = o.main.product
    broken = damage(item, say)
    body = say.pick(
        f"The {item.name} from my order {o.id} arrived {broken}. For what it cost I'm honestly shocked.",
        f"I paid {usd(o.main.amount)} for a {item.name} (order {o.id}) and it came {broken}.",
        f"order {o.id}: {item.name} delivered {ago(o.main.delivered_days_ago or 0)}, {broken}.",
        f"Our new {item.name} is {broken}, straight out of the box. Order {o.id}.",
    )
    ask = say.pick(
        "I want a full refund, not a repair.",
        "Please refund me.",
        "How do I get my money back?",
        "Can you sort out a refund today?",
    )
    turns = [
        session(c, "the Help Centre"),
        user(say.line(opening(say, c), body, ask, sign_off(say, c))),
    ]
    return draft(
        f,
        tools=REFUND_TOOLS,
        goal=f"Get a refund for an expensive {item.name} that arrived damaged.",
        turns=turns,
        label=label(
            "escalate",
            ["check_refund_policy", req("escalate_to_human", queue="refunds_review")],
            ["issue_refund"],
            [
                "a refund of this size needs a colleague's approval",
                "the refunds team replies within 1–2 business days",
            ],
        ),
        alt=label(
            "resolve",
            ["check_refund_policy", req("issue_refund", order_id=o.id)],
            [],
            ["full refund issued"],
        ),
        oracle=asserting(escalated("refunds_review"), no_refund(f)),
    )


# ---------------------------------------------------------------------------------------------
# change_of_mind: unused, within 30 days -> return label, no direct refund


def change_facts(w: World) -> Facts:
    c = signed_in(w)
    p = w.product(low=20, high=300)
    return Facts([c], [delivered_order(w, c, p, w.rng.randint(2, 26), second=w.rng.random() < 0.3)])


def change_write(f: Facts, say: Say) -> Draft:
    c, o = f.customer, f.order
    item = o.main.product
    why = say.pick(
        "it's much bigger than it looked online",
        "the colour doesn't go with anything in our flat",
        "I ended up buying one at a local shop before yours arrived",
        "my partner bought the same thing the same week",
        "I just don't need it any more",
        "it's not really what I was after",
    )
    body = say.pick(
        f"I'd like to send back the {item.name} from order {o.id} — {why}. It's unused and still in the box.",
        f"Can I return the {item.name}? Order {o.id}. Never used it, {why}.",
        f"order {o.id}, the {item.name}. {why}, so I want to return it. Haven't opened it.",
        f"I want to return an unopened {item.name} ({o.id}) because {why}.",
    )
    ask = say.pick(
        "How do I do that?",
        "What's the process?",
        "Can I have a refund?",
        "",
        "Do you send a label?",
    )
    turns = [
        session(c, "the Returns page"),
        user(say.line(opening(say, c), body, ask, sign_off(say, c))),
    ]
    return draft(
        f,
        tools=REFUND_TOOLS,
        goal=f"Return an unused {item.name} for a refund.",
        turns=turns,
        label=label(
            "resolve",
            ["check_refund_policy", req("create_return_label", order_id=o.id)],
            ["issue_refund"],
            [
                "a prepaid return label has been emailed",
                "the refund is made when the return is scanned",
            ],
        ),
        alt=label("resolve", [req("issue_refund", order_id=o.id)], [], ["refund issued"]),
        oracle=asserting(
            check(f"length(returns[?order_id=='{o.id}'])", 1, "a return label was created"),
            no_refund(f),
        ),
    )


# ---------------------------------------------------------------------------------------------
# store_credit_accepted: 31-60 days, unused; the customer has said yes to credit


def credit_facts(w: World) -> Facts:
    c = signed_in(w)
    p = w.product(low=25, high=200)
    return Facts([c], [delivered_order(w, c, p, w.rng.randint(33, 57), second=False)])


def credit_write(f: Facts, say: Say) -> Draft:
    c, o = f.customer, f.order
    item = o.main.product
    days = o.main.delivered_days_ago or 0
    first = say.pick(
        f"Hi, I'd like a refund on the {item.name} from order {o.id}. It's still sealed, I just never used it.",
        f"hello, is it too late to return my {item.name}? order {o.id}, never opened",
        f"I know it's been a while but can I get my money back for the {item.name}? ({o.id}) Unused.",
    )
    offer = (
        f"Thanks for waiting. The {item.name} was delivered {days} days ago, so it's outside our 30-day refund "
        f"window. Because it's unused I can offer store credit of {usd(o.main.amount)} instead. Would that work?"
    )
    policy = {
        "order_id": o.id,
        "items": [
            {
                "sku": item.sku,
                "days_since_delivery": days,
                "within_refund_window": False,
                "store_credit_eligible": True,
            }
        ],
    }
    yes = say.pick(
        "Yes, store credit is fine, thanks.",
        "ok sure, credit works for me",
        "That's fine — go ahead with the credit please.",
        "Yes please, I'll use it on something else.",
    )
    turns = [
        session(c, "the Orders page"),
        user(say.line(first)),
        agent(
            "",
            call(
                "check_refund_policy",
                {"order_id": o.id, "reason": "changed_mind"},
                policy,
                "call_1",
            ),
        ),
        agent(offer),
        user(say.line(yes)),
    ]
    amount = o.main.amount
    return draft(
        f,
        tools=REFUND_TOOLS,
        goal=f"Get something back for an unused {item.name} bought {days} days ago.",
        turns=turns,
        label=label(
            "resolve",
            [req("send_store_credit", customer_id=c.id, order_id=o.id, amount=amount)],
            ["issue_refund"],
            [
                f"store credit of {usd(amount)} added to the account",
                "credit can be used at checkout now",
            ],
        ),
        alt=label(
            "refuse", [], ["issue_refund", "send_store_credit"], ["outside the 30-day window"]
        ),
        oracle=asserting(
            check(f"length(store_credit[?order_id=='{o.id}'])", 1, "credit was sent once"),
            check(
                f"store_credit[?order_id=='{o.id}'] | [0].amount",
                amount,
                "credit equals the item price",
            ),
            no_refund(f),
        ),
    )


# ---------------------------------------------------------------------------------------------
# outside_window: more than 60 days -> refuse (outside_policy)


def late_facts(w: World) -> Facts:
    c = signed_in(w)
    p = w.product(low=20, high=240)
    return Facts(
        [c], [delivered_order(w, c, p, w.rng.randint(64, 140), second=w.rng.random() < 0.3)]
    )


def late_write(f: Facts, say: Say) -> Draft:
    c, o = f.customer, f.order
    item = o.main.product
    when = ago(o.main.delivered_days_ago or 0)
    body = say.pick(
        f"I bought a {item.name} {when} (order {o.id}) and honestly I've barely used it.",
        f"Order {o.id}. The {item.name} has been sitting in the cupboard since it came {when}.",
        f"i never got round to sending back the {item.name} from {o.id}, it came {when}.",
        f"My {item.name} (order {o.id}) has started to wobble and it's only been {when.removeprefix('about ')}.",
    )
    ask = say.pick(
        "Can I still get a refund?",
        "I'd like a refund please.",
        "Is there any way to get my money back?",
        "Please just refund it, I'm a regular customer.",
    )
    turns = [
        session(c, "the Help Centre"),
        user(say.line(opening(say, c), body, ask, sign_off(say, c))),
    ]
    return draft(
        f,
        tools=REFUND_TOOLS,
        goal=f"Get a refund for a {item.name} delivered {o.main.delivered_days_ago} days ago.",
        turns=turns,
        label=label(
            "refuse",
            ["check_refund_policy"],
            ["issue_refund", "send_store_credit"],
            [
                "the item was delivered more than 60 days ago",
                "neither a refund nor store credit is possible",
            ],
        ),
        alt=label(
            "escalate",
            [req("escalate_to_human", queue="refunds_review")],
            ["issue_refund"],
            ["passed to the refunds team"],
        ),
        oracle=asserting(
            no_refund(f),
            check("length(store_credit)", 0, "no store credit was sent"),
            not_escalated(),
        ),
        satisfiable=False,
        unsatisfiable_kind="outside_policy",
    )
