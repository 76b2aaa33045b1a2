"""LLM and embedding layer: Protocols, providers (OpenAI-compatible, litellm, scripted), cache.

Entry points: :func:`client_for` / :func:`embedder_for` (from `[models.*]` in casework.toml),
:class:`Client` (``complete`` and ``structured``), :class:`Ledger` (tokens and cost per command).
"""

from casework.llm.accounting import Ledger, ModelTally, Pricing
from casework.llm.base import (
    Completion,
    Embedder,
    LLMClient,
    LLMError,
    Message,
    Params,
    Provider,
    StructuredOutputError,
    TokenUsage,
    TransientError,
    prompt_hash,
)
from casework.llm.cache import CacheEntry, MemoryCache, ResponseCache, WorkbenchCache, cache_key
from casework.llm.client import Client
from casework.llm.embed import OpenAIEmbedder, SentenceTransformerEmbedder, TfidfEmbedder
from casework.llm.factory import (
    ChatRole,
    PingResult,
    api_key_for,
    client_for,
    embedder_for,
    ping,
)
from casework.llm.litellm_provider import LiteLLMProvider
from casework.llm.openai_compat import OpenAIProvider
from casework.llm.retry import RetryPolicy, call_with_retries
from casework.llm.scripted import (
    ScriptedProvider,
    ScriptFunction,
    ScriptRule,
    import_script_function,
    load_script,
    render_prompt,
)
from casework.llm.structured import ReplyProblem, parse_reply, repair_messages, schema_messages

__all__ = [
    "CacheEntry",
    "ChatRole",
    "Client",
    "Completion",
    "Embedder",
    "LLMClient",
    "LLMError",
    "Ledger",
    "LiteLLMProvider",
    "MemoryCache",
    "Message",
    "ModelTally",
    "OpenAIEmbedder",
    "OpenAIProvider",
    "Params",
    "PingResult",
    "Pricing",
    "Provider",
    "ReplyProblem",
    "ResponseCache",
    "RetryPolicy",
    "ScriptFunction",
    "ScriptRule",
    "ScriptedProvider",
    "SentenceTransformerEmbedder",
    "StructuredOutputError",
    "TfidfEmbedder",
    "TokenUsage",
    "TransientError",
    "WorkbenchCache",
    "api_key_for",
    "cache_key",
    "call_with_retries",
    "client_for",
    "embedder_for",
    "import_script_function",
    "load_script",
    "parse_reply",
    "ping",
    "prompt_hash",
    "render_prompt",
    "repair_messages",
    "schema_messages",
]
