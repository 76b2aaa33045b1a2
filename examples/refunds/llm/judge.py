"""A stand-in for the LLM judge: keyword rules that answer the judge's prompts offline, deterministically.

NOT a model. It lets the demo exercise judge grading and calibration without a network; a real
project points ``[models.judge]`` at a real model. It reads only what the prompt shows (the
labeller's view of a situation: conversation, tool fixtures, data state; the guideline's slice; the
agent's reply and tool calls; the expected facts) and answers the three prompt kinds of
``casework.grading.judge.Judge``:

- *label an outcome* (calibration): which outcome a correct assistant takes next, by rules written
  from the example's guidelines (``guidelines/<slice>.md``), reading what the tools return for the
  order the customer names (an order that does not exist, an item not in it, an order already
  shipped, tracking with no scan, a refund window) and, where no tool decides, the conversation;
- *classify an outcome* (grading): which outcome the agent's final reply takes, from its wording
  and its escalation calls;
- *check facts* (grading): whether each expected fact is in the reply, by number and word overlap.

Certification on people's verdicts of its verdicts (`casework judge certify`) decides where they
count: keyword rules reach people only where the guideline is clear and the rules cover the case. Spec: ``python:llm.judge:reply``, imported from the project
root (it must be on ``sys.path``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from casework.errors import InputError
from casework.grading import prompt_blocks
from casework.llm import Message

__all__ = ["reply"]

SOURCE = "llm/judge.py"

# --- reading the prompt ------------------------------------------------------------------------

_TURN = re.compile(r"^(SYSTEM|USER|ASSISTANT|TOOL): ?", re.MULTILINE)


def _sections(text: str) -> dict[str, str]:
    """The prompt's tagged blocks by tag (``<reply>`` … ``</reply>``), unescaped.

    Only the judge's own block lines count: text inside a block has its ``<`` escaped, so a reply
    that writes ``</reply>`` or ``<expected_facts>`` stays inside its block.
    """
    return prompt_blocks(text)


@dataclass(frozen=True)
class _Turn:
    role: str
    text: str


def _turns(conversation: str) -> list[_Turn]:
    """``ROLE: content`` lines back into turns (content may span lines)."""
    marks = list(_TURN.finditer(conversation))
    return [
        _Turn(
            m.group(1),
            conversation[m.end() : marks[i + 1].start() if i + 1 < len(marks) else None].strip(),
        )
        for i, m in enumerate(marks)
    ]


@dataclass(frozen=True)
class _Chat:
    """What the rules look at in a conversation."""

    signed_in: bool
    last_user: str
    users: str
    assistant: str
    customer: str | None
    """The signed-in customer's id, as the session line names it."""

    @classmethod
    def read(cls, conversation: str) -> _Chat:
        turns = _turns(conversation)
        users = [t.text.lower() for t in turns if t.role == "USER"]
        system = " \n".join(t.text.lower() for t in turns if t.role == "SYSTEM")
        signed_in = "signed in as" in system and "not signed in" not in system
        session = re.search(r"signed in as [^(\n]*\((" + CUSTOMER_ID + ")", system)
        return cls(
            signed_in=signed_in,
            last_user=users[-1] if users else "",
            users=" \n".join(users),
            assistant=" \n".join(t.text.lower() for t in turns if t.role == "ASSISTANT"),
            customer=_normal_id(session.group(1)) if signed_in and session else None,
        )

    def refs(self) -> list[str]:
        """Order numbers the customer named, as the tools write them, in order of first mention."""
        return list(dict.fromkeys(_normal_id(r) for r in re.findall(ORDER_REF, self.users)))

    def has(self, pattern: str, where: str | None = None) -> bool:
        return re.search(pattern, self.users if where is None else where) is not None


CUSTOMER_ID = r"cus-\d{5}|customer_[0-9a-f]{12}"
ORDER_REF = r"\b(ord-\d{6}|order_[0-9a-f]{12})\b"


def _normal_id(text: str) -> str:
    """A shop id as the tools write it (``ORD-154432``, ``CUS-20158``; pseudonyms in lower case)."""
    return text.upper() if re.match(r"(ord|cus)-\d", text) else text


# --- reading the tool data (the fixtures: what each call returns) ---------------------------------


@dataclass(frozen=True)
class _Reply:
    """What one tool call returns in this situation."""

    response: Any
    error: str | None


