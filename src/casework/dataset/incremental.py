"""A cases file as line hashes: what is new against a stored version is parsed, the rest is known.

:func:`index_file` reads a `cases.jsonl` as lines, hashes each once, takes the id and summary of
every line a stored version already holds from that version's index, and validates only the
other lines (in batches, holding no more of them than a batch). Anything a release would refuse
or report (a bad line, a duplicate id, a contradiction) makes it return ``None``: the caller then
takes the full path, which reports the problem exactly as before. Entry points:
:func:`index_file`, :func:`index_models`, :func:`summary_of`, :func:`counts_of`.
"""

from __future__ import annotations

import multiprocessing
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from itertools import pairwise

from casework.dataset.check import contradictory_tools
from casework.dataset.jsonl import (
    canonical_bytes,
    canonical_line,
    collector_paused,
    parse_records,
)
from casework.dataset.objects import Summary, VersionIndex, line_hash
from casework.dataset.parallel import parallel_workers
from casework.errors import InputErrors
from casework.schema import Case, LabelRecord, VersionCounts

__all__ = [
    "NewCases",
    "counts_of",
    "guideline_versions_of",
    "index_file",
    "index_models",
    "label_lines",
    "labels_of",
    "parse_lines",
    "split_lines",
    "summary_of",
]

_BATCH = 500  # lines validated at a time: bounds the models held at once


def summary_of(case: Case) -> Summary:
    """The fields of one case the release log counts (and whether a release refuses it)."""
    label = case.label
    return (
        case.slice,
        case.split,
        case.source,
        label.outcome if label else "unlabelled",
        case.oracle.class_,
        case.satisfiable,
        case.frozen,
        (label.guideline_version or "") if label else "",
        bool(label and contradictory_tools(label)),
    )


def counts_of(summaries: Sequence[Summary], labels: int) -> VersionCounts:
    """The release log's counts from per-case summaries (equal to ``count_cases`` on the cases)."""

    def by(values: Iterable[str]) -> dict[str, int]:
        return dict(sorted(Counter(values).items()))

    return VersionCounts(
        cases=len(summaries),
        by_slice=by(s[0] for s in summaries),
        by_split=by(s[1] for s in summaries),
        by_source=by(s[2] for s in summaries),
        by_outcome=by(s[3] for s in summaries),
        by_oracle=by(s[4] for s in summaries),
        unsatisfiable=sum(not s[5] for s in summaries),
        frozen=sum(s[6] for s in summaries),
        labels=labels,
    )


def guideline_versions_of(summaries: Iterable[Summary]) -> list[str]:
    """Guideline versions the labels were decided under, sorted."""
    return sorted({s[7] for s in summaries if s[7]})


@dataclass
class NewCases:
    """The cases of a version about to be released: canonical, id-sorted lines."""

    data: bytes
    """The canonical `cases.jsonl` bytes."""
    spans: list[tuple[int, int]]
    """Offset and length (without newline) of each line in ``data``."""
    ids: list[str]
    hashes: list[bytes]
    summaries: list[Summary]
    models: dict[str, Case] = field(default_factory=dict)
    """Parsed cases, at least those whose line differs from the base version's line of that id."""

    def line(self, i: int) -> memoryview:
        """Line ``i`` without its newline."""
        offset, length = self.spans[i]
        return memoryview(self.data)[offset : offset + length]


def split_lines(data: bytes) -> Iterator[tuple[int, int]]:
    """Offset and length of each newline-ended line (a last line without one included)."""
    start = 0
    end = len(data)
    while start < end:
        stop = data.find(b"\n", start)
        if stop < 0:
            yield start, end - start
            return
        yield start, stop - start
        start = stop + 1


def index_models(cases: Sequence[Case], data: bytes) -> NewCases:
    """Index id-sorted cases whose canonical bytes are ``data``."""
    spans = list(split_lines(data))
    view = memoryview(data)
    return NewCases(
        data,
        spans,
        [c.id for c in cases],
        [line_hash(view[o : o + n]) for o, n in spans],
        [summary_of(c) for c in cases],
        {c.id: c for c in cases},
    )


def parse_lines(lines: Sequence[bytes | memoryview], shown: str) -> list[Case] | None:
    """Validate lines as cases, one record per line (``None``: any line is bad)."""
    if not lines:
        return []
    try:
        records = parse_records(b"\n".join(lines) + b"\n", Case, shown=shown).records
    except InputErrors:
        return None
    return records if len(records) == len(lines) else None


def _canonical(case: Case, raw: memoryview) -> bytes | memoryview | None:
    """The canonical line of a case parsed from ``raw``: ``raw`` itself when already canonical.

    A strictly parsed line holds no bare `NaN`/`Infinity`, so a canonical line equal to it holds
    no non-finite float either; any other line takes the full check (``None``: it fails).
    """
    line = canonical_line(case).encode("utf-8")
    if line == raw:
        return raw
    try:
        return canonical_bytes([case])[:-1]
    except InputErrors:
        return None


@dataclass
class _Row:
    id: str
    hash: bytes
    summary: Summary
    line: bytes | memoryview


def _parsed_rows(
    data: bytes, spans: Sequence[tuple[int, int]], shown: str, keep: set[str]
) -> tuple[list[_Row], dict[str, Case], bool] | None:
    """Parse lines, returning rows of their canonical form, the models in ``keep``, canonical?

    Many lines (a first release) are parsed on every core: see :func:`_parsed_rows_forked`.
    """
    workers = parallel_workers()
    if workers > 1 and sum(n for _, n in spans) >= PARALLEL_MIN_ROW_BYTES:
        return _parsed_rows_forked(data, spans, shown, keep, workers)
    return _parsed_rows_here(data, spans, shown, keep)


