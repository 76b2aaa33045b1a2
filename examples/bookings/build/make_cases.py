"""Writes states/airline.json and datasets/bookings/cases.jsonl (run from examples/bookings).

The state is shared by every case; each case pins its sha256 and patches its own differences.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from casework.dataset import write_cases
from casework.schema import Case

HERE = Path(__file__).resolve().parent.parent


def flight(origin: str, destination: str, date: str, fare: float, seats: int) -> dict[str, Any]:
    return {
        "origin": origin,
        "destination": destination,
        "date": date,
        "fare": fare,
        "seats_left": seats,
    }


STATE: dict[str, Any] = {
    "flights": {
        "FL-101": flight("LHR", "JFK", "2026-12-10", 420.0, 9),
        "FL-102": flight("LHR", "JFK", "2026-12-10", 385.0, 2),
        "FL-103": flight("LHR", "JFK", "2026-12-10", 510.0, 30),
        "FL-201": flight("JFK", "SFO", "2026-12-12", 240.0, 14),
        "FL-202": flight("JFK", "SFO", "2026-12-12", 199.0, 6),
        "FL-301": flight("CDG", "LHR", "2026-12-11", 95.0, 40),
    },
    "users": {
        "u-ana": {"name": "Ana Ortiz", "membership": "gold", "balance": 2000.0},
        "u-ben": {"name": "Ben Okafor", "membership": "basic", "balance": 900.0},
    },
    "bookings": {
        "BK-0001": {
            "user_id": "u-ben",
            "flight_id": "FL-301",
            "passengers": 1,
            "total": 95.0,
            "status": "confirmed",
        }
    },
    "next_booking": 2,
}


def case(case_id: str, text: str, sha: str, **parts: Any) -> dict[str, Any]:
    golden = parts.get("golden", [])
    out: dict[str, Any] = {
        "id": case_id,
        "slice": "bookings",
        "split": "dev",
        "source": "hand",
        "satisfiable": parts.get("outcome", "resolve") == "resolve",
        "situation": {
            "goal": parts["goal"],
            "turns": [{"role": "user", "content": text}] if text else [],
            "state_ref": {"path": "states/airline.json", "sha256": sha},
            "state_patch": parts.get("patch", []),
        },
        "label": {
            "outcome": parts.get("outcome", "resolve"),
            "required_tools": parts.get("required", []),
            "forbidden_tools": parts.get("forbidden", []),
            "guideline_version": "bookings-g1",
        },
        "oracle": {
            "class": "state_assertion",
            "golden_actions": golden,
            "state_compare": parts.get("compare", []),
        }
        if golden
        else {"class": "human"},
    }
    if "scenario" in parts:
        out["situation"]["user_scenario"] = parts["scenario"]
    if not out["satisfiable"]:
        out["provenance"] = {"unsatisfiable_kind": "outside_policy"}
    return out


def main() -> None:
    data = (json.dumps(STATE, indent=1, sort_keys=True) + "\n").encode()
    (HERE / "states").mkdir(exist_ok=True)
    (HERE / "states" / "airline.json").write_bytes(data)
    sha = hashlib.sha256(data).hexdigest()
    search = {"name": "search_flights", "optional": True}
    cases = [
        case(
            "bk-cheapest",
            "Hi, please book 2 seats from LHR to JFK on 2026-12-10 (user u-ana).",
            sha,
            goal="book the cheapest flight with seats",
            required=["create_booking"],
            golden=[
                {
                    **search,
                    "arguments": {"origin": "LHR", "destination": "JFK", "date": "2026-12-10"},
                },
                {
                    "name": "create_booking",
                    "arguments": {"user_id": "u-ana", "flight_id": "FL-102", "passengers": 2},
                },
            ],
            compare=["/bookings", "/flights", "/users", "/next_booking"],
        ),
        case(
            "bk-sold-out",
            "Please book 1 seat from JFK to SFO on 2026-12-12 (user u-ben).",
            sha,
            goal="the cheapest flight is sold out: book the next one",
            patch=[{"op": "replace", "path": "/flights/FL-202/seats_left", "value": 0}],
            required=["create_booking"],
            golden=[
                {
                    "name": "create_booking",
                    "arguments": {"user_id": "u-ben", "flight_id": "FL-201", "passengers": 1},
                }
            ],
        ),
        case(
            "bk-cancel",
            "I need to cancel booking BK-0001 please (user u-ben).",
            sha,
            goal="cancel a booking and get the money back",
            required=["cancel_booking"],
            golden=[
                {"name": "get_booking", "arguments": {"booking_id": "BK-0001"}, "optional": True},
                {"name": "cancel_booking", "arguments": {"booking_id": "BK-0001"}},
            ],
        ),
        case(
            "bk-no-funds",
            "Please book 3 seats from LHR to JFK on 2026-12-10 (user u-ben).",
            sha,
            goal="the user cannot afford it: refuse, book nothing",
            patch=[{"op": "replace", "path": "/users/u-ben/balance", "value": 150.0}],
            outcome="refuse",
            forbidden=["create_booking"],
        ),
        # τ²-style: no fixed prefix; a simulated user ([models.user], llm/user.py) plays the
        # scenario, giving what it knows only when the agent asks.
        case(
            "bk-conversation",
            "",
            sha,
            goal="a traveller books the cheapest seat, telling their details when asked",
            scenario={
                "persona": "a traveller in a hurry who writes short messages",
                "goal": "book one seat from JFK to SFO on 2026-12-12, the cheapest there is",
                "known_info": "Please book 1 seat from JFK to SFO on 2026-12-12 (user u-ben).",
                "unknown_info": "which flights exist and what they cost",
                "instructions": "open with a vague request; give the details only when asked",
                "max_turns": 4,
            },
            required=["create_booking"],
            golden=[
                {
                    **search,
                    "arguments": {"origin": "JFK", "destination": "SFO", "date": "2026-12-12"},
                },
                {
                    "name": "create_booking",
                    "arguments": {"user_id": "u-ben", "flight_id": "FL-202", "passengers": 1},
                },
            ],
        ),
    ]
    (HERE / "datasets" / "bookings").mkdir(parents=True, exist_ok=True)
    write_cases(
        HERE / "datasets" / "bookings" / "cases.jsonl", [Case.model_validate(c) for c in cases]
    )


if __name__ == "__main__":
    main()
