"""The response cache: replies keyed by (kind, model, prompt hash, params), so re-runs are free.

Entry points: :func:`cache_key`, :class:`ResponseCache` (the Protocol), :class:`MemoryCache`,
:class:`WorkbenchCache` (the `llm_response` table of the project's workbench).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError

from casework.project import Project
from casework.workbench import Workbench, open_workbench
from casework.workbench.models_llm import LLMResponse

__all__ = ["CacheEntry", "MemoryCache", "ResponseCache", "WorkbenchCache", "cache_key"]


@dataclass(frozen=True)
class CacheEntry:
    """One cached reply.

    Attributes:
        kind: `completion` or `embedding`.
        model: Provider and model id (`openai:gpt-4o-mini`).
        prompt_hash: sha256 of the canonical prompt (or of the embedded text).
        params: Canonical JSON of the request parameters.
        text: The reply text (a JSON list of floats for an embedding).
        prompt_tokens: Prompt tokens the original request consumed, if reported.
        completion_tokens: Completion tokens the original request consumed, if reported.
    """

    kind: str
    model: str
    prompt_hash: str
    params: str
    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None


def cache_key(kind: str, model: str, prompt_hash: str, params: dict[str, Any]) -> str:
    """sha256 over the kind, model, prompt hash and canonical parameters."""
    body = json.dumps(
        {"kind": kind, "model": model, "prompt": prompt_hash, "params": params},
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def params_json(params: dict[str, Any]) -> str:
    """Canonical JSON of request parameters, as stored beside a cached reply."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


class ResponseCache(Protocol):
    """Where replies are kept between runs."""

    def get(self, key: str) -> CacheEntry | None:
        """The entry under ``key``, if any."""
        ...

    def put(self, key: str, entry: CacheEntry) -> None:
        """Store ``entry`` under ``key`` (an existing entry is kept)."""
        ...

    def delete(self, key: str) -> None:
        """Forget the entry under ``key`` (a reply that proved unusable)."""
        ...


class MemoryCache:
    """A cache in a dict, for one process (tests, and callers without a workbench)."""

    def __init__(self) -> None:
        self._entries: dict[str, CacheEntry] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> CacheEntry | None:
        """The entry under ``key``, if any."""
        with self._lock:
            return self._entries.get(key)

    def put(self, key: str, entry: CacheEntry) -> None:
        """Store ``entry`` under ``key`` (an existing entry is kept)."""
        with self._lock:
            self._entries.setdefault(key, entry)

    def delete(self, key: str) -> None:
        """Forget the entry under ``key``."""
        with self._lock:
            self._entries.pop(key, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)


class WorkbenchCache:
    """The `llm_response` table of a workbench database, opened on first use."""

    def __init__(self, project: Project | None = None, *, workbench: Workbench | None = None):
        if project is None and workbench is None:
            raise ValueError("WorkbenchCache needs a project or a workbench")
        self._project = project
        self._workbench = workbench
        self._lock = threading.Lock()

    def _wb(self) -> Workbench:
        with self._lock:
            if self._workbench is None:
                self._workbench = open_workbench(self._project)
            return self._workbench

    def get(self, key: str) -> CacheEntry | None:
        """The entry under ``key``, if any."""
        with self._wb().session() as session:
            row = session.get(LLMResponse, key)
            if row is None:
                return None
            return CacheEntry(
                kind=row.kind,
                model=row.model,
                prompt_hash=row.prompt_hash,
                params=row.params,
                text=row.text,
                prompt_tokens=row.prompt_tokens,
                completion_tokens=row.completion_tokens,
            )

    def put(self, key: str, entry: CacheEntry) -> None:
        """Store ``entry`` under ``key``; a concurrent writer of the same key wins quietly."""
        row = LLMResponse(
            key=key,
            kind=entry.kind,
            model=entry.model,
            prompt_hash=entry.prompt_hash,
            params=entry.params,
            text=entry.text,
            prompt_tokens=entry.prompt_tokens,
            completion_tokens=entry.completion_tokens,
            created_at=datetime.now(UTC),
        )
        try:
            with self._wb().session() as session:
                if session.get(LLMResponse, key) is None:
                    session.add(row)
        except IntegrityError:
            # Another thread or process stored the same request first; its reply is as good.
            return

    def delete(self, key: str) -> None:
        """Forget the entry under ``key``."""
        with self._wb().session() as session:
            session.execute(delete(LLMResponse).where(LLMResponse.key == key))

    def count(self) -> dict[str, int]:
        """Entries per model."""
        with self._wb().session() as session:
            rows = session.execute(
                select(LLMResponse.model, func.count()).group_by(LLMResponse.model)
            ).all()
            return {str(model): int(n) for model, n in sorted(rows)}

    def clear(self, model: str | None = None) -> int:
        """Delete every entry (or those of ``model``); returns how many went."""
        with self._wb().session() as session:
            stmt = delete(LLMResponse)
            if model is not None:
                stmt = stmt.where(LLMResponse.model == model)
            result = session.execute(stmt)
            return int(getattr(result, "rowcount", 0) or 0)

    def close(self) -> None:
        """Release the database connection pool, if this cache opened it."""
        with self._lock:
            if self._workbench is not None and self._project is not None:
                self._workbench.close()
                self._workbench = None
