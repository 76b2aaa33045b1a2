"""Building blocks of the scenario templates: a draft case, phrasing, turns, labels and oracles.

A :class:`Scenario` makes its *facts* (customers, orders, numbers) from the :class:`World` once, and
*writes* a :class:`Draft` from those facts with a separate phrasing generator, so a paraphrased
variant keeps every fact of its seed and changes only the words.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from world import Customer, Order, World, fixtures_for, state_of

from casework.schema import (
    ArgMatcher,
    Injection,
    JsonPatchOp,
    Label,
    Oracle,
    Outcome,
    StateAssertion,
    ToolCall,
    ToolFixture,
    ToolRequirement,
    Turn,
    UnsatisfiableKind,
)

READS = frozenset({"lookup_customer", "get_order", "list_orders", "track_shipment"})
REFUND_TOOLS = READS | {
    "check_refund_policy",
    "issue_refund",
    "send_store_credit",
    "create_return_label",
    "escalate_to_human",
}
STATUS_TOOLS = READS | {"update_address", "verify_identity", "escalate_to_human"}
ACCOUNT_TOOLS = frozenset(
    {"lookup_customer", "list_orders", "verify_identity", "update_address", "escalate_to_human"}
)


@dataclass
class Facts:
    """What a scenario is about: the people and orders in it, and any scenario-specific values."""

    customers: list[Customer]
    orders: list[Order]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def customer(self) -> Customer:
        """The customer in the chat."""
        return self.customers[0]

    @property
    def order(self) -> Order:
        """The order the chat is about."""
        return self.orders[0]


@dataclass
class Draft:
    """A case before ids, split, source and provenance are assigned."""

    goal: str
    turns: list[Turn]
    state: dict[str, Any]
    fixtures: list[ToolFixture]
    label: Label
    """The label careful labellers converge on (adjudicators pick it)."""
    alt_label: Label
    """The label of a labeller who reads the situation the other plausible way."""
    oracle: Oracle
    satisfiable: bool = True
    unsatisfiable_kind: UnsatisfiableKind | None = None
    injected: list[Injection] = field(default_factory=list)
    ambiguous: bool = False
    """True where the guideline leaves a gap, so labellers genuinely split."""


@dataclass(frozen=True)
class Scenario:
    """One hand-written scenario template: how many cases, their facts, and how to write them."""

    slice: str
    name: str
    count: int
    facts: Callable[[World], Facts]
    write: Callable[[Facts, Say], Draft]
    mined_share: float = 0.5
    """Share of this scenario's cases that came from production traces (the rest: hand-written)."""


# Spans that keep their spelling in every register: ids, pseudonyms, emails, postal addresses.
KEEP = re.compile(
    r"ORD-\d{6}|CUS-\d{5}|\b[a-z]+_[0-9a-f]{12}\b|\S+@\S+\.\w+"
    r"|\d+ [A-Z][\w' ]+, [A-Z][\w ]+, [A-Z]{2} \d{5}"
)


def lower_outside_kept(text: str) -> str:
    """Lower-case ``text`` except ids, pseudonyms, emails and postal addresses."""
    out, last = [], 0
    for m in KEEP.finditer(text):
        out += [text[last : m.start()].lower(), m.group()]
        last = m.end()
    out.append(text[last:].lower())
    return "".join(out)


class Say:
    """Phrasing choices, drawn from their own generator so facts and words vary independently."""

    def __init__(self, rng: random.Random, *, casual: bool = False) -> None:
        self.rng = rng
        self.casual = casual
        """Production-style register: lower case, fewer greetings."""

    def pick(self, *options: str) -> str:
        """One of the options."""
        return self.rng.choice(options)

    def maybe(self, chance: float, text: str) -> str:
        """``text`` with probability ``chance``, else empty."""
        return text if self.rng.random() < chance else ""

    def line(self, *parts: str) -> str:
        """Join the non-empty parts with spaces; casual register lower-cases a share of messages."""
        kept = [p.strip() for p in parts if p and p.strip()]
        for i in range(1, len(kept)):
            # "Hi, can you..." rather than "Hi, Can you..." (but keep "Hi, I...").
            if kept[i - 1].endswith((",", "—")) and re.match(r"[A-Z][a-z]", kept[i]):
                kept[i] = kept[i][0].lower() + kept[i][1:]
            # A sentence that ends without punctuation before a capitalised one gets a full stop.
            elif kept[i - 1][-1].isalnum() and kept[i][0].isupper():
                kept[i - 1] += "."
        text = fix_articles(" ".join(kept))
        if self.casual and self.rng.random() < 0.45:
            text = lower_outside_kept(text)
        return text


def fix_articles(text: str) -> str:
    """'a espresso machine' -> 'an espresso machine' (the catalogue has no 'eu'/'one' words)."""
    return re.sub(r"\b([Aa]) (?=[aeiouAEIOU]|8-)", r"\1n ", text)


def ago(days: int) -> str:
    """How a customer says how long ago something happened."""
    if days <= 1:
        return "yesterday"
    if days <= 3:
        return "a couple of days ago"
    if days <= 9:
        return "last week"
    if days <= 17:
        return "a couple of weeks ago"
    if days <= 26:
        return "about three weeks ago"
    if days <= 40:
        return "over a month ago"
    if days <= 55:
        return "about six weeks ago"
    if days <= 75:
        return "about two months ago"
    return "a few months ago"


def usd(amount: float) -> str:
    """Money as customers and facts write it."""
    return f"${amount:,.2f}"


