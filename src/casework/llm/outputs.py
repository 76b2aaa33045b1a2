"""The JSON outputs of `casework llm ping|cache stats`, as documented models."""

from __future__ import annotations

from typing import Literal

from pydantic import RootModel

from casework.schema.output import CommandOutput

__all__ = ["CacheStats", "LlmPing"]


class LlmPing(CommandOutput):
    """`casework llm ping`: one tiny request to a role's model and what came back."""

    output: Literal["llm-ping"] = "llm-ping"
    """Which output this is."""
    role: str
    """The role called (`generator` or `judge`)."""
    model: str
    """The model that answered."""
    endpoint: str
    """Where it was reached."""
    reply: str
    """What it replied."""
    seconds: float
    """Seconds the request took (rounded to milliseconds)."""
    prompt_tokens: int | None
    """Prompt tokens the endpoint reported (null: it reported none)."""
    completion_tokens: int | None
    """Completion tokens the endpoint reported (null: it reported none)."""


class CacheStats(RootModel[dict[str, int]]):
    """`casework llm cache stats`: cached replies per model (a JSON object)."""
