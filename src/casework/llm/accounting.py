"""Token and cost accounting: a thread-safe ledger one command fills and prints at its end.

Entry point: :class:`Ledger` (:meth:`Ledger.record`, :meth:`Ledger.summary_lines`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from casework.llm.base import TokenUsage

__all__ = ["Ledger", "ModelTally", "Pricing", "process_ledger"]


@dataclass(frozen=True)
class Pricing:
    """Price of a million tokens, each side; ``None`` when the user did not configure one."""

    input_per_mtok: float | None = None
    output_per_mtok: float | None = None

    @property
    def known(self) -> bool:
        """True when both prices are configured."""
        return self.input_per_mtok is not None and self.output_per_mtok is not None

    def cost(self, usage: TokenUsage) -> float:
        """Cost of ``usage`` (0 when a price is unknown; check :attr:`known`)."""
        if self.input_per_mtok is None or self.output_per_mtok is None:
            return 0.0
        return (
            usage.prompt_tokens * self.input_per_mtok
            + usage.completion_tokens * self.output_per_mtok
        ) / 1_000_000


@dataclass
class ModelTally:
    """What one role's model consumed during a command."""

    role: str
    model: str
    pricing: Pricing = field(default_factory=Pricing)
    requests: int = 0
    cached: int = 0
    retries: int = 0
    unreported: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0

    def line(self) -> str:
        """One human line: requests, cache hits, retries, tokens and cost."""
        text = f"{self.role} ({self.model}): {self.requests} request{'s' if self.requests != 1 else ''}"
        text += f", {self.cached} from cache"
        if self.retries:
            text += f", {self.retries} retr{'ies' if self.retries != 1 else 'y'}"
        sent = self.requests - self.cached
        if sent and self.unreported == sent:
            text += ", tokens not reported by the provider"
        else:
            text += (
                f", {self.prompt_tokens:,} prompt + {self.completion_tokens:,} completion tokens"
            )
            if self.unreported:
                text += f" ({self.unreported} request(s) reported none)"
        if self.pricing.known:
            text += f", cost {self.cost:.4f}"
        elif sent and self.unreported < sent:
            text += ", cost unknown (set input_cost_per_mtok and output_cost_per_mtok)"
        return text


class Ledger:
    """Per-command tallies of requests, cache hits, retries, tokens and cost, by role."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tallies: dict[tuple[str, str], ModelTally] = {}

    def _tally(self, role: str, model: str, pricing: Pricing) -> ModelTally:
        key = (role, model)
        if key not in self._tallies:
            self._tallies[key] = ModelTally(role=role, model=model, pricing=pricing)
        return self._tallies[key]

    def record(
        self,
        role: str,
        model: str,
        usage: TokenUsage | None,
        *,
        cached: bool,
        pricing: Pricing | None = None,
    ) -> None:
        """Count one request; a cached one costs nothing."""
        with self._lock:
            tally = self._tally(role, model, pricing or Pricing())
            tally.requests += 1
            if cached:
                tally.cached += 1
                return
            if usage is None:
                tally.unreported += 1
                return
            tally.prompt_tokens += usage.prompt_tokens
            tally.completion_tokens += usage.completion_tokens
            tally.cost += tally.pricing.cost(usage)

    def record_retry(self, role: str, model: str, pricing: Pricing | None = None) -> None:
        """Count one retry of a transient failure."""
        with self._lock:
            self._tally(role, model, pricing or Pricing()).retries += 1

    def tallies(self) -> list[ModelTally]:
        """Copies of the tallies, sorted by role then model."""
        with self._lock:
            return [
                ModelTally(**vars(t))
                for _, t in sorted(self._tallies.items(), key=lambda kv: kv[0])
            ]

    def summary_lines(self) -> list[str]:
        """One line per role and model; empty when no model was called."""
        return [t.line() for t in self.tallies()]

    def drain(self) -> list[str]:
        """The summary lines, then start afresh (the next command's lines are its own)."""
        with self._lock:
            lines = [t.line() for _, t in sorted(self._tallies.items(), key=lambda kv: kv[0])]
            self._tallies.clear()
        return lines


_PROCESS_LEDGER = Ledger()


def process_ledger() -> Ledger:
    """The ledger of every client made without one of its own (``client_for(...)``).

    The command line prints and drains it when a command ends, so every command that called a
    model (a run's simulated user and judge among them) ends with its usage lines.
    """
    return _PROCESS_LEDGER
