"""Other providers (Anthropic, Vertex, Bedrock, Azure…) through the optional `litellm` package.

Install with ``pip install 'casework[litellm]'``; it is imported only when a role is configured
with ``provider = "litellm"``. Entry point: :class:`LiteLLMProvider`.
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from casework.errors import ConfigError
from casework.llm.base import Completion, Message, Params
from casework.llm.openai_compat import completion_from_response, map_openai_error
from casework.project import CONFIG_NAME

__all__ = ["LiteLLMProvider", "import_litellm"]


def import_litellm(role: str) -> ModuleType:
    """Import `litellm`, or explain how to install it.

    Raises:
        ConfigError: The package is not installed.
    """
    # litellm fetches its model price map from GitHub at import unless told to use its bundled
    # copy; casework reaches only the endpoints a project configures. Set the variable to
    # "False" to let litellm fetch it.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    # pydantic warns about litellm's own ReadOnly TypedDicts when litellm loads a provider module
    # (at import and lazily during a call); nothing a casework user can act on.
    warnings.filterwarnings("ignore", r"Items? .* the `ReadOnly` qualifier", UserWarning)
    try:
        module = importlib.import_module("litellm")
    except ImportError as exc:
        raise ConfigError(
            CONFIG_NAME,
            None,
            f"models.{role}.provider",
            "'litellm' needs the litellm package, which is not installed. Install it with "
            "`pip install 'casework[litellm]'`, or use "
            'provider = "openai" with base_url for an OpenAI-compatible server',
        ) from exc
    # Its "Give Feedback / Get Help" banner on every failure would interleave with casework's
    # own located messages, which already carry the server's words.
    setattr(module, "suppress_debug_info", True)  # noqa: B010 (a module attribute)
    return module


class LiteLLMProvider:
    """Chat completions through `litellm.completion` (model ids like `anthropic/claude-3-5-haiku`).

    litellm raises subclasses of the `openai` SDK's exceptions, so failures are classified the same
    way as for OpenAI-compatible servers.

    Args:
        model: litellm model id (`provider/model`).
        api_key: Key, if the role names one (litellm otherwise reads the provider's own variable).
        base_url: Endpoint override (`api_base`).
        timeout_s: Request timeout in seconds.
        role: Config role, for messages.
        module: The litellm module (imported lazily when omitted).
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        role: str = "generator",
        module: ModuleType | None = None,
    ) -> None:
        self._litellm = module if module is not None else import_litellm(role)
        self._model = model
        self._api_key = api_key
        self._base_url = base_url
        self._timeout_s = timeout_s
        self._hint = f"models.{role}"

    @property
    def model(self) -> str:
        """Model id."""
        return self._model

    @property
    def endpoint(self) -> str:
        """`litellm` or the configured base URL."""
        return self._base_url or "litellm"

    def send(self, messages: Sequence[Message], params: Params) -> Completion:
        """One `litellm.completion` call (litellm's own retries off).

        Raises:
            TransientError: 429, 5xx, timeout or connection failure.
            LLMError: Any other failure.
        """
        kwargs: dict[str, Any] = {
            "model": self._model,
            "messages": [m.as_json() for m in messages],
            "timeout": self._timeout_s,
            "num_retries": 0,
            **params.as_json(),
        }
        if self._api_key is not None:
            kwargs["api_key"] = self._api_key
        if self._base_url is not None:
            kwargs["api_base"] = self._base_url
        import openai

        try:
            response = self._litellm.completion(**kwargs)
        except openai.OpenAIError as exc:
            raise map_openai_error(exc, timeout_s=self._timeout_s, hint_key=self._hint) from exc
        return completion_from_response(response, self._model)
