"""The OpenAI-compatible path, over real HTTP to a stub server on 127.0.0.1."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from pydantic import BaseModel

from casework.llm import LLMError, Message, OpenAIProvider
from casework.llm.accounting import Ledger, Pricing
from casework.llm.base import StructuredOutputError
from casework.llm.cache import MemoryCache
from casework.llm.client import Client
from casework.llm.embed import OpenAIEmbedder
from casework.llm.retry import RetryPolicy
from tests.llm.stub_server import (
    Action,
    StubServer,
    chat_reply,
    embeddings_reply,
    error_reply,
)

USER = [Message("user", "Say hello.")]


class Rewrites(BaseModel):
    variants: list[str]


def make_client(
    stub: StubServer,
    *,
    retries: int = 2,
    timeout_s: float = 5.0,
    cache: MemoryCache | None = None,
    max_concurrency: int = 4,
    sleeps: list[float] | None = None,
    pricing: Pricing | None = None,
) -> Client:
    provider = OpenAIProvider(
        "stub-model", api_key="k", base_url=stub.url, timeout_s=timeout_s, role="generator"
    )
    record = sleeps if sleeps is not None else []
    return Client(
        provider,
        role="generator",
        provider_name="openai",
        cache=cache,
        ledger=Ledger(),
        retry=RetryPolicy(max_retries=retries),
        max_concurrency=max_concurrency,
        pricing=pricing,
        sleep=record.append,
    )


def describe(stub: StubServer) -> str:
    return f"models.generator (stub-model at {stub.url})"


def test_completion_sends_model_messages_and_params(stub: StubServer) -> None:
    stub.queue(chat_reply("hello", prompt_tokens=12, completion_tokens=3))
    client = make_client(stub, pricing=Pricing(1.0, 2.0))

    reply = client.complete(USER, temperature=0.2, seed=7)

    assert reply.text == "hello"
    assert reply.cached is False
    assert reply.usage is not None and reply.usage.prompt_tokens == 12
    assert stub.paths == ["/v1/chat/completions"]
    sent = stub.requests[0]
    assert sent["model"] == "stub-model"
    assert sent["messages"] == [{"role": "user", "content": "Say hello."}]
    assert sent["temperature"] == 0.2 and sent["seed"] == 7
    assert "max_tokens" not in sent
    assert stub.headers[0]["authorization"] == "Bearer k"
    assert client.ledger.summary_lines() == [
        "generator (stub-model): 1 request, 0 from cache, 12 prompt + 3 completion tokens, "
        "cost 0.0000"
    ]
    assert client.ledger.tallies()[0].cost == pytest.approx((12 * 1.0 + 3 * 2.0) / 1e6)


def test_429_then_success_is_retried_after_the_servers_delay(stub: StubServer) -> None:
    stub.queue(
        error_reply(429, "slow down", headers={"retry-after": "0.25"}),
        chat_reply("ok"),
    )
    sleeps: list[float] = []
    client = make_client(stub, sleeps=sleeps)

    assert client.complete(USER).text == "ok"

    assert len(stub.requests) == 2
    assert sleeps == [0.25]
    tally = client.ledger.tallies()[0]
    assert (tally.requests, tally.retries) == (1, 1)


def test_5xx_backs_off_exponentially_then_fails_with_attempt_count(stub: StubServer) -> None:
    stub.queue(*[error_reply(503, "overloaded") for _ in range(3)])
    sleeps: list[float] = []
    client = make_client(stub, retries=2, sleeps=sleeps)

    with pytest.raises(LLMError) as info:
        client.complete(USER)

    assert str(info.value) == (
        f"{describe(stub)}: server error (HTTP 503): overloaded (3 attempts)."
    )
    assert sleeps == [0.5, 1.0]
    assert len(stub.requests) == 3


def test_401_is_not_retried_and_names_the_key_setting(stub: StubServer) -> None:
    stub.queue(error_reply(401, "bad key"))
    client = make_client(stub)

    with pytest.raises(LLMError) as info:
        client.complete(USER)

    assert str(info.value) == (
        f"{describe(stub)}: HTTP 401, the server refused the API key: bad key; "
        "check the variable named by models.generator.api_key_env."
    )
    assert len(stub.requests) == 1


def test_timeout_fails_with_a_clear_message(stub: StubServer) -> None:
    stub.queue(Action(delay=3.0, body={}), Action(delay=3.0, body={}))
    client = make_client(stub, retries=1, timeout_s=0.3)

    with pytest.raises(LLMError) as info:
        client.complete(USER)

    assert str(info.value) == (
        f"{describe(stub)}: request timed out after 0.3 s; check that the server is up and "
        "answering, or raise models.generator.timeout_s (2 attempts)."
    )


def test_connection_refused_names_base_url() -> None:
    gone = StubServer().start()
    gone.stop()
    client = make_client(gone, retries=1)

    with pytest.raises(LLMError) as info:
        client.complete(USER)

    assert re.fullmatch(
        re.escape(f"{describe(gone)}: cannot connect (")
        + r".+"
        + re.escape("); check models.generator.base_url (2 attempts)."),
        str(info.value),
    )


def test_malformed_json_then_repaired_reply(stub: StubServer) -> None:
    stub.queue(
        chat_reply('{"variants": ["one", "two"'),
        chat_reply('```json\n{"variants": ["one", "two"]}\n```'),
    )
    client = make_client(stub)

    result = client.structured(USER, Rewrites)

    assert result == Rewrites(variants=["one", "two"])
    first, second = stub.requests
    assert "JSON Schema" in first["messages"][0]["content"]
    assert first["messages"][0]["role"] == "system"
    assert second["messages"][-2] == {"role": "assistant", "content": '{"variants": ["one", "two"'}
    repair = second["messages"][-1]["content"]
    assert repair.startswith("Your reply is not JSON (Expecting ")
    assert repair.endswith(
        "Reply again with only the corrected JSON object, valid against the schema."
    )


def test_reply_invalid_twice_fails_clearly_and_leaves_the_cache_clean(stub: StubServer) -> None:
    stub.queue(chat_reply('{"variants": "one"}'), chat_reply('{"variants": [1, 2]}'))
    cache = MemoryCache()
    client = make_client(stub, cache=cache)

    with pytest.raises(StructuredOutputError) as info:
        client.structured(USER, Rewrites)

    assert str(info.value) == (
        f"{describe(stub)}: the reply does not match the schema (variants.0: Input should be a "
        "valid string; variants.1: Input should be a valid string), also after one repair round "
        "(expected a JSON Rewrites). Got '{\"variants\": [1, 2]}'."
    )
    assert len(cache) == 0


def test_cache_serves_a_repeated_request_without_calling_the_server(stub: StubServer) -> None:
    stub.queue(chat_reply("first"), chat_reply("second"))
    cache = MemoryCache()
    client = make_client(stub, cache=cache)

    a = client.complete(USER, temperature=0.0)
    b = client.complete(USER, temperature=0.0)
    c = client.complete(USER, temperature=0.5)

    assert (a.text, b.text, c.text) == ("first", "first", "second")
    assert (a.cached, b.cached, c.cached) == (False, True, False)
    assert len(stub.requests) == 2
    assert b.usage == a.usage
    tally = client.ledger.tallies()[0]
    assert (tally.requests, tally.cached, tally.prompt_tokens) == (3, 1, 20)


def test_concurrency_limit_holds_requests_in_flight(stub: StubServer) -> None:
    def slow(body: dict[str, Any]) -> Action:
        action = chat_reply(body["messages"][0]["content"].upper())
        action.delay = 0.15
        return action

    stub.fallback = slow
    client = make_client(stub, max_concurrency=2)
    prompts = [[Message("user", f"p{i}")] for i in range(6)]

    with ThreadPoolExecutor(max_workers=6) as pool:
        replies = list(pool.map(client.complete, prompts))

    assert [r.text for r in replies] == [f"P{i}" for i in range(6)]
    assert stub.max_in_flight == 2


def test_server_without_key_never_gets_the_openai_key(
    stub: StubServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    from casework.llm import client_for
    from casework.project import Config, ModelConfig, ModelsConfig, Project

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    config = Config(
        models=ModelsConfig(
            generator=ModelConfig(provider="openai", model="stub-model", base_url=stub.url)
        )
    )
    client = client_for(Project(tmp_path, config), "generator", cache=None)
    stub.queue(chat_reply("hi"))

    client.complete(USER)

    assert stub.headers[0]["authorization"] == "Bearer casework-no-key"


def test_openai_embeddings_are_normalised_and_cached(stub: StubServer) -> None:
    stub.queue(embeddings_reply([[3.0, 4.0], [0.0, 2.0]]), embeddings_reply([[1.0, 0.0]]))
    cache = MemoryCache()
    embedder = OpenAIEmbedder(
        "stub-embed", api_key="k", base_url=stub.url, dimensions=2, cache=cache
    )

    first = embedder.embed(["a", "b"])
    again = embedder.embed(["b", "a", "c"])

    assert first.tolist() == [[0.6, 0.8], [0.0, 1.0]]
    assert again.tolist() == [[0.0, 1.0], [0.6, 0.8], [1.0, 0.0]]
    assert stub.paths == ["/v1/embeddings", "/v1/embeddings"]
    assert stub.requests[0] == {
        "input": ["a", "b"],
        "model": "stub-embed",
        "dimensions": 2,
        "encoding_format": "float",
    }
    assert stub.requests[1]["input"] == ["c"]
    assert embedder.ledger.summary_lines() == [
        "embedder (stub-embed): 2 requests, 0 from cache, 14 prompt + 0 completion tokens, "
        "cost unknown (set input_cost_per_mtok and output_cost_per_mtok)"
    ]
