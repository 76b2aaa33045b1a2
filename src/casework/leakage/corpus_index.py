"""Corpus index and scoring: the eval rows indexed once, and corpus documents scored against them.

The rows are indexed once (their 13-grams; IDF weights of their shingles; the heaviest shingles
a document holding half a row's weight must contain), and every document is scored: share
of the row's 13-grams found (the n-gram overlap test of Brown et al. 2020, appendix C), IDF-weighted
and plain 3-shingle containment, and Jaccard. A document holds a row when the 13-gram share or
the weighted containment reaches the bar (plain containment of templated text is shown, not used).
These are the batch functions both engines run (the local loop and the Ray workers).
Entry points: :func:`build_index`, :func:`score_documents`, :func:`scan_file`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from casework.errors import Problem, UsageError
from casework.leakage.pairs import (
    dedupe_pairs,
    dense_rows,
    intersection_sizes,
    intersection_weights,
)
from casework.leakage.reading import Reading, file_kind, iter_documents
from casework.leakage.text import compared_text
from casework.schema import Case
from casework.shingling._sets import I64, ShingleSets, gather_segments, segment_ids
from casework.shingling._shingles import shingle_sets, tokenize_batch

__all__ = ["CorpusHit", "CorpusIndex", "build_index", "scan_file", "score_documents"]

LONG_N = 13
"""Words per long n-gram: one shared 13-gram marks a document as containing the row."""


@dataclass(frozen=True)
class CorpusIndex:
    """The eval rows, indexed once and shipped to every worker."""

    datasets: list[str]
    """Dataset of each row, in index order."""
    ids: list[str]
    """Row ids, in index order."""
    splits: list[str]
    """Split of each row."""
    k: int
    """Words per shingle."""
    long_n: int
    """Words per long n-gram."""
    containment: float
    """Containment at or above which a document holds a row."""
    sets: ShingleSets
    """k-shingle sets of the rows."""
    long_keys: npt.NDArray[np.uint64]
    """Sorted long n-gram hashes of all rows."""
    long_rows: I64
    """Row of each entry of ``long_keys``."""
    long_counts: I64
    """Distinct long n-grams per row."""
    weights: npt.NDArray[np.float64]
    """IDF weight of each entry of ``sets.hashes``: ``ln((N + 1) / (df + 1))`` over the rows."""
    row_weight: npt.NDArray[np.float64]
    """Summed weight of each row."""
    prefix_keys: npt.NDArray[np.uint64]
    """Sorted prefix shingles (heaviest first per row) for weighted-containment candidates."""
    prefix_rows: I64
    """Row of each entry of ``prefix_keys``."""


def _sorted_postings(
    sets: ShingleSets, keep: npt.NDArray[np.bool_]
) -> tuple[npt.NDArray[np.uint64], I64]:
    rows = segment_ids(sets.offsets)[keep]
    keys = sets.hashes[keep]
    order = np.lexsort((rows, keys))
    return keys[order], rows[order]


def build_index(
    rows: Sequence[tuple[str, Case]], *, k: int = 3, long_n: int = LONG_N, containment: float = 0.8
) -> CorpusIndex:
    """Index the ``(dataset, case)`` rows a corpus must not contain.

    Those are holdout and smoke rows, and frozen rows of any split.
    """
    if not 0.0 < containment <= 1.0:
        raise UsageError(f"must be in (0, 1]. Got {containment}.", param="containment")
    kept = [(name, c) for name, c in rows if c.split != "dev" or c.frozen]
    chosen = [c for _, c in kept]
    texts = [compared_text(c.situation) for c in chosen]
    sets = shingle_sets(texts, k)
    long_sets = shingle_sets(texts, long_n)
    long_ok = np.repeat(np.diff(_word_offsets(texts)) >= long_n, long_sets.sizes())
    long_keys, long_rows = _sorted_postings(long_sets, long_ok)
    long_counts = np.bincount(long_rows, minlength=len(chosen)).astype(np.int64)
    # IDF over the indexed rows: template phrases shared by many rows weigh little.
    _, inverse, df = np.unique(sets.hashes, return_inverse=True, return_counts=True)
    weights = np.log((len(chosen) + 1) / (df[inverse.reshape(-1)] + 1))
    row = segment_ids(sets.offsets)
    row_weight = np.bincount(row, weights=weights, minlength=len(chosen)).astype(np.float64)
    # Prefix: heaviest shingles first, until what is left weighs less than c of the row. A
    # document holding none of them cannot reach weighted containment c.
    order = np.lexsort((sets.hashes, -weights, row))
    ordered_w = weights[order]
    cum = np.cumsum(ordered_w)
    before = (
        cum - ordered_w - np.repeat(np.concatenate([[0.0], cum])[sets.offsets[:-1]], sets.sizes())
    )
    in_prefix = np.zeros(len(order), dtype=bool)
    in_prefix[order] = (before <= (1.0 - containment) * row_weight[row[order]] + 1e-9) & (
        row_weight[row[order]] > 0
    )
    prefix_keys, prefix_rows = _sorted_postings(sets, in_prefix)
    return CorpusIndex(
        datasets=[name for name, _ in kept],
        ids=[c.id for c in chosen],
        splits=[c.split for c in chosen],
        k=k,
        long_n=long_n,
        containment=containment,
        sets=sets,
        weights=weights,
        row_weight=row_weight,
        long_keys=long_keys,
        long_rows=long_rows,
        long_counts=long_counts,
        prefix_keys=prefix_keys,
        prefix_rows=prefix_rows,
    )


def _word_offsets(texts: Sequence[str]) -> I64:
    return tokenize_batch(list(texts)).offsets


def _lookup(keys: npt.NDArray[np.uint64], rows: I64, docs: ShingleSets) -> tuple[I64, I64]:
    """(document, row) for every document shingle found among ``keys`` (with repeats)."""
    lo = np.searchsorted(keys, docs.hashes, side="left")
    hi = np.searchsorted(keys, docs.hashes, side="right")
    counts = hi - lo
    doc_of = np.repeat(segment_ids(docs.offsets), counts)
    starts = np.repeat(lo, counts)
    within = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(
        np.cumsum(counts) - counts, counts
    )
    return doc_of, rows[starts + within]


@dataclass(frozen=True)
class CorpusHit:
    """An eval row found in a corpus document."""

    file: str
    """Corpus file (local path or URL)."""
    doc: int
    """1-based line (JSONL, text) or row (Parquet) of the document in its file."""
    dataset: str
    """Dataset of the eval row."""
    case_id: str
    """Id of the eval row."""
    split: str
    """Its split."""
    long_shared: int
    """Long n-grams (13 words) of the row found in the document."""
    long_fraction: float
    """Share of the row's long n-grams found (0 for rows shorter than 13 words)."""
    containment: float
    """Share of the row's shingles found in the document."""
    weighted: float
    """Share of the row's IDF weight found in the document (template phrases count little)."""
    jaccard: float
    """Jaccard similarity of row and document shingle sets."""

    @property
    def ref(self) -> str:
        """Document reference: ``path:line`` (JSONL, text) or ``path#row`` (Parquet)."""
        return (
            f"{self.file}#{self.doc}"
            if file_kind(self.file) == "parquet"
            else f"{self.file}:{self.doc}"
        )


