"""Names of the review kinds whose items other review modules mark (kept apart to avoid cycles)."""

from __future__ import annotations

JUDGE_VERDICT = "judge-verdict"
"""The kind of one sampled judge verdict given to one reviewer."""


def verdict_subject(sheet_id: str, reviewer: str) -> str:
    """The subject of a ``judge-verdict`` item: the sheet's opaque item id and the reviewer."""
    return f"{sheet_id}/{reviewer}"