def _parsed_rows_here(
    data: bytes, spans: Sequence[tuple[int, int]], shown: str, keep: set[str]
) -> tuple[list[_Row], dict[str, Case], bool] | None:
    view = memoryview(data)
    rows: list[_Row] = []
    models: dict[str, Case] = {}
    canonical = True
    for start in range(0, len(spans), _BATCH):
        raw = [view[o : o + n] for o, n in spans[start : start + _BATCH]]
        cases = parse_lines(raw, shown)
        if cases is None:
            return None
        for case, before in zip(cases, raw, strict=True):
            line = _canonical(case, before)
            if line is None:
                return None
            same = line is before
            canonical = canonical and same
            rows.append(_Row(case.id, line_hash(line), summary_of(case), before if same else line))
            if case.id in keep:
                models[case.id] = case
    return rows, models, canonical


#: Lines of at least this many bytes in all are parsed on every core (forking costs the rest).
PARALLEL_MIN_ROW_BYTES = 16 * 1024 * 1024

#: What a forked worker reads: the file's bytes, the spans to parse, their name, ids to keep.
_SHARED: tuple[bytes, Sequence[tuple[int, int]], str, set[str]] | None = None

#: A row as it travels back from a worker: its line is ``None`` when the input line is kept.
_SentRow = tuple[str, bytes, Summary, bytes | None]


def _rows_part(first: int, last: int) -> tuple[list[_SentRow], dict[str, Case], bool] | None:
    """In a worker: the rows of spans ``first`` to ``last`` of the shared file, picklable."""
    assert _SHARED is not None
    data, spans, shown, keep = _SHARED
    with collector_paused():
        parsed = _parsed_rows_here(data, spans[first:last], shown, keep)
    if parsed is None:
        return None
    rows, models, canonical = parsed
    sent = [
        (r.id, r.hash, r.summary, None if isinstance(r.line, memoryview) else bytes(r.line))
        for r in rows
    ]
    return sent, models, canonical


def _parsed_rows_forked(
    data: bytes, spans: Sequence[tuple[int, int]], shown: str, keep: set[str], workers: int
) -> tuple[list[_Row], dict[str, Case], bool] | None:
    """:func:`_parsed_rows` on ``workers`` forked processes, each a share of the spans.

    The workers read the file's bytes from the parent's memory (shared by the fork, not sent)
    and send back each row's id, hash and summary, and its line only when it is not the input
    line as it stands.
    """
    global _SHARED
    cuts = [len(spans) * i // workers for i in range(workers + 1)]
    _SHARED = (data, spans, shown, keep)
    try:
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
            futures = [pool.submit(_rows_part, a, b) for a, b in pairwise(cuts) if b > a]
            parts = [future.result() for future in futures]
    finally:
        _SHARED = None
    view = memoryview(data)
    rows: list[_Row] = []
    models: dict[str, Case] = {}
    canonical = True
    at = 0
    for part in parts:
        if part is None:
            return None
        sent, some, same = part
        for case_id, digest, summary, line in sent:
            offset, length = spans[at]
            at += 1
            rows.append(
                _Row(
                    case_id,
                    digest,
                    summary,
                    view[offset : offset + length] if line is None else line,
                )
            )
        models.update(some)
        canonical = canonical and same
    return rows, models, canonical


def index_file(data: bytes, base: VersionIndex | None, shown: str) -> NewCases | None:
    """Index a `cases.jsonl` against a stored version, validating only the lines it lacks.

    Returns:
        The canonical content (``data`` itself when already canonical), or ``None`` when a line
        is bad, two cases share an id, or a case requires and forbids one tool.
    """
    known = base.positions() if base else {}
    view = memoryview(data)
    rows: list[_Row | None] = []
    unknown: list[tuple[int, int]] = []
    where: list[int] = []
    spans = list(split_lines(data))
    for offset, length in spans:
        line = view[offset : offset + length]
        digest = line_hash(line)
        at = known.get(digest)
        if at is None or base is None:
            unknown.append((offset, length))
            where.append(len(rows))
            rows.append(None)
        else:
            rows.append(_Row(base.ids[at], digest, base.summaries[at], line))
    parsed = _parsed_rows(data, unknown, shown, set(base.ids) if base else set())
    if parsed is None:
        return None
    more, models, canonical = parsed
    for i, row in zip(where, more, strict=True):
        rows[i] = row
    done = [r for r in rows if r is not None]
    ids = [r.id for r in done]
    if len(set(ids)) != len(ids) or any(r.summary[8] for r in done):
        return None
    canonical = (
        canonical and (not data or data.endswith(b"\n")) and all(a < b for a, b in pairwise(ids))
    )
    if not canonical:
        done.sort(key=lambda r: r.id)
        data = b"".join(bytes(r.line) + b"\n" for r in done)
        spans = list(split_lines(data))
    return NewCases(
        data,
        spans,
        [r.id for r in done],
        [r.hash for r in done],
        [r.summary for r in done],
        models,
    )


def label_lines(data: bytes) -> list[bytes]:
    """The lines of a canonical labels file, without newlines."""
    return data.split(b"\n")[:-1] if data else []


def labels_of(data: bytes, shown: str) -> list[LabelRecord] | None:
    """Parse a labels file (``None``: a bad line)."""
    try:
        return parse_records(data, LabelRecord, shown=shown).records
    except InputErrors:
        return None
