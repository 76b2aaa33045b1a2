"""Transforms and their label-preservation table: which keep the seed's label, which force relabelling.

The protocol and spec every transform implements; implementations live in :mod:`.rules`,
:mod:`.identifiers`, :mod:`.injection` and :mod:`.rewrite`, and :mod:`.registry` lists them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from casework.llm import LLMClient
from casework.schema import Case, Situation

__all__ = [
    "Skip",
    "Transform",
    "TransformContext",
    "TransformSpec",
    "rng_for",
    "user_texts",
    "with_user_turns",
]

Method = Literal["rule", "llm"]
Surface = Literal["user_text", "tool_output"]


@dataclass(frozen=True)
class TransformSpec:
    """What a transform is and promises.

    Attributes:
        name: Transform name (`paraphrase`), the `~name` part of variant ids.
        preserves_label: True when a variant keeps its seed's label; False when the change can
            alter the expected behaviour, so the variant is created without a label.
        method: `rule` (deterministic, offline) or `llm` (through the generator model).
        surface: What it changes: the user's messages or the tool outputs (what the
            nothing-changed check compares).
        version: Version of the rules or prompt, recorded as `generator.prompt_version`.
        summary: One line for people.
    """

    name: str
    preserves_label: bool
    method: Method
    surface: Surface
    version: int
    summary: str


@dataclass(frozen=True)
class Skip:
    """A variant a transform cannot make from this seed, and why (reported, never silent)."""

    reason: str


@dataclass(frozen=True)
class TransformContext:
    """What transforms may use besides the seed.

    Attributes:
        seed: Seed of the rule-based transforms (`[synth] seed`).
        client: Generator model, for LLM transforms.
        id_patterns: Extra identifier patterns (`[privacy] id_patterns`), kind → regex.
        existing: Situations of variants this seed already has for this transform.
    """

    seed: int = 0
    client: LLMClient | None = None
    id_patterns: dict[str, str] = field(default_factory=dict)
    existing: Sequence[Situation] = ()


class Transform(Protocol):
    """Makes variant situations from a seed case."""

    @property
    def spec(self) -> TransformSpec:
        """The transform's name, promise and version."""
        ...

    def make(
        self, seed: Case, indices: Sequence[int], ctx: TransformContext
    ) -> list[Situation | Skip]:
        """One new situation (or a :class:`Skip`) per variant index (1-based), in order."""
        ...


def rng_for(seed: int, transform: str, case_id: str, index: int) -> random.Random:
    """The random generator of one variant (string seeding is stable across runs and machines)."""
    return random.Random(f"{seed}|{transform}|{case_id}|{index}")


def with_user_turns(situation: Situation, texts: Sequence[str]) -> Situation:
    """The situation with its user turns' text replaced, in order."""
    it = iter(texts)
    turns = [
        t.model_copy(update={"content": next(it)}) if t.role == "user" else t
        for t in situation.turns
    ]
    return situation.model_copy(update={"turns": turns})


def user_texts(situation: Situation) -> list[str]:
    """The text of each user turn, in order."""
    return [t.content for t in situation.turns if t.role == "user"]
