"""A judge whose fact verdicts alternate call by call (``python:tests.e2e.flaky_judge_script:answer``).

Outcome questions are answered as :mod:`tests.e2e.run_judge_script` answers them; every fact
question is answered "present" and "absent" in turn, so a reviewed item asked three times flips.
"""

from __future__ import annotations

from itertools import count
from typing import Any

from casework.llm import Message
from tests.e2e.run_judge_script import answer as steady

_calls = count()


def answer(messages: list[Message]) -> Any:
    prompt = "\n".join(m.content for m in messages)
    if "<expected_facts>" not in prompt:
        return steady(messages)
    present = next(_calls) % 2 == 0
    return {"facts": [{"index": 0, "present": present, "reason": "scripted, alternating"}]}
