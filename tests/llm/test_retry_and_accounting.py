"""Backoff arithmetic, retry exhaustion, and the ledger's lines."""

from __future__ import annotations

import pytest

from casework.llm import LLMError
from casework.llm.accounting import Ledger, Pricing
from casework.llm.base import TokenUsage, TransientError
from casework.llm.retry import RetryPolicy, call_with_retries


def test_delays_grow_exponentially_and_are_capped() -> None:
    policy = RetryPolicy(max_retries=6, initial_delay=0.5, multiplier=2.0, max_delay=3.0)
    assert [policy.delay(i) for i in range(1, 6)] == [0.5, 1.0, 2.0, 3.0, 3.0]


def test_retry_after_wins_but_is_capped() -> None:
    policy = RetryPolicy(max_delay=5.0)
    assert policy.delay(1, retry_after=2.0) == 2.0
    assert policy.delay(1, retry_after=60.0) == 5.0


def test_transient_then_success() -> None:
    outcomes: list[Exception | str] = [TransientError("busy"), TransientError("busy"), "ok"]
    sleeps: list[float] = []
    retried: list[str] = []

    def fn() -> str:
        item = outcomes.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    result = call_with_retries(
        fn,
        RetryPolicy(max_retries=2),
        describe="x",
        sleep=sleeps.append,
        on_retry=lambda e: retried.append(str(e)),
    )
    assert result == "ok"
    assert sleeps == [0.5, 1.0]
    assert retried == ["busy", "busy"]


def test_zero_retries_means_one_attempt() -> None:
    def fn() -> str:
        raise TransientError("rate limited (HTTP 429): slow down")

    with pytest.raises(LLMError) as info:
        call_with_retries(
            fn, RetryPolicy(max_retries=0), describe="models.judge (m at u)", sleep=lambda s: None
        )
    assert (
        str(info.value) == "models.judge (m at u): rate limited (HTTP 429): slow down (1 attempt)."
    )


def test_permanent_errors_are_not_retried() -> None:
    calls = []

    def fn() -> str:
        calls.append(1)
        raise LLMError("HTTP 400: bad request")

    with pytest.raises(LLMError) as info:
        call_with_retries(fn, RetryPolicy(max_retries=3), describe="d", sleep=lambda s: None)
    assert str(info.value) == "d: HTTP 400: bad request."
    assert calls == [1]


def test_ledger_lines() -> None:
    ledger = Ledger()
    price = Pricing(input_per_mtok=2.5, output_per_mtok=10.0)
    ledger.record("generator", "gpt-x", TokenUsage(1000, 200), cached=False, pricing=price)
    ledger.record("generator", "gpt-x", TokenUsage(1000, 200), cached=True, pricing=price)
    ledger.record_retry("generator", "gpt-x", price)
    ledger.record("judge", "local", TokenUsage(5, 1), cached=False)
    ledger.record("judge", "local", None, cached=False)

    assert ledger.summary_lines() == [
        "generator (gpt-x): 2 requests, 1 from cache, 1 retry, 1,000 prompt + 200 completion "
        "tokens, cost 0.0045",
        "judge (local): 2 requests, 0 from cache, 5 prompt + 1 completion tokens (1 request(s) "
        "reported none), cost unknown (set input_cost_per_mtok and output_cost_per_mtok)",
    ]


def test_empty_ledger_prints_nothing() -> None:
    assert Ledger().summary_lines() == []
