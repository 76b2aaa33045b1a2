"""The scripted offline client: replies from a JSONL rules file or a Python function, deterministic.

Used by tests and the demo, and by anyone who wants a run that never touches a network.
Entry points: :class:`ScriptRule` (one line of the file), :func:`load_script`, :class:`ScriptedProvider`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from casework.dataset.jsonl import read_records
from casework.errors import ConfigError, InputError
from casework.llm.base import Completion, Message, Params
from casework.plugins import load_object
from casework.project import CONFIG_NAME

__all__ = ["ScriptFunction", "ScriptRule", "ScriptedProvider", "load_script", "render_prompt"]

ScriptFunction = Callable[[list[Message]], Any]
"""A Python script: receives the messages, returns the reply (a string, or JSON to serialise)."""


class ScriptRule(BaseModel):
    """One line of a scripted-responses file: when the prompt matches, reply with this.

    The prompt is every message rendered as ``role: content`` on its own lines. Rules are tried in
    file order and the first that matches answers, so put specific rules before general ones
    (a rule with neither ``when`` nor ``regex`` matches every prompt).
    """

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    schema_version: Literal[1] = 1
    """Version of this record format."""
    when: str | list[str] | None = None
    """Text the prompt must contain; a list means every item must appear (case-sensitive)."""
    regex: str | None = None
    """Regular expression that must match somewhere in the prompt (Python syntax)."""
    reply: Any
    """The reply: a string is sent as is; any other JSON value is sent serialised."""
    note: str | None = None
    """Free text for people reading the file."""

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"invalid regular expression: {exc}") from exc
            except (RecursionError, OverflowError):
                raise ValueError(
                    "invalid regular expression: nested too deeply or a repeat count too large"
                ) from None
        return value

    def matches(self, prompt: str) -> bool:
        """Whether this rule answers ``prompt``."""
        needles = [self.when] if isinstance(self.when, str) else (self.when or [])
        if any(n not in prompt for n in needles):
            return False
        return self.regex is None or re.search(self.regex, prompt) is not None

    def reply_text(self) -> str:
        """The reply as the model would send it."""
        if isinstance(self.reply, str):
            return self.reply
        return json.dumps(self.reply, ensure_ascii=False)


def render_prompt(messages: Sequence[Message]) -> str:
    """The text rules match against: ``role: content`` per message, newline-separated."""
    return "\n".join(f"{m.role}: {m.content}" for m in messages)


def load_script(path: Path, *, shown: str | None = None) -> list[ScriptRule]:
    """Read a scripted-responses JSONL file, reporting every bad line.

    Raises:
        InputErrors: A line is not valid JSON or not a valid rule.
    """
    return read_records(path, ScriptRule, shown=shown).records


def import_script_function(spec: str, role: str, root: Path | None = None) -> ScriptFunction:
    """Import `python:pkg.module:attr` as a script function, from the project ``root`` (or cwd).

    Raises:
        ConfigError: The spec is malformed, or the module or function is missing.
    """
    where = f"models.{role}.script"
    fn = load_object(
        spec.removeprefix("python:"),
        root=root or Path.cwd(),
        where=where,
        shape="'python:pkg.module:function'",
    )
    if not callable(fn):
        raise ConfigError(CONFIG_NAME, None, where, "not a function", spec)
    return fn  # type: ignore[no-any-return]


class ScriptedProvider:
    """Answers from rules (first match wins) or from a function; never touches a network.

    Args:
        rules: Rules read with :func:`load_script`.
        fn: A function answering instead of rules.
        source: The rules file or function spec, as shown in messages.
        model: Model id to report (`scripted`).
    """

    def __init__(
        self,
        rules: Sequence[ScriptRule] = (),
        *,
        fn: ScriptFunction | None = None,
        source: str = "scripted",
        model: str = "scripted",
    ) -> None:
        if fn is None and not rules:
            raise ConfigError(
                source, None, None, "the scripted client has no rules and no function"
            )
        self._rules = list(rules)
        self._fn = fn
        self._source = source
        self._model = model

    @property
    def model(self) -> str:
        """Model id."""
        return self._model

    @property
    def endpoint(self) -> str:
        """`scripted:<source>`."""
        return f"scripted:{self._source}"

    def send(self, messages: Sequence[Message], params: Params) -> Completion:
        """Reply to the prompt from the first matching rule (or the function).

        Raises:
            InputError: No rule matches; the message shows the last line of the last user message.
        """
        if self._fn is not None:
            out = self._fn(list(messages))
            text = out if isinstance(out, str) else json.dumps(out, ensure_ascii=False)
            return Completion(text=text, model=self._model)
        prompt = render_prompt(messages)
        for rule in self._rules:
            if rule.matches(prompt):
                return Completion(text=rule.reply_text(), model=self._model)
        last_user = next((m.content for m in reversed(messages) if m.role == "user"), prompt)
        # The last line of the last user message is where a prompt's specifics usually sit.
        tail = next((line for line in reversed(last_user.splitlines()) if line.strip()), "")
        raise InputError(
            self._source,
            None,
            None,
            "no scripted rule matches the prompt; add a line whose 'when' text the prompt contains",
            tail,
            has_got=True,
        )
