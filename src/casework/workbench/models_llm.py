"""Workbench tables of the LLM layer: the response cache (completions and embeddings)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from casework.workbench.base import Base

__all__ = ["LLMResponse"]


class LLMResponse(Base):
    """One cached model reply, keyed by sha256 of (kind, model, prompt hash, params).

    Re-running a command with the same prompts and parameters reads replies from here: free and
    reproducible. ``casework llm cache clear`` empties it.
    """

    __tablename__ = "llm_response"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    model: Mapped[str] = mapped_column(String(200), index=True)
    prompt_hash: Mapped[str] = mapped_column(String(64))
    params: Mapped[str] = mapped_column(Text)
    text: Mapped[str] = mapped_column(Text)
    prompt_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    completion_tokens: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
