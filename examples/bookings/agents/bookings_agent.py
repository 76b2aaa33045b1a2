"""Scripted airline agents for the bookings example: ``good`` and ``sloppy``.

``good`` reads the request (book N seat(s) from X to Y on DATE / cancel BK-NNNN), searches,
takes the cheapest flight with enough seats, prices it, checks the user's balance and books, or
cancels after looking the booking up; what it cannot do it refuses without writing. ``sloppy``
books the flight with the lowest id (not the cheapest), checks neither seats nor balance, and
cancels without looking.
"""

from __future__ import annotations

import re
from typing import Any

from casework.runner import ToolError, Tools
from casework.schema import AgentInput, Trajectory

_BOOK = re.compile(
    r"book (\d+) seats? from ([A-Z]{3}) to ([A-Z]{3}) on (\d{4}-\d\d-\d\d)", re.IGNORECASE
)
_CANCEL = re.compile(r"cancel (?:my )?booking (BK-\d{4})", re.IGNORECASE)
_USER = re.compile(r"\(user (u-[a-z]+)\)")


def _reply(text: str, outcome: str, version: str) -> Trajectory:
    return Trajectory(final_reply=text, outcome=outcome, agent_version=version)  # type: ignore[arg-type]


def _run(request: AgentInput, tools: Tools, *, sloppy: bool) -> Trajectory:
    version = "bookings-sloppy-1" if sloppy else "bookings-good-1"
    text = " ".join(t.content for t in request.turns)
    user = _USER.search(text)
    cancel, book = _CANCEL.search(text), _BOOK.search(text)
    if user is None or (cancel is None and book is None):
        return _reply("Could you tell me your user id and the trip or booking?", "clarify", version)
    try:
        if cancel is not None:
            return _cancel(tools, cancel.group(1).upper(), sloppy, version)
        assert book is not None
        return _book(tools, user.group(1), book.groups(), sloppy, version)
    except ToolError as exc:
        return _reply(f"Unfortunately I can't do that: {exc}.", "refuse", version)


def _cancel(tools: Tools, booking_id: str, sloppy: bool, version: str) -> Trajectory:
    if not sloppy:
        tools.call("get_booking", booking_id=booking_id)
    done = tools.call("cancel_booking", booking_id=booking_id)
    return _reply(
        f"Booking {booking_id} is cancelled; {done['refunded']} refunded.", "resolve", version
    )


def _book(
    tools: Tools, user: str, parts: tuple[Any, ...], sloppy: bool, version: str
) -> Trajectory:
    seats, origin, destination, date = int(parts[0]), parts[1].upper(), parts[2].upper(), parts[3]
    flights = tools.call("search_flights", origin=origin, destination=destination, date=date)
    if not flights:
        return _reply(f"Unfortunately there is no flight with seats on {date}.", "refuse", version)
    if sloppy:
        flight = min(flights, key=lambda f: f["flight_id"])
    else:
        roomy = [f for f in flights if f["seats_left"] >= seats]
        if not roomy:
            return _reply(f"Unfortunately no flight has {seats} seats left.", "refuse", version)
        flight = roomy[0]  # the search lists the cheapest first
    args = {"user_id": user, "flight_id": flight["flight_id"], "passengers": seats}
    price = tools.call("price_booking", args)
    if not sloppy:
        balance = tools.call("get_user", user_id=user)["balance"]
        if balance < price:
            return _reply(
                f"Unfortunately I can't book it: it costs {price} and your balance is {balance}.",
                "refuse",
                version,
            )
    booking = tools.call("create_booking", args)
    return _reply(
        f"Booked {booking['booking_id']}: {seats} seat(s) on {flight['flight_id']} for {price}.",
        "resolve",
        version,
    )


def good(request: AgentInput, tools: Tools) -> Trajectory:
    """The careful agent."""
    return _run(request, tools, sloppy=False)


def sloppy(request: AgentInput, tools: Tools) -> Trajectory:
    """Books the second-cheapest flight and cancels without looking."""
    return _run(request, tools, sloppy=True)
