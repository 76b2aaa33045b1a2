"""A τ²-bench-style airline environment: flights, users and bookings in one shared state.

Every tool computes from the state, and writes change it: ``create_booking`` takes the next id
from the state's counter (never from a clock or a random draw, so golden replay and the agent's
trial reach the same ids), takes seats and charges the user's balance; ``cancel_booking`` gives
them back. The state file is ``states/airline.json``; each case patches its own differences.
"""

from __future__ import annotations

from typing import Any

from casework.runner import ToolEnvironment, ToolError, tool

#: Share of the fare gold members pay.
GOLD_RATE = 0.9

_STR = {"type": "string"}
_INT = {"type": "integer", "minimum": 1}


def _schema(required: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": required, "required": sorted(required)}


class BookingsEnv(ToolEnvironment):
    """Search flights, price and create bookings, look one up, cancel it."""

    @tool(
        "Flights from origin to destination on a date (YYYY-MM-DD), cheapest first, with seats left.",
        _schema({"origin": _STR, "destination": _STR, "date": _STR}),
    )
    def search_flights(self, origin: str, destination: str, date: str) -> list[dict[str, Any]]:
        found = [
            {"flight_id": fid, **f}
            for fid, f in self.data["flights"].items()
            if (f["origin"], f["destination"], f["date"]) == (origin, destination, date)
            and f["seats_left"] > 0
        ]
        return sorted(found, key=lambda f: (f["fare"], f["flight_id"]))

    @tool(
        "Total price of a booking for the user (gold members pay 90% of the fare).",
        _schema({"user_id": _STR, "flight_id": _STR, "passengers": _INT}),
    )
    def price_booking(self, user_id: str, flight_id: str, passengers: int) -> float:
        user, flight = self._user(user_id), self._flight(flight_id)
        rate = GOLD_RATE if user["membership"] == "gold" else 1.0
        return round(float(flight["fare"]) * passengers * rate, 2)

    @tool(
        "Book seats on a flight, charged to the user's balance; returns the new booking.",
        _schema({"user_id": _STR, "flight_id": _STR, "passengers": _INT}),
    )
    def create_booking(self, user_id: str, flight_id: str, passengers: int) -> dict[str, Any]:
        total = self.price_booking(user_id, flight_id, passengers)
        user, flight = self._user(user_id), self._flight(flight_id)
        if flight["seats_left"] < passengers:
            raise ToolError(f"flight {flight_id} has {flight['seats_left']} seat(s) left")
        if user["balance"] < total:
            raise ToolError(f"balance {user['balance']} does not cover {total}")
        booking_id = f"BK-{self.data['next_booking']:04d}"
        self.data["next_booking"] += 1
        flight["seats_left"] -= passengers
        user["balance"] = round(user["balance"] - total, 2)
        booking = {
            "user_id": user_id,
            "flight_id": flight_id,
            "passengers": passengers,
            "total": total,
            "status": "confirmed",
        }
        self.data["bookings"][booking_id] = booking
        return {"booking_id": booking_id, **booking}

    @tool("A user's profile: name, membership and balance.", _schema({"user_id": _STR}))
    def get_user(self, user_id: str) -> dict[str, Any]:
        return {"user_id": user_id, **self._user(user_id)}

    @tool("One booking by id.", _schema({"booking_id": _STR}))
    def get_booking(self, booking_id: str) -> dict[str, Any]:
        return {"booking_id": booking_id, **self._booking(booking_id)}

    @tool(
        "Cancel a confirmed booking: seats go back, the total is refunded to the balance.",
        _schema({"booking_id": _STR}),
    )
    def cancel_booking(self, booking_id: str) -> dict[str, Any]:
        booking = self._booking(booking_id)
        if booking["status"] != "confirmed":
            raise ToolError(f"booking {booking_id} is {booking['status']}")
        booking["status"] = "cancelled"
        self._flight(booking["flight_id"])["seats_left"] += booking["passengers"]
        user = self._user(booking["user_id"])
        user["balance"] = round(user["balance"] + booking["total"], 2)
        return {"booking_id": booking_id, "refunded": booking["total"]}

    def _user(self, user_id: str) -> dict[str, Any]:
        return self._get("users", user_id, "user")

    def _flight(self, flight_id: str) -> dict[str, Any]:
        return self._get("flights", flight_id, "flight")

    def _booking(self, booking_id: str) -> dict[str, Any]:
        return self._get("bookings", booking_id, "booking")

    def _get(self, table: str, key: str, what: str) -> dict[str, Any]:
        row = self.data[table].get(key)
        if row is None:
            raise ToolError(f"no {what} {key}")
        out: dict[str, Any] = row
        return out


def declarations() -> list[dict[str, Any]]:
    """The tools the agent declares: the environment's own (`[agent] tools_from`)."""
    return BookingsEnv().tools()
