"""The text a failing conversation is clustered by: its scrubbed draft, pseudonyms by kind."""

from __future__ import annotations

import re

from casework.schema import Case

# `order_3fa2c1b09d4e` -> `order`: a pseudonym names one customer's value, not the shape.
_PSEUDONYM = re.compile(r"\b([a-z]+)_[0-9a-f]{12}\b")


def case_text(case: Case) -> str:
    """Customer and agent turns, each tool call (name, error) and each recorded tool error.

    Pseudonyms are replaced by their kind, so two customers' identical complaints read alike.
    """
    parts: list[str] = []
    for turn in case.situation.turns:
        if turn.content:
            parts.append(turn.content)
        for call in turn.tool_calls:
            parts.append(f"tool {call.name}")
            if call.error:
                parts.append(f"error {call.error}")
    called = {c.name for t in case.situation.turns for c in t.tool_calls}
    for fixture in case.situation.fixtures:
        if fixture.tool not in called:
            parts.append(f"tool {fixture.tool}")
        if fixture.error:
            parts.append(f"error {fixture.error}")
    return _PSEUDONYM.sub(r"\1", "\n".join(parts))