# ---------------------------------------------------------------------------------------------
# Turns


def user(text: str) -> Turn:
    """A customer message."""
    return Turn(role="user", content=text)


def agent(text: str, *calls: ToolCall) -> Turn:
    """An assistant message of the conversation prefix, optionally with the tool calls it made."""
    return Turn(role="assistant", content=text, tool_calls=list(calls))


def call(name: str, arguments: dict[str, Any], result: Any, call_id: str) -> ToolCall:
    """A recorded tool call with its result."""
    return ToolCall(name=name, arguments=arguments, result=result, id=call_id)


def session(customer: Customer | None, page: str) -> Turn:
    """The chat widget's opening system line: where the chat started and who is signed in."""
    if customer is None or not customer.verified:
        return Turn(role="system", content=f"Chat opened from {page}. Not signed in.")
    return Turn(
        role="system",
        content=f"Chat opened from {page}. Signed in as {customer.name} ({customer.id}, {customer.email}).",
    )


# ---------------------------------------------------------------------------------------------
# Labels and oracles


def req(name: str, *, allow_error: bool = False, **exact: Any) -> ToolRequirement:
    """A tool requirement; keyword arguments must match exactly.

    ``allow_error``: a call the tool answers with an error satisfies it (looking up an order that
    does not exist is what the label asks for).
    """
    return ToolRequirement(
        name=name,
        arguments={k: ArgMatcher(match="exact", value=v) for k, v in exact.items()},
        allow_error=allow_error,
    )


def label(
    outcome: Outcome,
    required: Sequence[ToolRequirement | str] = (),
    forbidden: Sequence[ToolRequirement | str] = (),
    facts: Sequence[str] = (),
) -> Label:
    """A label (labellers and guideline version are filled in by the labelling step)."""
    return Label(
        outcome=outcome,
        required_tools=[req(t) if isinstance(t, str) else t for t in required],
        forbidden_tools=[req(t) if isinstance(t, str) else t for t in forbidden],
        answer_facts=list(facts),
    )


def check(expr: str, value: Any, description: str, op: str = "eq") -> StateAssertion:
    """A JMESPath assertion over the final data state."""
    return StateAssertion.model_validate(
        {"expr": expr, "op": op, "value": value, "description": description}
    )


def asserting(*assertions: StateAssertion) -> Oracle:
    """A programmatic oracle."""
    return Oracle.model_validate({"class": "state_assertion", "assertions": list(assertions)})


def rubric(text: str) -> Oracle:
    """A judge oracle with its rubric (never the answer key)."""
    return Oracle.model_validate({"class": "rubric_judge", "rubric": text})


def human(ref: str) -> Oracle:
    """A person decides; ``ref`` names the review checklist."""
    return Oracle.model_validate({"class": "human", "ref": ref})


def refunds_of(order_id: str) -> str:
    """JMESPath: ledger entries of one order."""
    return f"ledger[?order_id=='{order_id}']"


def no_refund(f: Facts) -> StateAssertion:
    """Nothing was refunded in the trial (the ledger holds only refunds issued before the chat)."""
    before = sum(len(o.refunds) for o in f.orders)
    what = "no refund was issued" if before == 0 else "no refund beyond the one already issued"
    return check("length(ledger)", before, what)


def escalated(queue: str) -> StateAssertion:
    """Exactly one hand-off to ``queue``."""
    return check(f"length(escalations[?queue=='{queue}'])", 1, f"the chat was handed to {queue}")


def not_escalated() -> StateAssertion:
    """No hand-off at all."""
    return check("length(escalations)", 0, "the chat was not handed to a person")


def draft(
    f: Facts,
    *,
    tools: frozenset[str],
    goal: str,
    turns: list[Turn],
    label: Label,
    alt: Label,
    oracle: Oracle,
    extra_fixtures: Sequence[ToolFixture] = (),
    overrides: dict[tuple[str, str], Any] | None = None,
    **kw: Any,
) -> Draft:
    """A draft whose state and fixtures come from the facts' customers and orders."""
    fixtures = list(extra_fixtures) + fixtures_for(
        f.customers, f.orders, tools=tools, overrides=overrides
    )
    return Draft(
        goal=fix_articles(goal),
        turns=turns,
        state=state_of(f.customers, f.orders),
        fixtures=fixtures,
        label=label,
        alt_label=alt,
        oracle=oracle,
        **kw,
    )


def verify_fixtures(
    c: Customer, code: str, wrong: Sequence[tuple[str, int]] = ()
) -> list[ToolFixture]:
    """`verify_identity` for one account: send a code, accept ``code``, reject each wrong code.

    ``wrong`` pairs a wrong code with the attempts left after it.
    """
    masked = c.email[0] + "***@" + c.email.split("@")[1]
    out = [
        ToolFixture(
            tool="verify_identity",
            match={"customer_id": c.id},
            response={"code_sent": True, "to": masked},
        ),
        ToolFixture(
            tool="verify_identity",
            match={"customer_id": c.id, "code": code},
            response={"verified": True},
            effects=[JsonPatchOp(op="replace", path=f"/customers/{c.id}/verified", value=True)],
        ),
    ]
    for bad, left in wrong:
        response: dict[str, Any] = {"verified": False, "attempts_left": left}
        if left == 0:
            response["locked_for_hours"] = 24
        out.append(
            ToolFixture(
                tool="verify_identity", match={"customer_id": c.id, "code": bad}, response=response
            )
        )
    return out
