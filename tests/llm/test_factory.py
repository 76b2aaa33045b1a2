"""Clients and embedders built from `[models.*]`, and the optional litellm provider."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

from casework.errors import ConfigError
from casework.llm import LLMError, Message, TfidfEmbedder, client_for, embedder_for
from casework.llm.base import Params, TransientError
from casework.llm.client import Client
from casework.llm.embed import OpenAIEmbedder
from casework.llm.litellm_provider import LiteLLMProvider
from casework.llm.retry import RetryPolicy
from casework.project import Config, ModelConfig, ModelsConfig, Project


def project_with(tmp_path: Path, **roles: ModelConfig) -> Project:
    return Project(tmp_path, Config(models=ModelsConfig(**roles)))


def test_scripted_role_reads_its_file_relative_to_the_project(tmp_path: Path) -> None:
    (tmp_path / "llm").mkdir()
    (tmp_path / "llm" / "r.jsonl").write_text(json.dumps({"reply": "hi"}) + "\n")
    project = project_with(
        tmp_path, generator=ModelConfig(provider="scripted", script="llm/r.jsonl", family="none")
    )

    client = client_for(project, "generator")

    assert client.complete([Message("user", "x")]).text == "hi"
    assert client.family == "none"
    assert client.cache is None


def test_scripted_role_without_script(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        client_for(project_with(tmp_path), "judge")
    assert str(info.value) == (
        "casework.toml: models.judge.script: the scripted provider needs a responses file "
        '(script = "llm/responses.jsonl") or a function (script = "python:pkg.mod:fn").'
    )


def test_scripted_role_with_missing_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    project = project_with(tmp_path, generator=ModelConfig(script="llm/none.jsonl"))
    with pytest.raises(ConfigError) as info:
        client_for(project, "generator")
    assert str(info.value) == (
        "casework.toml: models.generator.script: file llm/none.jsonl not found. "
        "Got 'llm/none.jsonl'."
    )


def test_scripted_role_with_a_python_function(tmp_path: Path) -> None:
    project = project_with(
        tmp_path, generator=ModelConfig(script="python:tests.llm.test_factory:echo")
    )
    assert client_for(project, "generator").complete([Message("user", "x")]).text == '["x"]'


def echo(messages: list[Message]) -> list[str]:
    return [m.content for m in messages]


def test_named_key_variable_must_be_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MY_LLM_KEY", raising=False)
    project = project_with(
        tmp_path,
        generator=ModelConfig(provider="openai", model="m", api_key_env="MY_LLM_KEY"),
    )
    with pytest.raises(ConfigError) as info:
        client_for(project, "generator")
    assert str(info.value) == (
        "casework.toml: models.generator.api_key_env: environment variable MY_LLM_KEY is not set. "
        "Export it (export MY_LLM_KEY=...) or remove api_key_env for a server that needs no key."
    )


def test_openai_without_any_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    project = project_with(tmp_path, judge=ModelConfig(provider="openai", model="gpt-4o-mini"))
    with pytest.raises(ConfigError) as info:
        client_for(project, "judge")
    assert str(info.value) == (
        "casework.toml: models.judge: no API key for api.openai.com: set OPENAI_API_KEY, or set "
        'api_key_env = "NAME_OF_YOUR_VARIABLE", or set base_url for a local server.'
    )


def test_openai_role_takes_its_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_KEY", "abc")
    project = project_with(
        tmp_path,
        generator=ModelConfig(
            provider="openai",
            model="llama3.1",
            family="llama",
            base_url="http://127.0.0.1:11434/v1",
            api_key_env="LOCAL_KEY",
            max_concurrency=2,
            max_retries=5,
        ),
    )
    client = client_for(project, "generator", cache=None)
    assert isinstance(client, Client)
    assert client.describe == "models.generator (llama3.1 at http://127.0.0.1:11434/v1)"
    assert (client.max_concurrency, client.retry, client.family) == (
        2,
        RetryPolicy(max_retries=5),
        "llama",
    )


def test_embedder_role_cannot_chat(tmp_path: Path) -> None:
    project = project_with(tmp_path, generator=ModelConfig(provider="tfidf"))
    with pytest.raises(ConfigError) as info:
        client_for(project, "generator")
    assert str(info.value) == (
        "casework.toml: models.generator.provider: 'tfidf' is an embedder, not a chat model; "
        "use 'openai', 'litellm' or 'scripted'."
    )


def test_embedder_default_is_tfidf(tmp_path: Path) -> None:
    embedder = embedder_for(Project(tmp_path, Config()))
    assert isinstance(embedder, TfidfEmbedder) and embedder.dimensions == 256


def test_embedder_openai_and_scripted_refused(tmp_path: Path) -> None:
    project = project_with(
        tmp_path,
        embedder=ModelConfig(
            provider="openai", model="e", base_url="http://127.0.0.1:1/v1", dimensions=8
        ),
    )
    assert isinstance(embedder_for(project, cache=None), OpenAIEmbedder)
    with pytest.raises(ConfigError) as info:
        embedder_for(project_with(tmp_path, embedder=ModelConfig(provider="scripted")))
    assert "'scripted' cannot embed" in str(info.value)


def test_litellm_missing_is_a_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "litellm", None)
    project = project_with(tmp_path, judge=ModelConfig(provider="litellm", model="anthropic/x"))
    with pytest.raises(ConfigError) as info:
        client_for(project, "judge", cache=None)
    assert str(info.value) == (
        "casework.toml: models.judge.provider: 'litellm' needs the litellm package, which is not "
        "installed. Install it with `pip install 'casework[litellm]'`, or use provider = "
        '"openai" with base_url for an OpenAI-compatible server.'
    )


def _litellm_like(reply: Any) -> types.SimpleNamespace:
    calls: list[dict[str, Any]] = []

    def completion(**kwargs: Any) -> Any:
        calls.append(kwargs)
        if isinstance(reply, Exception):
            raise reply
        return reply

    return types.SimpleNamespace(completion=completion, calls=calls)


def test_litellm_provider_passes_settings_and_reads_openai_shaped_replies() -> None:
    response = types.SimpleNamespace(
        model="anthropic/x",
        choices=[
            types.SimpleNamespace(message=types.SimpleNamespace(content="hi"), finish_reason="stop")
        ],
        usage=types.SimpleNamespace(prompt_tokens=3, completion_tokens=1),
    )
    module = _litellm_like(response)
    provider = LiteLLMProvider(
        "anthropic/x",
        api_key="k",
        base_url="http://127.0.0.1:9/v1",
        timeout_s=7,
        module=module,  # type: ignore[arg-type]
    )

    reply = provider.send([Message("user", "q")], Params(temperature=0.1))

    assert (reply.text, reply.usage.prompt_tokens if reply.usage else None) == ("hi", 3)
    assert module.calls == [
        {
            "model": "anthropic/x",
            "messages": [{"role": "user", "content": "q"}],
            "timeout": 7,
            "num_retries": 0,
            "temperature": 0.1,
            "api_key": "k",
            "api_base": "http://127.0.0.1:9/v1",
        }
    ]


def test_litellm_rate_limits_are_transient() -> None:
    request = httpx2.Request("POST", "http://x")
    error = openai.RateLimitError(
        "slow", response=httpx2.Response(429, request=request), body={"error": {"message": "slow"}}
    )
    provider = LiteLLMProvider("m", module=_litellm_like(error))  # type: ignore[arg-type]
    with pytest.raises(TransientError) as info:
        provider.send([Message("user", "q")], Params())
    assert str(info.value) == "rate limited (HTTP 429): slow"
    assert not isinstance(LLMError("x"), TransientError)