def score_documents(
    index: CorpusIndex, texts: Sequence[str], refs: Sequence[tuple[str, int]]
) -> list[CorpusHit]:
    """Hits of one batch of documents: shared long n-grams, or containment at the index's bar.

    The batch function both engines run; results depend only on (index, texts, refs).
    """
    if not texts or not index.ids:
        return []
    n_rows = len(index.ids)
    docs = shingle_sets(list(texts), index.k)
    long_docs = shingle_sets(list(texts), index.long_n)
    long_doc, long_row = _lookup(index.long_keys, index.long_rows, long_docs)
    pre_doc, pre_row = _lookup(index.prefix_keys, index.prefix_rows, docs)
    doc_ids, row_ids = dedupe_pairs(
        np.concatenate([long_doc, pre_doc]),
        np.concatenate([long_row, pre_row]) + len(texts),
        len(texts) + n_rows,
    )
    row_ids = row_ids - len(texts)
    if not len(doc_ids):
        return []
    both = ShingleSets.concat([index.sets, docs])
    needed = np.unique(np.concatenate([row_ids, doc_ids + n_rows]))
    values, offsets, where = dense_rows(both, needed)
    left, right = where[row_ids], where[doc_ids + n_rows]
    shared = intersection_sizes(values, offsets, left, right)
    # Weight of each dense value: the IDF of the row shingle it stands for (documents add none).
    value_weight = np.zeros(int(values.max()) + 1 if len(values) else 1, dtype=np.float64)
    row_part = np.flatnonzero(needed < n_rows)
    row_index, _ = gather_segments(index.sets.offsets, needed[row_part])
    row_values_index, _ = gather_segments(offsets, row_part)
    value_weight[values[row_values_index]] = index.weights[row_index]
    weighted_shared = intersection_weights(values, offsets, left, right, value_weight)
    row_size = index.sets.sizes()[row_ids]
    doc_size = docs.sizes()[doc_ids]
    containment = np.divide(shared, row_size, out=np.zeros(len(shared)), where=row_size > 0)
    row_weight = index.row_weight[row_ids]
    weighted = np.divide(
        weighted_shared, row_weight, out=np.zeros(len(shared)), where=row_weight > 0
    )
    union = row_size + doc_size - shared
    jaccard = np.divide(shared, union, out=np.zeros(len(shared)), where=union > 0)
    long_key = long_doc * np.int64(n_rows) + long_row
    pair_key = doc_ids * np.int64(n_rows) + row_ids
    uniq, counts = np.unique(long_key, return_counts=True)
    pos = np.searchsorted(uniq, pair_key)
    pos_ok = pos < len(uniq)
    long_shared = np.zeros(len(pair_key), dtype=np.int64)
    matched = pos_ok & (uniq[np.minimum(pos, len(uniq) - 1)] == pair_key)
    long_shared[matched] = counts[pos[matched]]
    long_total = index.long_counts[row_ids]
    long_fraction = np.divide(
        long_shared, long_total, out=np.zeros(len(shared)), where=long_total > 0
    )
    bar = index.containment - 1e-12
    hit = (weighted >= bar) | (long_fraction >= bar)
    out = []
    for i in np.flatnonzero(hit).tolist():
        r = int(row_ids[i])
        out.append(
            CorpusHit(
                file=refs[int(doc_ids[i])][0],
                doc=refs[int(doc_ids[i])][1],
                dataset=index.datasets[r],
                case_id=index.ids[r],
                split=index.splits[r],
                long_shared=int(long_shared[i]),
                long_fraction=round(float(long_fraction[i]), 4),
                containment=round(float(containment[i]), 4),
                weighted=round(float(weighted[i]), 4),
                jaccard=round(float(jaccard[i]), 4),
            )
        )
    return out


def scan_file(
    index: CorpusIndex, path: str, text_field: str = "text"
) -> tuple[list[CorpusHit], int, list[Problem]]:
    """Score every document of one file: the unit of work of both engines."""
    reading = Reading()
    hits: list[CorpusHit] = []
    for refs, texts in iter_documents(path, text_field=text_field, reading=reading):
        hits.extend(score_documents(index, texts, refs))
    return hits, reading.documents, reading.problems
