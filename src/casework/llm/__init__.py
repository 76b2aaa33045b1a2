"""LLM and embedding layer: Protocols, providers (OpenAI-compatible, litellm, scripted), cache.

Entry points: :func:`client_for` / :func:`embedder_for` (from `[models.*]` in casework.toml),
:class:`Client` (``complete`` and ``structured``), :class:`Ledger` (tokens and cost per command).
"""

from casework.llm.base import Completion, Embedder, LLMClient, LLMError, Message
from casework.llm.cache import WorkbenchCache
from casework.llm.embed import TfidfEmbedder
from casework.llm.factory import client_for, embedder_for, ping
from casework.llm.openai_compat import OpenAIProvider
from casework.llm.scripted import ScriptedProvider

__all__ = [
    "Completion",
    "Embedder",
    "LLMClient",
    "LLMError",
    "Message",
    "OpenAIProvider",
    "ScriptedProvider",
    "TfidfEmbedder",
    "WorkbenchCache",
    "client_for",
    "embedder_for",
    "ping",
]