@dataclass(frozen=True)
class _Data:
    """The situation's tool fixtures, answered the way the runner serves them."""

    fixtures: tuple[dict[str, Any], ...]

    @classmethod
    def read(cls, section: str) -> _Data:
        """The prompt's ``<tool_fixtures>`` block: one JSON object a line."""
        lines = (line for line in section.splitlines() if line.startswith("{"))
        return cls(tuple(json.loads(line) for line in lines))

    def call(self, tool: str, **arguments: Any) -> _Reply | None:
        """The reply to ``tool(**arguments)``: the most specific matching fixture (most ``match``
        keys, then the first); ``None`` when no fixture answers (the prompt shows nothing)."""
        best: dict[str, Any] | None = None
        for fixture in self.fixtures:
            match = fixture.get("match") or {}
            if fixture.get("tool") != tool or any(arguments.get(k) != v for k, v in match.items()):
                continue
            if best is None or len(match) > len(best.get("match") or {}):
                best = fixture
        return None if best is None else _Reply(best.get("response"), best.get("error"))


#: The shop's products as customers name them, and the words of the catalogue name they stand for.
PRODUCTS = {
    r"kettle": "kettle",
    r"duvet": "duvet",
    r"skillet|frying pan": "skillet",
    r"plates": "plates",
    r"bath ?mat": "bath mat",
    r"lamp": "lamp",
    r"blanket|wool throw": "throw blanket",
    r"knife|knives": "knife",
    r"jars": "jars",
    r"espresso": "espresso",
    r"mixer": "mixer",
    r"vacuum|hoover": "vacuum",
    r"side table|oak table": "side table",
    r"pillow": "pillow",
    r"towels?": "towels",
    r"pour-over|coffee set": "coffee set",
    r"purifier": "purifier",
    r"dutch oven": "dutch oven",
    r"(cutting|chopping) board": "cutting board",
    r"rug": "rug",
    r"curtains": "curtains",
    r"sheet set|sheets": "sheet set",
    r"mugs": "mugs",
    r"toaster": "toaster",
    r"blender": "blender",
}


def _named_products(text: str) -> list[str]:
    return [word for pattern, word in PRODUCTS.items() if re.search(rf"\b({pattern})\b", text)]


@dataclass(frozen=True)
class _Order:
    """What the tools say about the order the customer means."""

    ref: str
    record: dict[str, Any] | None
    """`get_order`'s response; ``None`` when it answers with an error (no such order)."""
    tracking: dict[str, Any] | None
    readdress_error: str | None
    """`update_address`'s error for this order (it has shipped), if it gives one."""
    policy: dict[str, Any] | None

    @property
    def items(self) -> list[dict[str, Any]]:
        items = (self.record or {}).get("items") or []
        return [i for i in items if isinstance(i, dict)]

    def missing_items(self, chat: _Chat) -> bool:
        """The customer names products and none of them is in this order."""
        named = _named_products(chat.users)
        names = " | ".join(str(i.get("name", "")).lower() for i in self.items)
        return bool(named) and bool(self.items) and not any(w in names for w in named)

    def concerned(self, chat: _Chat) -> list[dict[str, Any]]:
        """The items the customer talks about (every item when they name none)."""
        named = _named_products(chat.users)
        chosen = [i for i in self.items if any(w in str(i.get("name", "")).lower() for w in named)]
        return chosen or self.items

    def shipped(self) -> bool:
        status = (self.record or {}).get("status")
        return self.readdress_error is not None or status in ("shipped", "delivered")

    def scans(self) -> list[tuple[int, str]]:
        """Tracking events as (days ago, description), newest first."""
        events = (self.tracking or {}).get("events") or []
        found = [
            (int(e["days_ago"]), str(e.get("description", "")).lower())
            for e in events
            if isinstance(e, dict) and isinstance(e.get("days_ago"), int)
        ]
        return sorted(found)


