"""OpenAI-compatible endpoints through the official `openai` SDK (OpenAI, vLLM, Ollama, LM Studio…).

Anything that speaks `/v1/chat/completions` works. Entry points: :class:`OpenAIProvider`,
:func:`openai_sdk_client`, :func:`map_openai_error` (SDK exceptions to casework errors).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the SDK is imported where it is used: it costs ~0.6 s at start-up
    import openai

from casework.llm.base import Completion, LLMError, Message, Params, TokenUsage, TransientError

__all__ = ["OpenAIProvider", "map_openai_error", "openai_sdk_client", "retry_after_seconds"]

_TRANSIENT_STATUS = {408, 409, 429}


def openai_sdk_client(base_url: str | None, api_key: str, timeout_s: float) -> openai.OpenAI:
    """An SDK client with its own retries off (casework retries, and counts the retries)."""
    import openai

    return openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0)


def retry_after_seconds(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (a number of seconds), if present."""
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return float(ms) / 1000
        seconds = headers.get("retry-after")
        if seconds is not None:
            return float(seconds)
    except (TypeError, ValueError):
        return None
    return None


def _short(text: object, limit: int = 200) -> str:
    one_line = " ".join(str(text).split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def _status_detail(exc: openai.APIStatusError) -> str:
    """The server's own error message (`error.message` of the body), else the SDK's text."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
    return re.sub(r"^Error code: \d+ - ", "", exc.message)


def map_openai_error(exc: Exception, *, timeout_s: float, hint_key: str) -> LLMError:
    """Turn an SDK exception into a transient or permanent casework error with a useful message.

    Args:
        exc: Exception raised by the SDK (litellm raises subclasses of the same classes).
        timeout_s: The configured timeout, quoted when the request timed out.
        hint_key: Config key prefix for hints (`models.generator`).
    """
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return TransientError(
            f"request timed out after {timeout_s:g} s; check that the server is up and answering, "
            f"or raise {hint_key}.timeout_s"
        )
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return TransientError(f"cannot connect ({_short(cause)}); check {hint_key}.base_url")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        detail = _short(_status_detail(exc))
        if status in _TRANSIENT_STATUS or status >= 500:
            what = "rate limited" if status == 429 else "server error"
            return TransientError(
                f"{what} (HTTP {status}): {detail}", retry_after_seconds(exc.response.headers)
            )
        if status in (401, 403):
            return LLMError(
                f"HTTP {status}, the server refused the API key: {detail}; "
                f"check the variable named by {hint_key}.api_key_env"
            )
        if status == 404:
            return LLMError(
                f"HTTP 404, model or path not found: {detail}; check {hint_key}.model and "
                f"{hint_key}.base_url (OpenAI-compatible servers usually end in /v1)"
            )
        return LLMError(f"HTTP {status}: {detail}")
    if isinstance(exc, openai.OpenAIError):
        return LLMError(f"{exc.__class__.__name__}: {_short(exc)}")
    return LLMError(f"{exc.__class__.__name__}: {_short(exc)}")


def completion_from_response(response: Any, fallback_model: str) -> Completion:
    """A :class:`Completion` from an OpenAI-shaped chat response (SDK or litellm object)."""
    choices = getattr(response, "choices", None) or []
    if not choices:
        raise LLMError("the reply holds no choices")
    message = choices[0].message
    content = getattr(message, "content", None)
    if content is None:
        reason = getattr(choices[0], "finish_reason", None)
        raise LLMError(f"the reply holds no text (finish_reason {reason!r})")
    usage = None
    raw_usage = getattr(response, "usage", None)
    if raw_usage is not None:
        prompt = getattr(raw_usage, "prompt_tokens", None)
        completion = getattr(raw_usage, "completion_tokens", None)
        if isinstance(prompt, int) and isinstance(completion, int):
            usage = TokenUsage(prompt, completion)
    model = getattr(response, "model", None) or fallback_model
    return Completion(text=str(content), model=str(model), usage=usage)


class OpenAIProvider:
    """Chat completions from an OpenAI-compatible server.

    Args:
        model: Model id as the server names it.
        api_key: The key (a placeholder for servers that need none).
        base_url: Server URL (`http://localhost:11434/v1`); ``None`` for api.openai.com.
        timeout_s: Request timeout in seconds.
        role: Config role, for hints in messages.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        timeout_s: float = 60.0,
        role: str = "generator",
    ) -> None:
        self._model = model
        self._base_url = base_url
        self._timeout_s = timeout_s
        self._hint = f"models.{role}"
        self._sdk = openai_sdk_client(base_url, api_key, timeout_s)

    @property
    def model(self) -> str:
        """Model id."""
        return self._model

    @property
    def endpoint(self) -> str:
        """The server's base URL."""
        return str(self._sdk.base_url).rstrip("/")

    def close(self) -> None:
        """Close the SDK's HTTP client."""
        self._sdk.close()

    def send(self, messages: Sequence[Message], params: Params) -> Completion:
        """POST one chat completion request.

        Raises:
            TransientError: 429, 5xx, timeout or connection failure.
            LLMError: Any other failure.
        """
        import openai

        try:
            response = self._sdk.chat.completions.create(
                model=self._model,
                messages=[m.as_json() for m in messages],  # type: ignore[misc]
                **params.as_json(),
            )
        except openai.OpenAIError as exc:
            raise map_openai_error(exc, timeout_s=self._timeout_s, hint_key=self._hint) from exc
        return completion_from_response(response, self._model)
