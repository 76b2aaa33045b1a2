"""A cases file as line hashes: what is new against a stored version is parsed, the rest is known.

:func:`index_file` reads a `cases.jsonl` as lines, hashes each once, takes the id and summary of
every line a stored version already holds from that version's index, and validates only the
other lines (in batches, holding no more of them than a batch). Anything a release would refuse
or report (a bad line, a duplicate id, a contradiction) makes it return ``None``: the caller then
takes the full path, which reports the problem exactly as before. Entry points:
:func:`index_file`, :func:`index_models`, :func:`summary_of`, :func:`counts_of`.
"""

from __future__ import annotations

import contextlib
import multiprocessing
from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from itertools import pairwise
from operator import itemgetter
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple

import orjson

from casework.dataset._label_shares import (
    LabelFile,
    LabelLines,
    LabelRow,
    Share,
    label_rows_here,
    label_rows_or_file,
    label_share,
    label_sort_key,
)
from casework.dataset._lines import (
    Changed,
    InMemory,
    OnDisk,
    Source,
    by_offset,
    joined_lines,
    split_lines,
)
from casework.dataset._objects import Summary, VersionIndex, line_hash
from casework.dataset.check import contradictory_tools
from casework.dataset.jsonl import (
    canonical_records,
    collector_paused,
    parse_records,
)
from casework.dataset.parallel import line_boundaries, parallel_workers
from casework.dataset.stream import ProgressCallback
from casework.errors import InputErrors
from casework.schema import Case, LabelRecord, VersionCounts