def _order(chat: _Chat, data: _Data) -> _Order | None:
    """The order the customer means, read from the tools: the one they named last, or a signed-in
    customer's only order. ``None`` when no `get_order` fixture speaks about it."""
    refs = chat.refs()
    if not refs and chat.customer:
        listed = data.call("list_orders", customer_id=chat.customer)
        orders = listed.response if listed and isinstance(listed.response, list) else []
        if len(orders) == 1 and isinstance(orders[0], dict) and orders[0].get("order_id"):
            refs = [str(orders[0]["order_id"])]
    if not refs:
        return None
    ref = refs[-1]
    got = data.call("get_order", order_id=ref)
    if got is None:
        return None
    tracking = data.call("track_shipment", order_id=ref)
    readdress = data.call("update_address", order_id=ref)
    policy = data.call("check_refund_policy", order_id=ref)
    return _Order(
        ref,
        got.response if got.error is None and isinstance(got.response, dict) else None,
        tracking.response if tracking and isinstance(tracking.response, dict) else None,
        readdress.error if readdress else None,
        policy.response if policy and isinstance(policy.response, dict) else None,
    )


def _someone_elses(order: _Order, chat: _Chat) -> bool:
    owner = (order.record or {}).get("customer_id")
    return bool(chat.customer and owner and owner != chat.customer)


# --- labelling an outcome (calibration) ----------------------------------------------------------

ADDRESS = (
    r"(\b\d{1,4} [a-z][\w']*(?: [a-z][\w']*)* (?:road|row|court|lane|way|street|view|close|avenue|"
    r"drive|approach|hill|terrace|place), [a-z][\w ]+, [a-z]{2} \d{5}|\baddress_[0-9a-f]{12}\b)"
)
SECOND_CODE = r"(didn't|did not) match"
DAMAGE = (
    r"\b(broken|damaged|crack(ed)?|stain(ed)?|scorched|snapped|defect(ive)?|faulty|dent(ed)?|"
    r"smashed|leak(ing)?|chip(ped)?|shattered|torn|hole|dead|scratched|crushed|rubbish)\b"
)
OTHER_PERSON = (
    r"\b(flatmate|relative|neighbou?r|colleague|friend|spouse|husband|wife|partner|parent|"
    r"mum|dad|mother|father|son|daughter|sister|brother)('s|s')? "
    r"(account|order|orders|details|has ordered)|\bfor (a |my )?(friend|colleague|neighbou?r|"
    r"flatmate)\b|a neighbou?r of mine|on behalf of|someone else's"
)


def _days(text: str, pattern: str) -> int | None:
    """Days named right after ``pattern`` ("17 days", "today", "a week and a half")."""
    m = re.search(pattern + r"[^.!?]{0,40}?(\d+) days", text)
    if m:
        return int(m.group(m.lastindex or 1))
    if re.search(pattern + r"[^.!?]{0,40}?(week and a half|two weeks|fortnight|\d+ weeks)", text):
        return 14
    if re.search(pattern + r"[^.!?]{0,40}?(today|this morning)", text):
        return 0
    if re.search(pattern + r"[^.!?]{0,40}?yesterday", text):
        return 1
    return None


def _identity_follow_up(chat: _Chat) -> str | None:
    """A code typed after the assistant asked for one: the second wrong code locks the account."""
    if not re.search(r"\b\d{6}\b", chat.last_user):
        return None
    if chat.has(SECOND_CODE, chat.assistant):
        return "refuse"
    if "code" in chat.assistant:
        return "resolve"
    return None


def _label_account(chat: _Chat, data: _Data) -> tuple[str, str]:
    follow = _identity_follow_up(chat)
    if follow:
        return follow, "a verification code after the check was asked for"
    if chat.has(OTHER_PERSON):
        return "refuse", "the request is about another person's account"
    if chat.has(r"\b(merge|combine|join)\b[^.?!]*accounts?|two accounts"):
        return "refuse", "accounts cannot be merged"
    addresses = len(re.findall(ADDRESS, chat.users))
    if chat.has(r"password|forgot|reset|sign(ed)? me out"):
        return "resolve", "password resets are self-service"
    if not addresses and chat.has(
        r"\b(change|changing|update|switch)\b[^.?!]{0,40}\b(e-?mail|login)\b|new email"
    ):
        return "resolve", "email changes are self-service"
    if chat.has(r"unsubscribe|marketing|promo|newsletter|off the list"):
        return "resolve", "marketing emails are self-service"
    if not chat.signed_in:
        return "clarify", "not signed in: the identity check comes first"
    if chat.has(
        r"\b(close|delete|deleted|shut|erase|remove)\b[^.?!]{0,30}\b(account|data)\b|"
        r"export of my data|everything you have stored|personal data|copy of my data"
    ):
        return "escalate", "closures and data requests go to the privacy team"
    if addresses >= 2:
        return "clarify", "two addresses given: which one is right"
    if addresses:
        return "resolve", "a verified customer's address change"
    if chat.has(r"\b(details|information|info)\b"):
        return "clarify", "which details to change"
    return "resolve", "a self-service answer"


