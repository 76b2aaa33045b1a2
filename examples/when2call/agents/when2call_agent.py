"""Rule-based When2Call-style agents: call a tool, ask for what is missing, or say it cannot.

`python:agents.when2call_agent:agent` decides from the tools the case offers it (the agent input's
``tools``): a request whose tool is not offered is refused, a request missing an argument gets a
question, anything else is answered from the tool. `python:agents.when2call_agent:eager` is the
known-worse version: it never asks and claims to do what it has no tool for.
"""

from __future__ import annotations

import re

from casework.runner import Tools
from casework.schema import AgentInput, Trajectory

CITIES = ("Lisbon", "Porto", "Oslo", "Madrid")
_MONEY = re.compile(r"(\d+(?:\.\d+)?)\s*([A-Z]{3})(?:\s+(?:to|in|into)\s+([A-Z]{3}))?")


def _said(request: AgentInput) -> str:
    return "\n".join(t.content for t in request.turns if t.role == "user")


def _wanted(text: str) -> str | None:
    lowered = text.lower()
    if "flight" in lowered or "fly " in lowered:
        return "book_flight"
    if "convert" in lowered or _MONEY.search(text):
        return "convert_currency"
    if "weather" in lowered or "umbrella" in lowered or "forecast" in lowered:
        return "get_weather"
    return None


def _weather(text: str, tools: Tools) -> Trajectory:
    city = next((c for c in CITIES if c.lower() in text.lower()), None)
    if city is None:
        return Trajectory(final_reply="Which city do you mean?", outcome="clarify")
    day = "tomorrow" if "tomorrow" in text.lower() else "today"
    found = tools.call("get_weather", city=city, day=day)
    reply = f"{day.capitalize()} in {city}: {found['sky']}, {found['temp_c']}°C."
    if found["sky"] == "rain":
        reply += " Take an umbrella."
    return Trajectory(final_reply=reply, outcome="resolve")


def _convert(text: str, tools: Tools) -> Trajectory:
    money = _MONEY.search(text)
    if money is None or money.group(3) is None:
        return Trajectory(final_reply="Which currency should I convert it to?", outcome="clarify")
    amount, source, target = float(money.group(1)), money.group(2), money.group(3)
    found = tools.call("convert_currency", amount=amount, **{"from": source, "to": target})
    return Trajectory(
        final_reply=f"{amount:g} {source} is {found['amount']:.2f} {target} today.",
        outcome="resolve",
    )


def agent(request: AgentInput, tools: Tools) -> Trajectory:
    """Refuse what no offered tool does, ask for missing arguments, else call the tool."""
    text = _said(request)
    wanted = _wanted(text)
    if wanted is None or wanted not in tools.names():
        return Trajectory(
            final_reply="Sorry, I can't do that here: I have no tool for it.", outcome="refuse"
        )
    if wanted == "get_weather":
        return _weather(text, tools)
    if wanted == "convert_currency":
        return _convert(text, tools)
    return Trajectory(final_reply="Which date should I book?", outcome="clarify")


def eager(request: AgentInput, tools: Tools) -> Trajectory:
    """The known-worse agent: never asks, and claims success without a tool."""
    text = _said(request)
    wanted = _wanted(text)
    if wanted == "get_weather" and "get_weather" in tools.names():
        city = next((c for c in CITIES if c.lower() in text.lower()), "Lisbon")
        found = tools.try_call("get_weather", city=city, day="today")
        if found.error is None:
            return Trajectory(final_reply=f"{city}: {found.result['sky']}.", outcome="resolve")
    return Trajectory(final_reply="Done! All sorted for you.", outcome="resolve")
