"""Retries with exponential backoff for transient model failures (429, 5xx, timeouts).

Entry point: :func:`call_with_retries`. The sleep function is a parameter so tests run instantly;
a server's ``Retry-After`` wins over the computed delay (capped at ``max_delay``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from casework.llm.base import LLMError, TransientError

__all__ = ["RetryPolicy", "call_with_retries"]

R = TypeVar("R")


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait before retrying a transient failure.

    Attributes:
        max_retries: Retries after the first attempt (0: try once).
        initial_delay: Seconds before the first retry.
        multiplier: Factor applied to the delay after each retry.
        max_delay: Longest wait between two attempts, in seconds.
    """

    max_retries: int = 3
    initial_delay: float = 0.5
    multiplier: float = 2.0
    max_delay: float = 20.0

    def delay(self, retry: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number ``retry`` (1-based)."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.max_delay)
        return min(self.initial_delay * self.multiplier ** (retry - 1), self.max_delay)


def call_with_retries(
    fn: Callable[[], R],
    policy: RetryPolicy,
    *,
    describe: str,
    sleep: Callable[[float], None] = time.sleep,
    on_retry: Callable[[TransientError], None] | None = None,
) -> R:
    """Call ``fn``, retrying on :class:`TransientError` with backoff.

    Args:
        fn: The request.
        policy: Retry counts and delays.
        describe: Who was called (`models.generator (gpt-4o-mini at http://…)`), for the message.
        sleep: Waits between attempts (injected by tests).
        on_retry: Called with each transient error that will be retried (for accounting).

    Raises:
        LLMError: The last transient error once retries are spent (the message says how many
            attempts were made), or any other :class:`LLMError` at once; both prefixed with
            ``describe``.
    """
    retry = 0
    while True:
        try:
            return fn()
        except TransientError as exc:
            if retry >= policy.max_retries:
                attempts = retry + 1
                raise LLMError(
                    f"{describe}: {str(exc).rstrip('.')} "
                    f"({attempts} attempt{'s' if attempts != 1 else ''})."
                ) from exc
            retry += 1
            if on_retry is not None:
                on_retry(exc)
            sleep(policy.delay(retry, exc.retry_after))
        except LLMError as exc:
            raise LLMError(f"{describe}: {str(exc).rstrip('.')}.") from exc