MISSING = r"never (received|got)|no parcel|wasn't|not (here|found)|missing"
READDRESS = ADDRESS + r"|\bredirect|\b(change|update)\b[^.?!]{0,30}\baddress"


def _status_from_tools(chat: _Chat, order: _Order) -> tuple[str, str] | None:
    """order_status-g3 read off the tools for the order the customer means."""
    if order.record is None:
        return "clarify", "get_order finds no order with that number"
    if _someone_elses(order, chat):
        return "refuse", "the order belongs to another customer"
    if order.missing_items(chat):
        return "clarify", "the item named is not in that order"
    if re.search(READDRESS, chat.users):
        if order.shipped():
            return "escalate", "a new address for an order that has already shipped"
        return "resolve", "a new address before the order ships"
    scans = order.scans()
    delivered = scans[0][1].startswith("delivered") if scans else False
    if delivered and chat.has(MISSING):
        if scans[0][0] >= 2:
            return "escalate", "tracking says delivered 48 hours ago or more, not found"
        return "resolve", "tracking says delivered less than 48 hours ago: wait"
    estimate = (order.tracking or {}).get("estimated_delivery_in_days")
    late = -estimate if isinstance(estimate, int) else 0
    # "No new scan": nothing scanned since the estimate passed.
    if late >= 10 and not delivered and (not scans or scans[0][0] >= late):
        return "escalate", "10 or more days past the estimate with no new scan"
    if order.tracking is not None:
        return "resolve", "answered from tracking"
    return None


def _label_status(chat: _Chat, data: _Data) -> tuple[str, str]:
    follow = _identity_follow_up(chat)
    if follow:
        return follow, "a verification code after the check was asked for"
    if chat.has(OTHER_PERSON):
        return "refuse", "tracking is shared only with the account holder"
    if chat.has(
        r"delivery slot|time slot|\bbook\b|arrange for|come after|after \d+ ?pm|before \d+ ?am|"
        r"between \d+ and \d+|on (mon|tues|wednes|thurs|fri|satur|sun)day"
    ):
        return "refuse", "the carrier decides delivery days and times"
    if not chat.signed_in:
        return "clarify", "not signed in: order number, email or code needed first"
    order = _order(chat, data)
    found = _status_from_tools(chat, order) if order else None
    if found:
        return found
    delivered = _days(chat.users, r"delivered")
    if delivered is not None and chat.has(MISSING):
        if delivered >= 2:
            return "escalate", "delivered but missing for more than 48 hours"
        return "resolve", "delivered less than 48 hours ago: wait and check safe places"
    stalled = _days(
        chat.users,
        r"(hasn't changed|hasn't moved|no update|last update was|stuck|sitting|same depot)",
    )
    if stalled is not None and stalled >= 10:
        return "escalate", "no scan for 10 days or more: a lost-parcel claim"
    late = _days(chat.users, r"(supposed to arrive|past the date|estimate was)")
    if late is not None and late >= 10:
        return "escalate", "10 or more days past the estimate"
    if re.search(ADDRESS, chat.users):
        return "resolve", "an address change the agent can make"
    return "resolve", "answered from tracking"


def _refund_window(chat: _Chat, order: _Order) -> tuple[str, str] | None:
    """refunds-g7's window and approval limit, from `check_refund_policy` for the items meant."""
    policy = order.policy or {}
    skus = {i.get("sku") for i in order.concerned(chat)}
    items = [
        i
        for i in policy.get("items") or []
        if isinstance(i, dict)
        and i.get("sku") in skus
        and isinstance(i.get("days_since_delivery"), int)
    ]
    if not items:
        return None
    days = max(int(i["days_since_delivery"]) for i in items)
    if days > 60:
        return "refuse", f"{days} days after delivery: past the 60-day limit"
    if days > 30:
        return "clarify", f"{days} days after delivery: store credit only if the customer accepts"
    limit = policy.get("max_refund_without_approval")
    amount = sum(float(i.get("price") or 0) for i in items)
    if chat.has(DAMAGE) and isinstance(limit, int | float) and amount > limit:
        return "escalate", f"{amount:.2f} USD is above the {limit:.2f} USD approval limit"
    return None


