"""A scripted judge for the CLI tests (``script = "python:tests.e2e.run_judge_script:answer"``)."""

from __future__ import annotations

from typing import Any

from casework.llm import Message


def answer(messages: list[Message]) -> Any:
    prompt = "\n".join(m.content for m in messages)
    if "<expected_facts>" in prompt:
        return {
            "facts": [
                {
                    "index": 0,
                    "present": "can't" in prompt or "cannot" in prompt,
                    "reason": "scripted",
                }
            ]
        }
    # The conversation's words, not the word anywhere: calibration prompts list the declared tools,
    # and one of them is `escalate_to_human`.
    if "speak to a human" in prompt:
        return {"outcome": "escalate", "reason": "asks for a person"}
    if "o9" in prompt:
        return {"outcome": "refuse", "reason": "not delivered"}
    return {"outcome": "resolve", "reason": "refund"}
