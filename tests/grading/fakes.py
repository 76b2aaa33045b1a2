"""A fake LLM client for judge tests: answers from a function of the prompt."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel

from casework.llm import Completion, LLMError, Message

T = TypeVar("T", bound=BaseModel)


class FakeLLM:
    """Implements the LLMClient protocol; ``answer(prompt_text)`` returns the JSON object to parse."""

    def __init__(self, answer: Callable[[str], dict[str, Any]], model: str = "judge-1") -> None:
        self._answer = answer
        self._model = model
        self.prompts: list[str] = []

    @property
    def model(self) -> str:
        return self._model

    @property
    def family(self) -> str | None:
        return None

    @property
    def max_concurrency(self) -> int:
        return 4

    def complete(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> Completion:
        raise LLMError("not used")

    def structured(
        self,
        messages: Sequence[Message],
        model: type[T],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> T:
        prompt = "\n".join(m.content for m in messages)
        self.prompts.append(prompt)
        return model.model_validate(self._answer(prompt))


def certified(model: str, slices: dict[str, bool], rubric: str = "r-test") -> dict[str, Any]:
    """Judge keyword arguments certifying ``model`` per slice (True: admissible), both check kinds.

    The judge is told ``rubric`` as each slice's current rubric digest, as a run does.
    """
    from casework.grading import PROMPT_VERSION
    from casework.grading.judge import CHECK_KINDS, Certification

    certs = [
        Certification(name, kind, model, PROMPT_VERSION, rubric, 40, 2, 40, 2, ok)
        for name, ok in slices.items()
        for kind in CHECK_KINDS
    ]
    return {"certifications": certs, "rubric_digests": dict.fromkeys(slices, rubric)}