def _label_refunds(chat: _Chat, data: _Data) -> tuple[str, str]:
    if chat.has(r"store credit", chat.assistant) and chat.has(
        r"\b(fine|go ahead|yes|ok|sure|works|please do|sounds good)\b", chat.last_user
    ):
        return "resolve", "the customer accepted store credit"
    if chat.has(r"follow(ing)? up|anything happened|any news", chat.last_user):
        return "resolve", "the answer is what the ledger shows"
    if chat.has(r"ordered [^.?!]* for me|present from|gift from|to me instead|not theirs"):
        return "refuse", "the order was placed by someone else"
    if chat.has(r"charged twice|two payments|two times|double charge|twice for|dispute|chargeback"):
        return "escalate", "charges and chargebacks go to billing"
    order = _order(chat, data)
    if order and order.record is None:
        return "clarify", "get_order finds no order with that number"
    if order and _someone_elses(order, chat):
        return "refuse", "the order was placed by someone else"
    if order and order.missing_items(chat):
        return "clarify", "the item named is not in that order"
    if order is None and not chat.has(ORDER_REF):
        return "clarify", "which order is meant"
    if chat.has(r"never (arrived|came)|didn't arrive") and chat.has(DAMAGE):
        return "clarify", "the customer's account contradicts itself"
    amounts = [float(a) for a in re.findall(r"\$(\d+(?:\.\d+)?)", chat.users)]
    if chat.has(DAMAGE) and any(a > 250 for a in amounts):
        return "escalate", "above the 250.00 USD approval limit"
    if chat.has(r"backordered|awaiting stock|ever arrived|still waiting on|half of my order"):
        if chat.has(r"\b(cancel|refund (the|it)|money back|please refund)\b"):
            return "resolve", "refund the unshipped items on request"
        return "clarify", "whether to cancel the unshipped items"
    window = _refund_window(chat, order) if order else None
    if window:
        return window
    if chat.has(r"months ago|last year|ages ago"):
        return "refuse", "more than 60 days after delivery"
    if chat.has(r"checking on the refund|returned"):
        return "resolve", "the answer is when the refund was made"
    return "resolve", "within policy: refund, return label or answer"


_LABELLERS = {"account": _label_account, "order_status": _label_status, "refunds": _label_refunds}


def _slice(guideline: str, chat: _Chat) -> str:
    m = re.search(r"^slice:\s*(\w+)", guideline, re.MULTILINE)
    if m and m.group(1) in _LABELLERS:
        return m.group(1)
    if chat.has(r"refund|return|money back|credit|charged"):
        return "refunds"
    if chat.has(r"account|password|e-?mail|unsubscribe|data"):
        return "account"
    return "order_status"


def label_outcome(user: str) -> dict[str, Any]:
    """Which outcome a correct assistant takes next, from the guideline's slice, the conversation
    and what the tool fixtures return."""
    parts = _sections(user)
    chat = _Chat.read(parts.get("conversation", ""))
    data = _Data.read(parts.get("tool_fixtures", ""))
    name = _slice(parts.get("guideline", ""), chat)
    outcome, why = _LABELLERS[name](chat, data)
    return {"outcome": outcome, "reason": f"stand-in rule ({name}): {why}"}


# --- classifying a reply (grading) ---------------------------------------------------------------

_ESCALATES = (
    r"passed (this|it|you|your \w+) (on )?to|hand(ed|ing)? (you|this|it) (over )?to|"
    r"transferr|(a|our) [\w ]*(team|colleague|specialist) will|someone from our"
)
_REFUSES = (
    r"\b(can ?not|can't|cannot|unable to|not able to|won't be able)\b|neither|not possible|"
    r"isn't possible|not eligible|\bcan only\b|only the (account holder|person)|\blocked\b|decline"
)
_ASKS = r"\?|\b(could|can|would) you (tell|give|confirm|check|send|share|type)\b|\bplease (confirm|tell|send)\b"


