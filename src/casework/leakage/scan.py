"""Cross-split scan: pairs of rows in different splits whose user text is nearly the same.

Below ``exact_below`` rows the exact prefix-filter join runs; above it MinHash-LSH with exact
verification. Given a memory setting, the exact join hands over to LSH when it would need more,
and LSH streams through a scratch folder when the in-memory join would (same pairs either way).
Entry point: :func:`find_split_pairs` (pure: cases in, verified pairs out).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

from casework.errors import UsageError
from casework.leakage.batches import Sketch, sets_of
from casework.leakage.join import exact_join, exact_join_mb
from casework.leakage.lsh import LshParams, choose_params, lsh_join
from casework.leakage.pairs import Pairs
from casework.leakage.scratch import clean_scratch, scratch_folder
from casework.leakage.streamed import StreamStats, batch_rows, in_memory_mb, streamed_lsh_join
from casework.leakage.text import compared_text
from casework.schema import SPLITS, Case
from casework.shingling import shingles, tokenize

__all__ = ["Engine", "Method", "ScanResult", "SplitPair", "find_split_pairs", "shared_shingles"]

Engine = Literal["local", "ray"]
Method = Literal["auto", "exact", "lsh"]

#: Shared shingles kept per pair for review.
SHARED_SHOWN = 50


@dataclass(frozen=True)
class SplitPair:
    """Two rows in different splits at or above the Jaccard threshold."""

    left_id: str
    """Id of the first row (ids ordered, so a pair has one key)."""
    right_id: str
    """Id of the second row."""
    left_split: str
    """Split of the first row."""
    right_split: str
    """Split of the second row."""
    jaccard: float
    """Exact Jaccard similarity of their shingle sets."""
    shared_count: int
    """Number of shingles they share."""
    shared: tuple[str, ...]
    """Shared shingles (up to 50), in the order they occur in the first row."""


@dataclass(frozen=True)
class ScanResult:
    """What a cross-split scan found and how."""

    rows: int
    """Rows scanned."""
    by_split: dict[str, int]
    """Rows per split."""
    threshold: float
    """Jaccard threshold."""
    method: Literal["exact", "lsh"]
    """Join used."""
    engine: Engine
    """Where shingling (and MinHash) ran."""
    params: LshParams | None
    """Banding parameters (LSH only)."""
    pairs: list[SplitPair] = field(default_factory=list)
    """Verified pairs, highest Jaccard first."""
    seconds: float = 0.0
    """Wall-clock time of the scan."""
    no_text: list[str] = field(default_factory=list)
    """Ids of rows with no words to compare (no user turn, scenario, tool set or data): they
    cannot be found as near-duplicates, so they are reported rather than skipped silently."""
    streamed: StreamStats | None = None
    """How the LSH join streamed through disk (None: it ran in memory)."""
    notes: list[str] = field(default_factory=list)
    """What the memory setting changed (the exact join handed over to LSH, LSH streamed)."""

    @property
    def curve(self) -> list[tuple[float, float]]:
        """Theoretical recall curve (LSH); the exact join recalls everything."""
        if self.params is None:
            return [(s, 1.0) for s in (0.5, 0.6, 0.7, 0.8, 0.9, 1.0) if s >= self.threshold]
        return self.params.curve()


def shared_shingles(
    left: str, right: str, k: int, limit: int = SHARED_SHOWN
) -> tuple[list[str], int]:
    """Shingles of ``left`` also in ``right``, in their order in ``left`` (first ``limit``), and the count."""
    words = tokenize(left)
    if len(words) >= k:
        sequence = [" ".join(words[i : i + k]) for i in range(len(words) - k + 1)]
    else:
        sequence = [" ".join(words)] if words else []
    theirs = shingles(right, k)
    ordered = list(dict.fromkeys(s for s in sequence if s in theirs))
    return ordered[:limit], len(ordered)


def _sketch(texts: list[str], k: int, num_perm: int, engine: Engine) -> Sketch:
    if engine == "ray":
        # Lazy: Ray is an optional extra, imported only when asked for.
        from casework.leakage.ray_engine import ray_sketch

        return ray_sketch(texts, k=k, num_perm=num_perm)
    return sets_of(texts, k=k, num_perm=num_perm)


def find_split_pairs(
    cases: Sequence[Case],
    threshold: float,
    *,
    k: int = 3,
    method: Method = "auto",
    exact_below: int = 50_000,
    num_perm: int = 256,
    engine: Engine = "local",
    memory_mb: float | None = None,
    scratch: Path | None = None,
) -> ScanResult:
    """Every pair of rows in different splits with Jaccard >= ``threshold`` on their situation text.

    The text compared is :func:`~casework.leakage.text.compared_text`: user turns, the
    simulated user's scenario, the offered tool set and the data the row sets.

    Args:
        cases: Rows of one dataset.
        threshold: Jaccard similarity at or above which a pair is reported.
        k: Words per shingle.
        method: ``exact`` join, ``lsh``, or ``auto`` (exact below ``exact_below`` rows).
        exact_below: Row count below which ``auto`` picks the exact join.
        num_perm: Largest MinHash width for LSH (bands x rows are chosen within it).
        engine: ``local`` (threads) or ``ray`` (Ray Data workers: the whole LSH pipeline; for
            the exact join, shingling only).
        memory_mb: Memory the scan keeps to (None: unbounded). Above it the exact join hands
            over to LSH, and the local LSH join streams through ``scratch``; both are said in
            the result's ``notes``.
        scratch: Root of the scratch folders of a streamed join (a project's
            ``.casework/tmp/leakage``); needed when the join streams. Folders killed scans
            left there are removed first.

    Raises:
        UsageError: The threshold is outside (0, 1], ``memory_mb`` is not positive, or the
            join must stream and no ``scratch`` was given.
    """
    if not 0.0 < threshold <= 1.0:
        raise UsageError(f"must be in (0, 1]. Got {threshold}.", param="threshold")
    if memory_mb is not None and not memory_mb > 0:
        raise UsageError(f"must be positive. Got {memory_mb}.", param="memory_mb")
    started = time.perf_counter()
    if scratch is not None:
        # Every scan, streamed or not, removes what a killed streamed scan left.
        clean_scratch(scratch)
    n = len(cases)
    chosen: Literal["exact", "lsh"] = (
        method if method != "auto" else ("exact" if n < exact_below else "lsh")
    )
    notes: list[str] = []
    if chosen == "exact" and memory_mb is not None and exact_join_mb(n) > memory_mb:
        chosen = "lsh"
        notes.append(
            f"the exact join of {n:,} rows needs about {exact_join_mb(n):,} MB, over the memory "
            f"setting ({memory_mb:,g} MB): MinHash-LSH ran instead (recall ≥ 0.99 at the "
            "threshold, every pair verified exactly)"
        )
    texts = [compared_text(c.situation) for c in cases]
    groups = np.array([SPLITS.index(c.split) for c in cases], dtype=np.int64)
    params: LshParams | None = None
    streamed: StreamStats | None = None
    if chosen == "exact":
        sketch = _sketch(texts, k, 0, engine)
        found: Pairs = exact_join(sketch.sets, threshold, groups=groups)
    elif engine == "ray":
        # Lazy: Ray is an optional extra. Every stage (signatures, band buckets, verification)
        # runs on Ray workers; only the verified pairs come back.
        from casework.leakage.ray_lsh import ray_lsh_join

        found, params = ray_lsh_join(texts, threshold, k=k, groups=groups, num_perm=num_perm)
    elif memory_mb is not None and in_memory_mb(n) > memory_mb:
        if scratch is None:
            raise UsageError(
                f"a scan of {n:,} rows within {memory_mb:,g} MB streams through a scratch folder. "
                "Got none.",
                param="scratch",
            )
        step = batch_rows(memory_mb)
        with scratch_folder(scratch) as folder:
            found, params, streamed = streamed_lsh_join(
                (texts[i : i + step] for i in range(0, n, step)),
                threshold,
                scratch=folder,
                memory_mb=memory_mb,
                k=k,
                num_perm=num_perm,
                groups=groups,
            )
        notes.append(
            f"the in-memory LSH join of {n:,} rows needs about {in_memory_mb(n):,} MB, over the "
            f"memory setting ({memory_mb:,g} MB): it streamed through disk ({streamed.batches} "
            f"batches, each band sorted in {streamed.band_parts} part"
            f"{'s' if streamed.band_parts != 1 else ''}), with the same pairs"
        )
    else:
        params = choose_params(threshold, num_perm)
        sketch = _sketch(texts, k, params.num_perm, engine)
        found, params = lsh_join(
            sketch.sets, threshold, num_perm=num_perm, groups=groups, signatures=sketch.signatures
        )
    pairs = []
    for a, b, jac in zip(
        found.left.tolist(), found.right.tolist(), found.jaccard.tolist(), strict=True
    ):
        first, second = sorted((a, b), key=lambda i: cases[i].id)
        shown, count = shared_shingles(texts[first], texts[second], k)
        pairs.append(
            SplitPair(
                cases[first].id,
                cases[second].id,
                cases[first].split,
                cases[second].split,
                round(jac, 6),
                count,
                tuple(shown),
            )
        )
    pairs.sort(key=lambda p: (-p.jaccard, p.left_id, p.right_id))
    return ScanResult(
        rows=len(cases),
        by_split=dict(sorted(Counter(c.split for c in cases).items())),
        threshold=threshold,
        method=chosen,
        engine=engine,
        params=params,
        pairs=pairs,
        seconds=time.perf_counter() - started,
        no_text=[c.id for c, text in zip(cases, texts, strict=True) if not tokenize(text)],
        streamed=streamed,
        notes=notes,
    )
