"""The litellm provider against a real OpenAI-compatible server on loopback (litellm itself, no fake).

The stub server stands in for a gateway or a local model server; litellm sends real HTTP to it.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from casework.llm import Message, client_for
from casework.llm.accounting import Ledger
from casework.llm.base import Params, TransientError
from casework.llm.cache import MemoryCache
from casework.llm.client import Client
from casework.llm.litellm_provider import LiteLLMProvider
from casework.llm.retry import RetryPolicy
from casework.project import Config, ModelConfig, ModelsConfig, Project
from tests.llm.stub_server import Action, StubServer, chat_reply, error_reply

pytest.importorskip("litellm", reason="the litellm extra (installed by make setup) is needed")

USER = [Message("user", "Where is my refund?")]


def test_base_url_without_a_key_variable_reaches_the_server(
    stub: StubServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    stub.queue(chat_reply("on its way"))
    role = ModelConfig(provider="litellm", model="openai/stub-model", base_url=stub.url)
    client = client_for(Project(tmp_path, Config(models=ModelsConfig(generator=role))), "generator")

    reply = client.complete(USER)

    assert reply.text == "on its way"
    assert len(stub.requests) == 1
    assert stub.requests[0]["messages"] == [{"role": "user", "content": "Where is my refund?"}]
    assert os.environ.get("OPENAI_API_KEY") is None  # the placeholder never leaks into the env


def test_retry_after_reaches_the_retry_policy_through_litellm(stub: StubServer) -> None:
    stub.queue(error_reply(429, "slow down", {"retry-after": "7"}), chat_reply("done"))
    sleeps: list[float] = []
    client = Client(
        LiteLLMProvider("openai/stub-model", api_key="k", base_url=stub.url),
        provider_name="litellm",
        retry=RetryPolicy(max_retries=2, max_delay=30.0),
        sleep=sleeps.append,
    )

    assert client.complete(USER).text == "done"
    assert sleeps == [7.0]


def test_a_429_without_retries_is_transient_and_quotes_the_server(stub: StubServer) -> None:
    stub.queue(error_reply(429, "slow down", {"retry-after": "3"}))
    provider = LiteLLMProvider("openai/stub-model", api_key="k", base_url=stub.url)
    with pytest.raises(TransientError) as info:
        provider.send(USER, Params())
    assert info.value.retry_after == 3.0
    assert "slow down" in str(info.value)


def test_identical_prompts_in_flight_at_once_reach_the_server_once(stub: StubServer) -> None:
    def slow(body: dict[str, Any]) -> Action:
        action = chat_reply("one answer")
        action.delay = 0.3
        return action

    stub.fallback = slow
    client = Client(
        LiteLLMProvider("openai/stub-model", api_key="k", base_url=stub.url),
        provider_name="litellm",
        cache=MemoryCache(),
        ledger=Ledger(),
        max_concurrency=4,
    )

    with ThreadPoolExecutor(max_workers=4) as pool:
        replies = list(pool.map(lambda _: client.complete(USER, temperature=0.0), range(4)))

    assert [r.text for r in replies] == ["one answer"] * 4
    assert len(stub.requests) == 1
    assert sorted(r.cached for r in replies) == [False, True, True, True]
    tally = client.ledger.tallies()[0]
    assert (tally.requests, tally.cached) == (4, 3)