def classify_outcome(user: str) -> dict[str, Any]:
    """Which outcome the agent's final reply takes, from its wording and its escalation calls."""
    parts = _sections(user)
    reply_text = parts.get("reply", "").lower()
    calls = parts.get("tool_calls", "")
    escalated = [
        line for line in calls.splitlines() if re.search(r"escalat|hand_?off|transfer", line)
    ]
    if any("-> error" not in line for line in escalated) or re.search(_ESCALATES, reply_text):
        return {"outcome": "escalate", "reason": "stand-in: the reply hands the case to a person"}
    if re.search(_REFUSES, reply_text):
        return {"outcome": "refuse", "reason": "stand-in: the reply declines"}
    if re.search(_ASKS, reply_text):
        return {"outcome": "clarify", "reason": "stand-in: the reply asks the customer something"}
    if not reply_text or reply_text == "(empty)":
        return {"outcome": "clarify", "reason": "stand-in: empty reply, nothing completed"}
    return {"outcome": "resolve", "reason": "stand-in: the reply completes or answers the request"}


# --- checking facts (grading) ----------------------------------------------------------------------

_STOP = frozenset(
    re.findall(
        r"\w+",
        "a an the and or of to in on for with from by at is are was be been will it its this "
        "that their they them you your we our us as any all can has have had which who when what "
        "how than then there into onto per up out about after before "
        # words that describe the reply rather than state something in it
        "reply asks ask says states explains mentions tells offers whether customer",
    )
)
#: The shop's near-synonyms, mapped to one word before comparing.
_SAME = {
    "colleague": "team",
    "person": "team",
    "specialist": "team",
    "can't": "not",
    "cannot": "not",
}
#: A constraint on the reply ("no promise of a refund"): a negated phrase without a verb. "No order
#: with that number was found" has one, so it is a statement the reply must make.
_NEGATED = re.compile(r"^(no|never|nothing)\b", re.IGNORECASE)
_VERB = re.compile(r"\b(is|are|was|were|will|has|have|had|can|could|does|did)\b", re.IGNORECASE)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)?")


def _numbers(text: str) -> set[float]:
    return {float(n.replace(",", "")) for n in _NUMBER.findall(text)}


def _stems(text: str) -> set[str]:
    """Content words cut to 4 letters ("meant" and "mean" agree), synonyms folded."""
    words = re.findall(r"[a-z][a-z'-]+", text.lower())
    return {_SAME.get(w, w)[:4] for w in words if w not in _STOP and len(w) > 2}


def _fact_present(fact: str, reply_text: str) -> tuple[bool, str]:
    """A fact is stated when its numbers are all in the reply and at least half of its words are.

    A constraint ("no promise of a refund": negated, no verb) holds when fewer than half of its
    words are.
    """
    constraint = _NEGATED.match(fact.strip()) is not None and not _VERB.search(fact)
    words = _stems(_NEGATED.sub("", fact.strip()) if constraint else fact)
    share = len(words & _stems(reply_text)) / len(words) if words else 1.0
    if constraint:
        return share < 0.5, f"stand-in: {share:.0%} of the negated words are in the reply"
    missing_numbers = _numbers(fact) - _numbers(reply_text)
    if missing_numbers:
        shown = ", ".join(f"{n:g}" for n in sorted(missing_numbers))
        return False, f"stand-in: the reply lacks {shown}"
    return share >= 0.5, f"stand-in: {share:.0%} of the fact's words are in the reply"


def _facts(listing: str) -> list[tuple[int, str]]:
    found = re.findall(r"^(\d+)\. (.*)$", listing, re.MULTILINE)
    return [(int(i), text) for i, text in found]


def check_facts(user: str) -> dict[str, Any]:
    """For each expected fact, whether the reply states it (number and word overlap)."""
    parts = _sections(user)
    reply_text = parts.get("reply", "")
    findings = []
    for index, fact in _facts(parts.get("expected_facts", "")):
        present, why = _fact_present(fact, reply_text)
        findings.append({"index": index, "present": present, "reason": why})
    return {"facts": findings}


# --- entry point ---------------------------------------------------------------------------------


def reply(messages: Sequence[Message]) -> dict[str, Any]:
    """Answer one judge prompt (system message with the JSON Schema, then the user message).

    Raises:
        InputError: The prompt is none of the judge's three kinds.
    """
    user = next((m.content for m in messages if m.role == "user"), "")
    blocks = _sections(user)
    if "expected_facts" in blocks:
        return check_facts(user)
    if "reply" in blocks:
        return classify_outcome(user)
    if "conversation" in blocks:
        return label_outcome(user)
    tail = next((line for line in reversed(user.splitlines()) if line.strip()), "")
    raise InputError(
        SOURCE,
        None,
        None,
        "the stand-in judge answers only the judge's outcome and facts prompts",
        tail,
        has_got=True,
    )
