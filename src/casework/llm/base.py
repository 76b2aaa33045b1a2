"""Core types of the LLM layer: messages, parameters, completions and the plug-in Protocols.

:class:`LLMClient` and :class:`Embedder` are what stages program against; a :class:`Provider` is
the transport one client wraps (OpenAI-compatible HTTP, litellm, a script).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel

from casework.errors import CaseworkError

__all__ = [
    "Completion",
    "Embedder",
    "LLMClient",
    "LLMError",
    "Message",
    "Params",
    "Provider",
    "StructuredOutputError",
    "TokenUsage",
    "TransientError",
    "prompt_hash",
]

T = TypeVar("T", bound=BaseModel)
Role = Literal["system", "user", "assistant"]


class LLMError(CaseworkError):
    """A model could not be reached or gave no usable answer; the message names role and model."""


class TransientError(LLMError):
    """A failure worth retrying (429, 5xx, timeout, dropped connection).

    Args:
        message: What happened, as a sentence.
        retry_after: Seconds the server asked us to wait (``Retry-After``), if it said.
    """

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class StructuredOutputError(LLMError):
    """The model's reply did not match the requested schema, even after one repair round."""


@dataclass(frozen=True)
class Message:
    """One chat message sent to a model."""

    role: Role
    content: str

    def as_json(self) -> dict[str, str]:
        """The message as the OpenAI chat format spells it."""
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class Params:
    """Sampling parameters of one request; ``None`` leaves the server's default."""

    temperature: float | None = None
    max_tokens: int | None = None
    seed: int | None = None

    def as_json(self) -> dict[str, Any]:
        """Only the parameters that are set, in a fixed order (part of the cache key)."""
        out: dict[str, Any] = {}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        if self.seed is not None:
            out["seed"] = self.seed
        return out


@dataclass(frozen=True)
class TokenUsage:
    """Tokens a request consumed, as the server reported them."""

    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class Completion:
    """A model's reply to one request.

    Attributes:
        text: The reply text.
        model: Model id that answered.
        usage: Tokens reported by the server; ``None`` when it reports none (scripted client).
        cached: True when the reply came from the response cache (no request was made).
        key: Cache key of the request (empty when the client has no cache).
    """

    text: str
    model: str
    usage: TokenUsage | None = None
    cached: bool = False
    key: str = ""


def prompt_hash(messages: Sequence[Message]) -> str:
    """sha256 of the canonical JSON of the messages: the prompt part of the cache key."""
    body = json.dumps([m.as_json() for m in messages], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


class Provider(Protocol):
    """A transport to one model: sends one request, no cache, no retries.

    Raises :class:`TransientError` for failures worth retrying and :class:`LLMError` otherwise.
    """

    @property
    def model(self) -> str:
        """Model id as the provider names it."""
        ...

    @property
    def endpoint(self) -> str:
        """Where requests go, for messages (`http://127.0.0.1:8000/v1`, `scripted:FILE`)."""
        ...

    def send(self, messages: Sequence[Message], params: Params) -> Completion:
        """Send one chat request and return the reply."""
        ...


@runtime_checkable
class LLMClient(Protocol):
    """What stages program against: plain and schema-validated completions."""

    @property
    def model(self) -> str:
        """Model id."""
        ...

    @property
    def family(self) -> str | None:
        """Model family (`gpt-4o`, `llama`), recorded on generated cases."""
        ...

    @property
    def max_concurrency(self) -> int:
        """How many requests callers may have in flight at once."""
        ...

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> Completion:
        """One chat completion."""
        ...

    def structured(
        self,
        messages: Sequence[Message],
        model: type[T],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> T:
        """A completion parsed and validated as ``model`` (one repair round, then an error)."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors; rows are L2-normalised so a dot product is the cosine."""

    @property
    def name(self) -> str:
        """What embeds (`tfidf`, `openai:text-embedding-3-small`), for records and messages."""
        ...

    def embed(self, texts: Sequence[str]) -> NDArray[np.float64]:
        """One row per text, L2-normalised (a zero row for a text with no features)."""
        ...