__all__ = [
    "LabelFile",
    "LabelLines",
    "LabelRow",
    "NewCases",
    "counts_of",
    "early_cases",
    "guideline_versions_of",
    "index_file",
    "index_lines",
    "index_models",
    "label_lines",
    "label_sort_key",
    "labels_of",
    "parent_label_lines",
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
    """The release log's counts (per slice, split, source, outcome, oracle) from per-case summaries."""

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
    """The cases of a version about to be released: canonical, id-sorted lines.

    The canonical content is the lines ``spans`` point at in ``source`` (or their ``fixed``
    canonical form), in that order, each ended by a newline; it is only ever produced piece
    by piece (:meth:`chunks`), so a large file is never held whole, nor twice.
    """

    source: Source
    """Where the lines are: the file's bytes, or the file itself."""
    spans: list[tuple[int, int]]
    """Offset and length (without newline) in ``source`` of each line, in canonical order."""
    ids: list[str]
    hashes: list[bytes]
    summaries: list[Summary]
    models: dict[str, Case] = field(default_factory=dict)
    """Parsed cases, at least those whose line differs from the base version's line of that id."""
    fixed: dict[int, bytes] = field(default_factory=dict)
    """Canonical form of the lines (by position) whose bytes in ``source`` are not canonical."""
    canonical: bool = True
    """Whether ``source`` holds the canonical content as it stands."""
    labels: list[LabelRow] | LabelFile | LabelLines | None = None
    """The raw labels, when the labels file was indexed with the cases: their rows in file
    order (a labels file given as bytes), or (read from disk) what a release needs of it."""

    @contextlib.contextmanager
    def lines(self) -> Iterator[Callable[[int], bytes | memoryview]]:
        """A function giving line ``i`` without its newline.

        Lines asked for in :meth:`file_order` are read a block at a time; others, one each.

        Raises:
            Changed: A line read from the file no longer has its hash.
        """
        if not isinstance(self.source, OnDisk):  # held in memory: nothing to share
            with self.source.reader() as read:
                yield lambda i: self.fixed.get(i) or read(*self.spans[i])
            return
        with self.source.reader() as read:

            def checked(i: int) -> bytes | memoryview:
                out = read(*self.spans[i])
                if line_hash(out) != self.hashes[i]:
                    raise Changed(str(self.source))
                return out

            def line(i: int) -> bytes | memoryview:
                fixed = self.fixed.get(i)
                return fixed if fixed is not None else checked(i)

            yield line

    def file_order(self) -> Sequence[int]:
        """Positions in the order of their lines in the source.

        Read so, the file is read front to back in blocks, not a line at a time by position.
        """
        return by_offset([offset for offset, _ in self.spans])

    def chunks(self) -> Iterator[bytes | memoryview]:
        """The canonical content, piece by piece (``data`` itself when it is held and canonical).

        Raises:
            Changed: A line read from the file no longer has its hash.
        """
        source = self.source
        if self.canonical and isinstance(source, InMemory):
            yield source.data
            return
        if self.canonical and isinstance(source, OnDisk) and source.size >= 0:
            yield from source.whole()  # in order: read in chunks, checked as a whole
            return
        with self.lines() as line:
            yield from joined_lines(line(i) for i in range(len(self.spans)))

    def without(self, drop: AbstractSet[str]) -> NewCases:
        """These cases less those whose id is in ``drop`` (the result reads the same source)."""
        keep = [i for i, case_id in enumerate(self.ids) if case_id not in drop]
        if len(keep) == len(self.ids):
            return self
        at = {old: new for new, old in enumerate(keep)}
        return NewCases(
            self.source,
            [self.spans[i] for i in keep],
            [self.ids[i] for i in keep],
            [self.hashes[i] for i in keep],
            [self.summaries[i] for i in keep],
            {k: m for k, m in self.models.items() if k not in drop},
            {at[i]: line for i, line in self.fixed.items() if i in at},
            canonical=False,  # the source still holds the lines left out
        )

    def byte_count(self) -> int:
        """How many bytes the canonical content holds."""
        fixed = sum(len(line) - self.spans[i][1] for i, line in self.fixed.items())
        return sum(n for _, n in self.spans) + fixed + len(self.spans)

    def content(self) -> bytes:
        """The canonical content as one bytes object (a copy unless held and canonical)."""
        if self.canonical and isinstance(self.source, InMemory):
            return self.source.data
        return b"".join(self.chunks())


def index_models(cases: Sequence[Case], data: bytes) -> NewCases:
    """Index id-sorted cases whose canonical bytes are ``data``."""
    spans = list(split_lines(data))
    view = memoryview(data)
    return NewCases(
        InMemory(data),
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


class _Row(NamedTuple):
    id: str
    hash: bytes
    summary: Summary
    span: tuple[int, int]
    fixed: bytes | None


def _parsed_rows_here(
    source: Source,
    spans: Sequence[tuple[int, int]],
    raw_hashes: Sequence[bytes],
    shown: str,
    keep: set[str],
    on_batch: Callable[[int], None] | None = None,
) -> tuple[list[_Row], dict[str, Case]] | None:
    """Rows of the lines at ``spans`` (``None``: a bad line, or one that changed meanwhile).

    ``on_batch`` is told the bytes of each batch of lines once it is validated.
    """
    with source.reader() as read:
        try:
            return _rows_read(read, spans, raw_hashes, shown, keep, on_batch)
        except Changed:
            return None


def _rows_read(
    read: Callable[[int, int], bytes | memoryview],
    spans: Sequence[tuple[int, int]],
    raw_hashes: Sequence[bytes],
    shown: str,
    keep: set[str],
    on_batch: Callable[[int], None] | None = None,
) -> tuple[list[_Row], dict[str, Case]] | None:
    rows: list[_Row] = []
    models: dict[str, Case] = {}
    # Equal summaries share one tuple (few distinct ones; pickling keeps them shared): at 100k
    # cases a tuple each took about 60 MB of the parent's memory.
    shared: dict[Summary, Summary] = {}
    for start in range(0, len(spans), _BATCH):
        batch = spans[start : start + _BATCH]
        raw = [read(o, n) for o, n in batch]
        for line, digest in zip(raw, raw_hashes[start : start + _BATCH], strict=True):
            if line_hash(line) != digest:
                return None  # changed since it was hashed: the full path reads it again
        cases = canonical_records(raw, Case)
        if cases is None:
            return None  # the full path reports it
        for (case, fixed), span, known in zip(
            cases, batch, raw_hashes[start : start + _BATCH], strict=True
        ):
            digest = known if fixed is None else line_hash(fixed)
            summary = summary_of(case)
            rows.append(_Row(case.id, digest, shared.setdefault(summary, summary), span, fixed))
            if case.id in keep:
                models[case.id] = case
        if on_batch is not None:
            on_batch(sum(n + 1 for _, n in batch))
    return rows, models


#: Lines of at least this many bytes in all are parsed on every core (forking costs the rest).
PARALLEL_MIN_ROW_BYTES = 16 * 1024 * 1024

#: Bytes of lines in one worker's share, about (at least two shares a worker): a progress bar
#: moves as shares come back, and small shares even out the workers' ends. At most
#: ``_MAX_SHARES``: with 64, a first release of 1M cases cut shares of 88 MB, about 5 s of a
#: worker's time each, and one worker ended 3.7 s before the other (sampled with py-spy).
_SHARE_BYTES = 8 * 1024 * 1024
_MAX_SHARES = 512

#: What a forked worker reads: the cases' source, the spans to parse and their hashes, their
#: name, ids to keep; the labels file's bytes, spans and name.
_SHARED: (
    tuple[
        Source,
        Sequence[tuple[int, int]],
        Sequence[bytes],
        str,
        set[str],
        bytes,
        Sequence[tuple[int, int]],
        str,
    ]
    | None
) = None

#: A row as it travels back from a worker (its span is known to the parent).
_SentRow = tuple[str, bytes, Summary, bytes | None]


def _rows_part(first: int, last: int) -> tuple[list[_SentRow], dict[str, Case]] | None:
    """In a worker: the rows of case spans ``first`` to ``last`` of the shared file, picklable."""
    assert _SHARED is not None
    source, spans, hashes, shown, keep = _SHARED[:5]
    return _rows_sent(source, spans[first:last], hashes[first:last], shown, keep)


def _rows_given(
    path: Path, shown: str, offsets: array[int], lengths: array[int], hashes: bytes
) -> tuple[list[_SentRow], dict[str, Case]] | None:
    """In a worker forked before the lines were known: the rows of the lines given (no models)."""
    spans = list(zip(offsets, lengths, strict=True))
    split = [hashes[i : i + 16] for i in range(0, len(hashes), 16)]
    return _rows_sent(OnDisk(path), spans, split, shown, set())


def _rows_sent(
    source: Source,
    spans: Sequence[tuple[int, int]],
    hashes: Sequence[bytes],
    shown: str,
    keep: set[str],
) -> tuple[list[_SentRow], dict[str, Case]] | None:
    with collector_paused():
        parsed = _parsed_rows_here(source, spans, hashes, shown, keep)
    if parsed is None:
        return None
    rows, models = parsed
    return [(r.id, r.hash, r.summary, r.fixed) for r in rows], models


class EarlyCases:
    """A first release's case lines handed to forked workers in shares as the file is scanned.

    The scan (:func:`~casework.dataset._lines.scan_file`: each line's span and hash, the
    file's digest) runs on one core: at 1M cases it took 7.3 s (4.8 CPU s) with the other core
    idle, before any worker started. Here each share is validated as soon as its lines are
    scanned (:meth:`seen`), beside the rest of the scan. The workers check each line read against the scan's hash, as
    the workers forked after it do. Use it as a context manager (leaving the block stops the
    workers) and give it to :func:`index_lines`, which takes the shares' rows.

    The labels file's shares are handed over first, before the scan: the workers validate them
    while it runs, and their rows are merged (at 1M cases a sort of 2M keys, 3 s) while the
    workers validate the cases, not after.
    """

    def __init__(
        self, path: Path, shown: str, size: int, workers: int, labels: tuple[Path, str] | None
    ) -> None:
        """Workers for the cases file ``path`` (named ``shown``) of ``size`` bytes.

        ``labels``: the labels file and its name, validated in shares from disk (``None``: the
        release has none).
        """
        self.workers = workers
        self.pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("fork")
        )
        self._path = path
        self._shown = shown
        self._target = max(1, size // _shares(size, workers))  # bytes of lines a share, about
        self._cut = 0  # the first line not yet in a share
        self.futures: list[Future[Any]] = []
        self.sizes: list[int] = []
        """Bytes of each share's lines, with their newlines (for the progress)."""
        self.label_size = 0
        """The labels file's size when cut into shares (0: none, or empty)."""
        self.label_cuts = [0]
        self.label_futures: list[Future[Any]] = []
        self.label_sizes: list[int] = []
        if labels is not None:
            label_path, label_shown = labels
            with contextlib.suppress(FileNotFoundError):
                self.label_size = label_path.stat().st_size
            if self.label_size:
                parts = _shares(self.label_size, workers)
                self.label_cuts = line_boundaries(label_path, self.label_size, parts)
            self.label_futures, self.label_sizes = _label_shares(
                self.pool, label_path, self.label_cuts, label_shown
            )

    def seen(self, spans: list[tuple[int, int]], hashes: list[bytes]) -> None:
        """Hand over each share whose lines are all scanned (the lines so far: ``spans``, ``hashes``)."""
        while self._cut < len(spans):
            start = spans[self._cut][0]
            end = bisect_left(spans, start + self._target, lo=self._cut, key=itemgetter(0))
            if end >= len(spans):
                return  # the share may hold lines not yet scanned
            self._submit(spans, hashes, end)

    def finish(
        self, spans: Sequence[tuple[int, int]], hashes: Sequence[bytes]
    ) -> list[Future[Any]]:
        """Hand over the lines left (the scan is done); every share's future, in file order."""
        if self._cut < len(spans):
            self._submit(spans, hashes, len(spans))
        return self.futures

    def _submit(self, spans: Sequence[tuple[int, int]], hashes: Sequence[bytes], end: int) -> None:
        part = spans[self._cut : end]
        offsets = array("q", (o for o, _ in part))
        lengths = array("q", (n for _, n in part))
        joined = b"".join(hashes[self._cut : end])
        future = self.pool.submit(_rows_given, self._path, self._shown, offsets, lengths, joined)
        self.futures.append(future)
        self.sizes.append(sum(lengths) + len(lengths))
        self._cut = end

    def __enter__(self) -> EarlyCases:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def _label_shares(
    pool: ProcessPoolExecutor, path: Path, cuts: Sequence[int], shown: str
) -> tuple[list[Future[Any]], list[int]]:
    """The labels file's shares between ``cuts``, read from disk on ``pool``: futures, bytes."""
    futures: list[Future[Any]] = []
    sizes: list[int] = []
    for a, b in pairwise(cuts):
        if b > a:
            futures.append(pool.submit(label_share, path, a, b, shown, False))
            sizes.append(b - a)
    return futures, sizes


def early_cases(path: Path, shown: str, labels: tuple[Path, str] | None) -> EarlyCases | None:
    """Workers to validate a first release's cases file as it is scanned (``None``: not worth it).

    ``None`` as for :func:`_parsed_rows`: a file under :data:`PARALLEL_MIN_ROW_BYTES`, or no
    forking here. ``labels``: see :class:`EarlyCases`.
    """
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None
    workers = parallel_workers()
    if workers < 2 or size < PARALLEL_MIN_ROW_BYTES:
        return None
    return EarlyCases(path, shown, size, workers, labels)


def _labels_part(first: int, last: int) -> list[LabelRow] | None:
    """In a worker: the rows of label spans ``first`` to ``last`` of the shared labels file."""
    assert _SHARED is not None
    data, spans, shown = _SHARED[5:]
    with collector_paused():
        return label_rows_here(data, spans[first:last], shown)


@dataclass
class _Parsed:
    rows: list[_Row]
    models: dict[str, Case]
    labels: list[LabelRow] | LabelFile | LabelLines | None


#: A labels file to validate beside the cases: its bytes, or the file on disk; its name.
Labels = tuple[bytes | OnDisk, str]


def _parsed_rows(
    source: Source,
    spans: Sequence[tuple[int, int]],
    hashes: Sequence[bytes],
    shown: str,
    keep: set[str],
    labels: Labels | None,
    on_progress: ProgressCallback | None = None,
    early: EarlyCases | None = None,
) -> _Parsed | None:
    """Parse case lines (and the labels file, if given) into rows; the models in ``keep``.

    Many lines (a first release) are parsed on every core: see :func:`_parsed_rows_forked`;
    ``early``, when given, holds the workers and the shares of the lines handed over as they
    were scanned (``spans`` are then every line of the file scanned).
    ``on_progress`` is told the bytes validated so far (lines with their newlines) and in all.
    A labels file on disk is read in shares by whoever validates it (:func:`label_share`).
    """
    label_source = labels[0] if labels is not None else b""
    on_disk = label_source if isinstance(label_source, OnDisk) else None
    in_memory = label_source if isinstance(label_source, bytes) else b""
    label_spans = list(split_lines(in_memory))
    case_bytes = sum(n + 1 for _, n in spans)
    label_bytes = on_disk.size if on_disk is not None else sum(n + 1 for _, n in label_spans)
    total = case_bytes + label_bytes
    done = 0

    def advance(n: int) -> None:
        nonlocal done
        done += n
        if on_progress is not None:
            on_progress(min(done, total), total)

    workers = early.workers if early is not None else parallel_workers()
    if early is not None or (workers > 1 and total >= PARALLEL_MIN_ROW_BYTES):
        parts = _shares(case_bytes, workers)
        label_parts = _shares(label_bytes, workers) if labels is not None else 0
        return _parsed_rows_forked(
            source,
            spans,
            hashes,
            shown,
            keep,
            labels,
            label_spans,
            workers,
            parts,
            label_parts,
            advance,
            early,
        )
    here = _parsed_rows_here(source, spans, hashes, shown, keep, advance)
    if here is None:
        return None
    label_rows: list[LabelRow] | LabelFile | LabelLines | None = None
    if labels is not None and on_disk is not None:
        path, name = on_disk.path, labels[1]
        # In shares, as on workers: no more of the file is held at once than a share.
        cuts = line_boundaries(path, on_disk.size, max(1, on_disk.size // _SHARE_BYTES))
        shares = [(a, b) for a, b in pairwise(cuts) if b > a]
        first = [label_share(path, a, b, name, False) for a, b in shares]
        label_rows = label_rows_or_file(
            on_disk,
            shares,
            first,
            lambda redo: [label_share(path, a, b, name, True) for a, b in redo],
        )
        advance(label_bytes)
    elif labels is not None:
        label_rows = label_rows_here(in_memory, label_spans, labels[1], advance)
    if labels is not None and label_rows is None:
        return None
    return _Parsed(here[0], here[1], label_rows)


def _shares(size: int, workers: int) -> int:
    """How many shares ``size`` bytes of lines are cut into for ``workers`` workers."""
    return max(workers * 2, min(_MAX_SHARES, size // _SHARE_BYTES))


def _parsed_rows_forked(
    source: Source,
    spans: Sequence[tuple[int, int]],
    hashes: Sequence[bytes],
    shown: str,
    keep: set[str],
    labels: Labels | None,
    label_spans: Sequence[tuple[int, int]],
    workers: int,
    parts: int,
    label_parts: int,
    advance: Callable[[int], None],
    early: EarlyCases | None = None,
) -> _Parsed | None:
    """:func:`_parsed_rows` on ``workers`` processes: ``parts`` shares of the cases, ``label_parts`` of the labels.

    The workers read the cases' bytes from the parent's memory or the file (shared by the fork,
    not sent) and send back each row's id, hash and summary, and its line only when it is not
    the input line as it stands. The labels file is cut into shares too, parsed beside the
    cases: read by each worker from disk when it is on disk (the parent never holds it), its
    lines sent back as hashes when it is kept as it stands (:class:`LabelFile`).
    ``advance`` is told each share's bytes as it comes back (in the order they finish).
    With ``early`` the workers and the shares of the cases are its own (forked before
    ``_SHARED`` was set: the labels file is then on disk, or none).
    """
    global _SHARED
    cuts = [len(spans) * i // parts for i in range(parts + 1)]
    label_source, label_shown = labels if labels is not None else (b"", "")
    on_disk = label_source if isinstance(label_source, OnDisk) else None
    label_data = label_source if isinstance(label_source, bytes) else b""
    label_cuts = [0]  # no labels file to validate, or:
    if early is not None:
        if (on_disk.size if on_disk is not None else 0) != early.label_size:
            return None  # changed since it was cut into shares: the full path reads it
        label_cuts = early.label_cuts
    elif on_disk is not None and label_parts:
        label_cuts = line_boundaries(on_disk.path, on_disk.size, label_parts)
    elif label_parts:
        label_cuts = [len(label_spans) * i // label_parts for i in range(label_parts + 1)]
    _SHARED = (source, spans, hashes, shown, keep, label_data, label_spans, label_shown)
    sizes: dict[Future[Any], int] = {}  # each share's bytes, for the progress
    label_result: list[LabelRow] | LabelFile | LabelLines | None = None
    try:
        with contextlib.ExitStack() as stack:
            if early is None:
                context = multiprocessing.get_context("fork")
                pool = stack.enter_context(
                    ProcessPoolExecutor(max_workers=workers, mp_context=context)
                )
                futures = []
                for a, b in pairwise(cuts):
                    if b > a:
                        futures.append(pool.submit(_rows_part, a, b))
                        sizes[futures[-1]] = sum(n + 1 for _, n in spans[a:b])
            else:
                if label_spans:
                    raise ValueError("early workers read a labels file from disk only")
                pool = early.pool
                futures = early.finish(spans, hashes)
                sizes.update(zip(futures, early.sizes, strict=True))
            label_futures: list[Future[Any]] = []
            label_sizes: list[int] = []
            if early is not None:  # handed over already
                label_futures, label_sizes = early.label_futures, early.label_sizes
            elif on_disk is not None:
                label_futures, label_sizes = _label_shares(
                    pool, on_disk.path, label_cuts, label_shown
                )
            else:
                for a, b in pairwise(label_cuts):
                    if b > a:
                        label_futures.append(pool.submit(_labels_part, a, b))
                        label_sizes.append(sum(n + 1 for _, n in label_spans[a:b]))
            sizes.update(zip(label_futures, label_sizes, strict=True))

            def merged() -> bool:
                """Join the labels' shares into ``label_result`` (``False``: refused)."""
                nonlocal label_result
                label_results = [future.result() for future in label_futures]
                if on_disk is not None:
                    path = on_disk.path

                    def again(redo: list[tuple[int, int]]) -> list[Share]:
                        asked = [
                            pool.submit(label_share, path, a, b, label_shown, True) for a, b in redo
                        ]
                        return [future.result() for future in asked]

                    shares = [(a, b) for a, b in pairwise(label_cuts) if b > a]
                    label_result = label_rows_or_file(on_disk, shares, label_results, again)
                    return label_result is not None
                if labels is not None:
                    label_result = [row for part in label_results for row in part]
                return True

            # The labels are joined as soon as their shares are in (beside the cases' shares
            # still running, when the labels' were handed over first).
            labels_left = set(label_futures)
            joined = False
            for future in as_completed(sizes):
                if future.result() is None:  # a bad line: the full path reads and reports it
                    for waiting in sizes:
                        waiting.cancel()
                    return None  # (leaving the block waits for the shares already running)
                advance(sizes[future])
                labels_left.discard(future)
                if not labels_left and not joined:
                    joined = True
                    if not merged():
                        for waiting in sizes:
                            waiting.cancel()
                        return None
            if not joined and not merged():  # no share at all
                return None
            results = [future.result() for future in futures]
    finally:
        _SHARED = None
    rows: list[_Row] = []
    models: dict[str, Case] = {}
    at = 0
    for part in results:
        if part is None:
            return None
        sent, some = part
        for case_id, digest, summary, fixed in sent:
            rows.append(_Row(case_id, digest, summary, spans[at], fixed))
            at += 1
        models.update(some)
    return _Parsed(rows, models, label_result)


def index_file(
    data: bytes,
    base: VersionIndex | None,
    shown: str,
    labels: Labels | None = None,
) -> NewCases | None:
    """Index a `cases.jsonl` held in memory; see :func:`index_lines`."""
    view = memoryview(data)
    spans = list(split_lines(data))
    hashes = [line_hash(view[o : o + n]) for o, n in spans]
    ended = not data or data.endswith(b"\n")
    return index_lines(InMemory(data), spans, hashes, ended, base, shown, labels)


def index_lines(
    source: Source,
    spans: list[tuple[int, int]],
    hashes: list[bytes],
    ended: bool,
    base: VersionIndex | None,
    shown: str,
    labels: Labels | None = None,
    on_progress: ProgressCallback | None = None,
    early: EarlyCases | None = None,
) -> NewCases | None:
    """Index a `cases.jsonl` against a stored version, validating only the lines it lacks.

    Args:
        source: Where the file's lines are.
        spans: Offset and length of each of its lines, in file order.
        hashes: Each line's hash.
        ended: Whether the file ends with a newline (or is empty).
        base: The stored version whose lines are known (``None``: every line is parsed).
        shown: How to name the file in messages.
        labels: A labels file (its bytes, or the file on disk) and its name, to validate beside
            the cases (:attr:`NewCases.labels` then tells what was found).
        on_progress: Told the bytes of lines validated so far and in all.
        early: Workers given the lines as they were scanned (:class:`EarlyCases`; only
            without ``base``: every line is validated).

    Returns:
        The canonical content (the file as it stands when already canonical), or ``None`` when
        a line of either file is bad or changed meanwhile, two cases share an id, or a case
        requires and forbids one tool.
    """
    if early is not None and base is not None:
        raise ValueError("early workers validate every line: a first release's")
    known = base.positions() if base else {}
    rows: list[_Row | None] = []
    unknown: list[tuple[int, int]] = []
    unknown_hashes: list[bytes] = []
    where: list[int] = []
    for span, digest in zip(spans, hashes, strict=True):
        at = known.get(digest)
        if at is None or base is None:
            unknown.append(span)
            unknown_hashes.append(digest)
            where.append(len(rows))
            rows.append(None)
        else:
            rows.append(_Row(base.ids[at], digest, base.summaries[at], span, None))
    keep = set(base.ids) if base else set()
    parsed = _parsed_rows(source, unknown, unknown_hashes, shown, keep, labels, on_progress, early)
    if parsed is None:
        return None
    for i, row in zip(where, parsed.rows, strict=True):
        rows[i] = row
    done = [r for r in rows if r is not None]
    ids = [r.id for r in done]
    if len(set(ids)) != len(ids) or any(r.summary[8] for r in done):
        return None
    canonical = (
        all(r.fixed is None for r in done) and ended and all(a < b for a, b in pairwise(ids))
    )
    if not canonical:
        done.sort(key=lambda r: r.id)
    return NewCases(
        source,
        [r.span for r in done],
        [r.id for r in done],
        [r.hash for r in done],
        [r.summary for r in done],
        parsed.models,
        {i: r.fixed for i, r in enumerate(done) if r.fixed is not None},
        canonical,
        parsed.labels,
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


def parent_label_lines(
    label_data: bytes, parent: VersionIndex, ids: set[str], drop: AbstractSet[str] = frozenset()
) -> list[bytes] | None:
    """The label lines kept, when the file holds exactly the parent release's label lines.

    Those lines were validated, sorted and found free of duplicates when the parent was
    released, so only each line's case id is read (without validating the line): lines of a
    case in ``drop`` are left out, every other must name a case of ``ids``. ``None``: the labels
    differ, or one names no case.
    """
    if label_data and not label_data.endswith(b"\n"):
        return None
    lines = label_lines(label_data)
    if len(lines) != len(parent.label_hashes):
        return None
    if any(line_hash(x) != h for x, h in zip(lines, parent.label_hashes, strict=True)):
        return None
    kept = []
    for line in lines:
        case_id = orjson.loads(line).get("case_id")
        if case_id in drop:
            continue
        if case_id not in ids:
            return None  # the full check reports it
        kept.append(line)
    return kept
