"""Corpus scan: which eval rows (holdout, smoke, frozen) appear in a training or fine-tuning corpus.

The rows are indexed once (:mod:`casework.leakage.corpus_index`); the corpus is streamed in batches
from JSONL, Parquet or plain-text files, local or any fsspec URL, file by file in this process or
on Ray workers, and the hits come back in file order. Entry point: :func:`scan_corpus`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from casework.dataset import load_dataset
from casework.errors import Problem
from casework.leakage.corpus_index import CorpusHit, build_index, scan_file
from casework.leakage.reading import corpus_files
from casework.leakage.scan import Engine
from casework.project import Project
from casework.schema import Case

__all__ = ["CorpusReport", "hit_order", "scan_corpus"]


@dataclass(frozen=True)
class CorpusReport:
    """Result of a corpus scan."""

    datasets: list[str]
    files: list[str]
    rows_indexed: int
    documents: int
    engine: Engine
    containment: float
    hits: list[CorpusHit]
    problems: list[Problem] = field(default_factory=list)
    """Corpus lines that could not be read (skipped)."""

    @property
    def rows_found(self) -> list[str]:
        """Distinct eval rows found in the corpus."""
        return sorted({f"{h.dataset}:{h.case_id}" for h in self.hits})


def hit_order(files: Sequence[str]) -> Callable[[CorpusHit], tuple[int, int, str, str]]:
    """Sort key putting hits in file order, then document order, then row id (both engines)."""
    position = {f: i for i, f in enumerate(files)}

    def key(hit: CorpusHit) -> tuple[int, int, str, str]:
        return (position.get(hit.file, len(position)), hit.doc, hit.dataset, hit.case_id)

    return key


def scan_corpus(
    project: Project,
    paths: Sequence[str],
    *,
    datasets: Sequence[str] = (),
    engine: Engine = "local",
    text_field: str = "text",
    containment: float | None = None,
) -> CorpusReport:
    """Find the eval rows of ``datasets`` (default: all) in the corpus at ``paths``.

    Raises:
        InputErrors: A path matches no file, or a Parquet file lacks the text column.
    """
    names = list(datasets) or project.dataset_names()
    rows: list[tuple[str, Case]] = []
    for ref in names:
        ds = load_dataset(project, ref)
        rows.extend((ds.name, c) for c in ds.cases)
    bar = containment if containment is not None else project.config.leakage.corpus_containment
    index = build_index(rows, k=project.config.leakage.shingle_k, containment=bar)
    files = corpus_files(paths)
    if engine == "ray":
        # Lazy: Ray is an optional extra, imported only when asked for.
        from casework.leakage.ray_engine import ray_scan_files

        hits, documents, problems = ray_scan_files(index, files, text_field)
    else:
        hits, documents, problems = [], 0, []
        for path in files:
            file_hits, count, file_problems = scan_file(index, path, text_field)
            hits.extend(file_hits)
            documents += count
            problems.extend(file_problems)
    hits.sort(key=hit_order(files))
    return CorpusReport(names, files, len(index.ids), documents, engine, bar, hits, problems)
