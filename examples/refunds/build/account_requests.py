"""Account scenarios answered by a team or by self-service: closure, data requests, email, password."""

from __future__ import annotations

from account_identity import hi, with_orders
from core import (
    ACCOUNT_TOOLS,
    Draft,
    Facts,
    Say,
    asserting,
    draft,
    escalated,
    human,
    label,
    not_escalated,
    req,
    rubric,
    session,
    user,
    verify_fixtures,
)
from world import World

# ---------------------------------------------------------------------------------------------
# Closing the account and data requests


def close_facts(w: World) -> Facts:
    return with_orders(w, w.customer())


def close_write(f: Facts, say: Say) -> Draft:
    c = f.customer
    body = say.pick(
        "I'd like to close my account please.",
        "Please delete my account, I won't be ordering again.",
        "How do I shut my Larkspur account down? I want it gone.",
        "close my account. thanks",
        "I'm moving abroad and want to close my account with you.",
    )
    turns = [session(c, "Account settings"), user(say.line(hi(say), body))]
    return draft(
        f,
        tools=ACCOUNT_TOOLS,
        goal="Close the account.",
        turns=turns,
        label=label(
            "escalate",
            [req("escalate_to_human", queue="privacy")],
            ["update_address"],
            ["the privacy team will close the account", "they answer within 30 days"],
        ),
        alt=label("resolve", [], [], ["explains how to close the account"]),
        oracle=asserting(escalated("privacy")),
    )


def close_guest_facts(w: World) -> Facts:
    f = with_orders(w, w.customer(verified=False))
    f.extra["code"] = w.code()
    return f


def close_guest_write(f: Facts, say: Say) -> Draft:
    c = f.customer
    body = say.pick(
        f"Please close the account registered to {c.email}.",
        f"I want my account deleted. It's under {c.email}.",
    )
    turns = [session(None, "the Help Centre"), user(say.line(hi(say), body))]
    return draft(
        f,
        tools=ACCOUNT_TOOLS,
        goal="Close an account from a chat that is not signed in.",
        turns=turns,
        label=label(
            "clarify",
            [req("lookup_customer", email=c.email), req("verify_identity", customer_id=c.id)],
            ["escalate_to_human"],
            ["a verification code was emailed", "asks for the code before passing the request on"],
        ),
        alt=label(
            "escalate",
            [req("escalate_to_human", queue="privacy")],
            [],
            ["privacy team will verify"],
        ),
        oracle=asserting(not_escalated()),
        extra_fixtures=verify_fixtures(c, f.extra["code"]),
    )


def data_facts(w: World) -> Facts:
    return with_orders(w, w.customer())


def data_write(f: Facts, say: Say) -> Draft:
    c = f.customer
    body = say.pick(
        "Under GDPR I'd like a copy of all the personal data you hold about me.",
        "Please send me everything you have stored on me — orders, addresses, chat logs.",
        "I want you to delete all my personal data. Not just close the account, erase it.",
        "Can I get an export of my data? I'm curious what you keep.",
        "Please remove my details from your systems and confirm in writing.",
    )
    turns = [session(c, "the Privacy page"), user(say.line(hi(say), body))]
    return draft(
        f,
        tools=ACCOUNT_TOOLS,
        goal="Request a copy or the deletion of personal data.",
        turns=turns,
        label=label(
            "escalate",
            [req("escalate_to_human", queue="privacy")],
            [],
            ["the privacy team handles the request", "they answer within 30 days"],
        ),
        alt=label("resolve", [], [], ["explains the privacy form"]),
        oracle=human("review/privacy-handoff.md"),
    )


# ---------------------------------------------------------------------------------------------
# Self-service answers


def email_facts(w: World) -> Facts:
    return with_orders(w, w.customer())


def email_write(f: Facts, say: Say) -> Draft:
    body = say.pick(
        "How do I change the email address on my account? I'm leaving my work address.",
        "can you switch my login email to my personal one",
        "I need to update my email — the old one doesn't exist any more.",
        "Please change my account email. Is that something you can do?",
    )
    turns = [session(f.customer, "Account settings"), user(say.line(hi(say), body))]
    return draft(
        f,
        tools=ACCOUNT_TOOLS,
        goal="Change the account's email address.",
        turns=turns,
        label=label(
            "resolve",
            [],
            ["escalate_to_human", "update_address"],
            [
                "Account settings › Login & security › Email",
                "a confirmation link goes to the new address",
            ],
        ),
        alt=label(
            "escalate",
            [req("escalate_to_human", queue="general")],
            [],
            ["a colleague will change it"],
        ),
        oracle=rubric(
            "Pass if the reply explains that the email is changed under Account settings › Login & security and "
            "that a confirmation link is sent to the new address. Fail if it claims to have changed the email or "
            "hands the chat to a person."
        ),
    )


def unsubscribe_facts(w: World) -> Facts:
    return with_orders(w, w.customer())


def unsubscribe_write(f: Facts, say: Say) -> Draft:
    body = say.pick(
        "Stop sending me marketing emails please.",
        "how do i unsubscribe from the newsletter, i get three a week",
        "Too many promo emails. Can you take me off the list?",
    )
    turns = [session(f.customer, "the Help Centre"), user(say.line(hi(say), body))]
    return draft(
        f,
        tools=ACCOUNT_TOOLS,
        goal="Stop marketing emails.",
        turns=turns,
        label=label(
            "resolve",
            [],
            ["escalate_to_human"],
            [
                "unsubscribe link at the bottom of every email",
                "Account settings › Communication preferences",
            ],
        ),
        alt=label("escalate", ["escalate_to_human"], [], ["passes the request on"]),
        oracle=rubric(
            "Pass if the reply gives both ways to stop marketing emails (the unsubscribe link, Communication "
            "preferences) and does not escalate. Fail if it says it has unsubscribed the customer itself."
        ),
    )


def password_facts(w: World) -> Facts:
    return with_orders(w, w.customer(verified=False))


def password_write(f: Facts, say: Say) -> Draft:
    body = say.pick(
        "I've forgotten my password and can't log in.",
        "locked out of my account, password doesn't work",
        "The password reset email never comes. How else can I get in?",
        "I keep getting 'incorrect password'. Can you reset it for me?",
    )
    turns = [session(None, "the Sign-in page"), user(say.line(hi(say), body))]
    return draft(
        f,
        tools=ACCOUNT_TOOLS,
        goal="Get back into the account after forgetting the password.",
        turns=turns,
        label=label(
            "resolve",
            [],
            ["update_address", "escalate_to_human"],
            [
                "use 'Forgot password' on the sign-in page",
                "check the spam folder for the reset email",
            ],
        ),
        alt=label("clarify", ["lookup_customer"], [], ["asks for the account email"]),
        oracle=rubric(
            "Pass if the reply explains the 'Forgot password' reset from the sign-in page (and the spam folder if "
            "the email did not arrive) without asking for the password. Fail if it asks for the current password."
        ),
    )
