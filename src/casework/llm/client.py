"""The :class:`Client`: one provider wrapped with cache, retries, a concurrency limit and accounting.

Every provider (OpenAI-compatible, litellm, scripted) is used through it, so behaviour at the edges
is the same whichever model answers. Entry point: :class:`Client`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar

from pydantic import BaseModel

from casework.errors import format_got
from casework.llm.accounting import Ledger, Pricing
from casework.llm.base import (
    Completion,
    Message,
    Params,
    Provider,
    StructuredOutputError,
    TokenUsage,
    prompt_hash,
)
from casework.llm.cache import CacheEntry, ResponseCache, cache_key, params_json
from casework.llm.retry import RetryPolicy, call_with_retries
from casework.llm.structured import ReplyProblem, parse_reply, repair_messages, schema_messages

__all__ = ["Client"]

T = TypeVar("T", bound=BaseModel)


class Client:
    """An :class:`~casework.llm.base.LLMClient` over one :class:`~casework.llm.base.Provider`.

    Args:
        provider: The transport.
        role: Config role (`generator`, `judge`), named in messages and the ledger.
        provider_name: Provider kind (`openai`, `scripted`), part of the cache key.
        family: Model family, recorded on generated cases.
        cache: Response cache; ``None`` sends every request.
        ledger: Where requests, tokens and cost are counted.
        retry: Retry policy for transient failures.
        max_concurrency: Requests in flight at most (callers beyond it wait).
        pricing: Prices per million tokens, for the cost line.
        temperature: Default sampling temperature (`[models.<role>] temperature`).
        sleep: Waits between retries (injected by tests).
    """

    def __init__(
        self,
        provider: Provider,
        *,
        role: str = "generator",
        provider_name: str = "openai",
        family: str | None = None,
        cache: ResponseCache | None = None,
        ledger: Ledger | None = None,
        retry: RetryPolicy | None = None,
        max_concurrency: int = 4,
        pricing: Pricing | None = None,
        temperature: float | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_concurrency < 1:
            raise ValueError("max_concurrency must be at least 1")
        self.provider = provider
        self.role = role
        self.provider_name = provider_name
        self._family = family
        self.cache = cache
        self.ledger = ledger if ledger is not None else Ledger()
        self.retry = retry or RetryPolicy()
        self._max_concurrency = max_concurrency
        self._slots = threading.BoundedSemaphore(max_concurrency)
        # One request per cache key in flight: identical prompts asked at once wait for the first
        # and are then served from the cache, instead of all reaching the server.
        self._flights: dict[str, tuple[threading.Lock, int]] = {}
        self._flights_guard = threading.Lock()
        self.pricing = pricing or Pricing()
        self.temperature = temperature
        self._sleep = sleep

    @property
    def model(self) -> str:
        """Model id."""
        return self.provider.model

    def close(self) -> None:
        """Release the cache's database connections and the provider's HTTP client, if any."""
        for resource in (self.cache, self.provider):
            close = getattr(resource, "close", None)
            if callable(close):
                close()

    @property
    def family(self) -> str | None:
        """Model family, if configured."""
        return self._family

    @property
    def max_concurrency(self) -> int:
        """Requests in flight at most."""
        return self._max_concurrency

    @property
    def describe(self) -> str:
        """`models.generator (gpt-4o-mini at http://…)`, for messages."""
        return f"models.{self.role} ({self.model} at {self.provider.endpoint})"

    @contextmanager
    def _single_flight(self, key: str) -> Iterator[None]:
        with self._flights_guard:
            lock, waiting = self._flights.get(key, (threading.Lock(), 0))
            self._flights[key] = (lock, waiting + 1)
        try:
            with lock:
                yield
        finally:
            with self._flights_guard:
                lock, waiting = self._flights[key]
                if waiting == 1:
                    del self._flights[key]
                else:
                    self._flights[key] = (lock, waiting - 1)

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> Completion:
        """One chat completion, from the cache when this exact request was made before.

        Raises:
            LLMError: The provider failed for good (after retries for transient failures).
        """
        if temperature is None:
            temperature = self.temperature
        params = Params(temperature=temperature, max_tokens=max_tokens, seed=seed)
        model_key = f"{self.provider_name}:{self.model}"
        phash = prompt_hash(messages)
        key = cache_key("completion", model_key, phash, params.as_json())
        if self.cache is None:
            return self._send(messages, params, key)
        with self._single_flight(key):
            hit = self.cache.get(key)
            if hit is not None:
                self.ledger.record(self.role, self.model, None, cached=True, pricing=self.pricing)
                usage = None
                if hit.prompt_tokens is not None and hit.completion_tokens is not None:
                    usage = TokenUsage(hit.prompt_tokens, hit.completion_tokens)
                return Completion(hit.text, self.model, usage, cached=True, key=key)
            reply = self._send(messages, params, key)
            self.cache.put(
                key,
                CacheEntry(
                    kind="completion",
                    model=model_key,
                    prompt_hash=phash,
                    params=params_json(params.as_json()),
                    text=reply.text,
                    prompt_tokens=reply.usage.prompt_tokens if reply.usage else None,
                    completion_tokens=reply.usage.completion_tokens if reply.usage else None,
                ),
            )
            return reply

    def _send(self, messages: Sequence[Message], params: Params, key: str) -> Completion:
        def attempt() -> Completion:
            with self._slots:
                return self.provider.send(messages, params)

        reply = call_with_retries(
            attempt,
            self.retry,
            describe=self.describe,
            sleep=self._sleep,
            on_retry=lambda _exc: self.ledger.record_retry(self.role, self.model, self.pricing),
        )
        self.ledger.record(self.role, self.model, reply.usage, cached=False, pricing=self.pricing)
        return Completion(reply.text, reply.model, reply.usage, cached=False, key=key)

    def structured(
        self,
        messages: Sequence[Message],
        model: type[T],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> T:
        """A reply parsed and validated as ``model``.

        The schema is sent in the system message; a reply that is not valid JSON for it gets one
        repair round (the bad reply and the problem are sent back). Unusable replies are dropped
        from the cache so a later run asks again.

        Raises:
            StructuredOutputError: The repaired reply is still unusable.
            LLMError: The provider failed.
        """
        sent = schema_messages(messages, model)
        first = self.complete(sent, temperature=temperature, max_tokens=max_tokens, seed=seed)
        try:
            return parse_reply(first.text, model)
        except ReplyProblem as problem:
            repair = repair_messages(sent, first.text, problem)
        second = self.complete(repair, temperature=temperature, max_tokens=max_tokens, seed=seed)
        try:
            return parse_reply(second.text, model)
        except ReplyProblem as problem:
            if self.cache is not None:
                self.cache.delete(first.key)
                self.cache.delete(second.key)
            raise StructuredOutputError(
                f"{self.describe}: the reply {problem}, also after one repair round "
                f"(expected a JSON {model.__name__}). Got {format_got(second.text)}."
            ) from problem
