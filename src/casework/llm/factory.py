"""Clients and embedders from `casework.toml` (`[models.generator]`, `[models.judge]`, `[models.embedder]`).

Entry points: :func:`client_for` and :func:`embedder_for`.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Literal

from casework.errors import ConfigError
from casework.llm.accounting import Ledger, Pricing, process_ledger
from casework.llm.base import Embedder, Message, Provider, TokenUsage
from casework.llm.cache import ResponseCache, WorkbenchCache
from casework.llm.client import Client
from casework.llm.embed import OpenAIEmbedder, SentenceTransformerEmbedder, TfidfEmbedder
from casework.llm.litellm_provider import LiteLLMProvider
from casework.llm.openai_compat import OpenAIProvider
from casework.llm.retry import RetryPolicy
from casework.llm.scripted import ScriptedProvider, import_script_function, load_script
from casework.project import CONFIG_NAME, ModelConfig, Project

__all__ = ["ChatRole", "PingResult", "api_key_for", "client_for", "embedder_for", "ping"]

ChatRole = Literal["generator", "judge", "user"]

#: Sent to servers that need no key (Ollama, vLLM, llama.cpp): never a real key from elsewhere.
NO_KEY = "casework-no-key"


def api_key_for(config: ModelConfig, role: str) -> str | None:
    """The key for a role: from the variable ``api_key_env`` names.

    Without ``api_key_env``: no key for a ``base_url`` server (an OpenAI key is never sent to a
    third-party URL), ``OPENAI_API_KEY`` for api.openai.com.

    Raises:
        ConfigError: The named variable is unset, or api.openai.com has no key.
    """
    if config.api_key_env:
        value = os.environ.get(config.api_key_env)
        if not value:
            raise ConfigError(
                CONFIG_NAME,
                None,
                f"models.{role}.api_key_env",
                f"environment variable {config.api_key_env} is not set. "
                f"Export it (export {config.api_key_env}=...) or remove api_key_env for a server "
                "that needs no key",
            )
        return value
    if config.base_url:
        return None
    if config.provider == "openai":
        value = os.environ.get("OPENAI_API_KEY")
        if not value:
            raise ConfigError(
                CONFIG_NAME,
                None,
                f"models.{role}",
                "no API key for api.openai.com: set OPENAI_API_KEY, or set "
                'api_key_env = "NAME_OF_YOUR_VARIABLE", or set base_url for a local server',
            )
        return value
    return None


def _provider(project: Project, config: ModelConfig, role: str) -> Provider:
    if config.provider == "scripted":
        if not config.script:
            raise project.config_error(
                f"models.{role}.script",
                "the scripted provider needs a responses file (script = "
                '"llm/responses.jsonl") or a function (script = "python:pkg.mod:fn")',
            )
        if config.script.startswith("python:"):
            fn = import_script_function(config.script, role, project.root)
            return ScriptedProvider(fn=fn, source=config.script, model=config.model)
        path = project.path(config.script)
        shown = project.relative(path)
        if not path.is_file():
            raise project.config_error(
                f"models.{role}.script", f"file {shown} not found", config.script
            )
        return ScriptedProvider(load_script(path, shown=shown), source=shown, model=config.model)
    if config.provider == "openai":
        key = api_key_for(config, role) or NO_KEY
        return OpenAIProvider(
            config.model,
            api_key=key,
            base_url=config.base_url,
            timeout_s=config.timeout_s,
            role=role,
        )
    if config.provider == "litellm":
        # A server named by base_url with no key variable (a local gateway, vLLM, a stand-in)
        # gets the placeholder, as with provider "openai": litellm refuses to send without one.
        placeholder = NO_KEY if config.base_url else None
        return LiteLLMProvider(
            config.model,
            api_key=api_key_for(config, role) or placeholder,
            base_url=config.base_url,
            timeout_s=config.timeout_s,
            role=role,
        )
    raise project.config_error(
        f"models.{role}.provider",
        f"'{config.provider}' is an embedder, not a chat model; use 'openai', 'litellm' or "
        "'scripted'",
    )


def client_for(
    project: Project,
    role: ChatRole,
    *,
    ledger: Ledger | None = None,
    cache: ResponseCache | Literal["workbench"] | None = "workbench",
) -> Client:
    """The chat client configured for ``role``.

    Scripted clients are never cached (editing the script takes effect at once); others use the
    workbench's response cache unless ``cache`` says otherwise.

    Raises:
        ConfigError: The role is misconfigured (missing key, script or package).
    """
    config: ModelConfig = getattr(project.config.models, role)
    provider = _provider(project, config, role)
    chosen: ResponseCache | None
    if config.provider == "scripted":
        chosen = None
    elif cache == "workbench":
        chosen = WorkbenchCache(project)
    else:
        chosen = cache
    return Client(
        provider,
        role=role,
        provider_name=config.provider,
        family=config.family,
        cache=chosen,
        ledger=ledger if ledger is not None else process_ledger(),
        retry=RetryPolicy(max_retries=config.max_retries),
        max_concurrency=config.max_concurrency,
        pricing=Pricing(config.input_cost_per_mtok, config.output_cost_per_mtok),
        temperature=config.temperature,
    )


def embedder_for(
    project: Project,
    *,
    ledger: Ledger | None = None,
    cache: ResponseCache | Literal["workbench"] | None = "workbench",
) -> Embedder:
    """The embedder configured in `[models.embedder]` (default: TF-IDF + SVD, offline).

    Raises:
        ConfigError: The provider cannot embed, or its package or key is missing.
    """
    config = project.config.models.embedder
    if config.provider == "tfidf":
        return TfidfEmbedder(dimensions=config.dimensions or 256, seed=project.config.synth.seed)
    if config.provider == "sentence-transformers":
        return SentenceTransformerEmbedder(config.model)
    if config.provider == "openai":
        return OpenAIEmbedder(
            config.model,
            api_key=api_key_for(config, "embedder") or NO_KEY,
            base_url=config.base_url,
            dimensions=config.dimensions,
            timeout_s=config.timeout_s,
            cache=WorkbenchCache(project) if cache == "workbench" else cache,
            ledger=ledger,
            retry=RetryPolicy(max_retries=config.max_retries),
            pricing=Pricing(config.input_cost_per_mtok, 0.0),
        )
    raise project.config_error(
        "models.embedder.provider",
        f"'{config.provider}' cannot embed; use 'tfidf', 'sentence-transformers' or 'openai'",
    )


@dataclass(frozen=True)
class PingResult:
    """What `casework llm ping` found.

    Attributes:
        role: The role pinged.
        model: Model id.
        endpoint: Where the request went.
        reply: What the model said.
        seconds: Round-trip time.
        usage: Tokens reported, if any.
    """

    role: str
    model: str
    endpoint: str
    reply: str
    seconds: float
    usage: TokenUsage | None


def ping(project: Project, role: ChatRole) -> PingResult:
    """Send one tiny request to a role's model (no cache), to check the configuration.

    Raises:
        ConfigError: The role is misconfigured.
        LLMError: The model could not be reached or failed.
    """
    client = client_for(project, role, cache=None)
    started = time.perf_counter()
    try:
        reply = client.complete(
            [Message("user", "Reply with the single word: pong")], max_tokens=16
        )
    finally:
        client.close()
    return PingResult(
        role=role,
        model=client.model,
        endpoint=client.provider.endpoint,
        reply=reply.text.strip(),
        seconds=time.perf_counter() - started,
        usage=reply.usage,
    )
