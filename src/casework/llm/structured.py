"""Structured output: ask for JSON matching a pydantic model, validate, repair once, then fail.

The schema travels in the system message (every OpenAI-compatible server understands that, unlike
`response_format`). Entry points: :func:`schema_messages`, :func:`parse_reply`, :func:`repair_messages`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from casework.llm.base import Message

__all__ = ["ReplyProblem", "parse_reply", "repair_messages", "schema_messages"]

T = TypeVar("T", bound=BaseModel)

_INSTRUCTION = (
    "Reply with one JSON object and nothing else: no prose, no code fence. "
    "It must validate against this JSON Schema:\n"
)


class ReplyProblem(ValueError):
    """Why a reply could not be used, as one sentence fit to show the model and the user."""


def schema_messages(messages: Sequence[Message], model: type[BaseModel]) -> list[Message]:
    """The messages with the JSON instruction and schema added to the (first) system message."""
    schema = json.dumps(model.model_json_schema(), sort_keys=True, ensure_ascii=False)
    note = _INSTRUCTION + schema
    out = list(messages)
    if out and out[0].role == "system":
        out[0] = Message("system", out[0].content.rstrip() + "\n\n" + note)
    else:
        out.insert(0, Message("system", note))
    return out


def _json_text(text: str) -> str:
    """The JSON part of a reply: inside a code fence if there is one, else from the first brace."""
    stripped = text.strip()
    if "```" in stripped:
        inner = stripped.split("```", 2)[1]
        first_line, _, rest = inner.partition("\n")
        stripped = rest if first_line.strip().isalpha() or not first_line.strip() else inner
        return stripped.strip()
    start = min((i for i in (stripped.find("{"), stripped.find("[")) if i >= 0), default=-1)
    return stripped[start:] if start > 0 else stripped


def _validation_sentence(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors(include_url=False)[:5]:
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        parts.append(f"{loc}: {err['msg']}")
    more = len(exc.errors()) - len(parts)
    if more > 0:
        parts.append(f"and {more} more")
    return "does not match the schema (" + "; ".join(parts) + ")"


def parse_reply(text: str, model: type[T]) -> T:
    """Parse a reply as ``model``.

    Raises:
        ReplyProblem: The reply is not JSON, or the JSON does not validate.
    """
    candidate = _json_text(text)
    try:
        obj, end = json.JSONDecoder().raw_decode(candidate)
    except json.JSONDecodeError as exc:
        raise ReplyProblem(
            f"is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from exc
    if candidate[end:].strip():
        raise ReplyProblem(f"holds text after the JSON value, from column {end + 1}")
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        raise ReplyProblem(_validation_sentence(exc)) from exc


def repair_messages(sent: Sequence[Message], reply: str, problem: ReplyProblem) -> list[Message]:
    """The conversation for the repair round: the bad reply, and what was wrong with it."""
    return [
        *sent,
        Message("assistant", reply),
        Message(
            "user",
            f"Your reply {problem}. Reply again with only the corrected JSON object, "
            "valid against the schema.",
        ),
    ]
