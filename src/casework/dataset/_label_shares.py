"""A labels file validated in shares (on workers or here) and kept compactly for a release.

A first release validates its labels file in byte ranges read from disk (:func:`label_share`),
never holding it whole. A share whose lines are canonical and in canonical order comes back as
hashes and the cases it labels; any other as sorted keys, offsets and 64-bit key hashes with
only the lines re-written. :func:`label_rows_or_file` joins the shares into the file kept as it
stands (:class:`LabelFile`) or sorted (:class:`LabelLines`). Entry points:
:func:`label_rows_here`, :func:`label_share`, :func:`label_rows_or_file`,
:func:`label_sort_key`.
"""

from __future__ import annotations

import contextlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path
from sys import intern
from typing import NamedTuple

import xxhash

from casework.dataset._lines import (
    Changed,
    OnDisk,
    joined_lines,
    split_lines,
)
from casework.dataset._objects import line_hash
from casework.dataset.jsonl import canonical_records, collector_paused
from casework.schema import LabelRecord

__all__ = [
    "LabelFile",
    "LabelLines",
    "LabelRow",
    "Share",
    "label_rows_here",
    "label_rows_or_file",
    "label_share",
    "label_sort_key",
]

_BATCH = 500  # lines validated at a time: bounds the records held at once


_ROLE_ORDER = {"first": 0, "second": 1, "adjudicator": 2}


def label_sort_key(record: LabelRecord) -> str:
    """Canonical order of `labels.jsonl`: by case, then role, then labeller, then time."""
    return f"{record.case_id}\0{_ROLE_ORDER[record.role]}\0{record.labeller}\0{record.labelled_at.isoformat()}"


class LabelRow(NamedTuple):
    """One valid raw label, compactly: what a release checks and writes of it."""

    sort_key: str
    """Its place in canonical order (:func:`label_sort_key`)."""
    key: tuple[str, str, str]
    """Case id, labeller and guideline version (one label each)."""
    span: tuple[int, int]
    """Offset and length of its line in the labels file."""
    fixed: bytes | None
    """Its canonical line when the file's line is not canonical."""


def label_rows_here(
    data: bytes,
    spans: Sequence[tuple[int, int]],
    shown: str,
    on_batch: Callable[[int], None] | None = None,
) -> list[LabelRow] | None:
    """Validate label lines; their compact rows (``None``: a bad line, or one not writable).

    ``on_batch``: as for :func:`_parsed_rows_here`.
    """
    rows: list[LabelRow] = []
    for start in range(0, len(spans), _BATCH):
        batch = spans[start : start + _BATCH]
        raw = [data[o : o + n] for o, n in batch]
        records = canonical_records(raw, LabelRecord)
        if records is None:
            return None  # the full path reports it
        for (record, fixed), span in zip(records, batch, strict=True):
            # Labellers and guideline versions repeat: one string each (shared when pickled too).
            key = (record.case_id, intern(record.labeller), intern(record.guideline_version))
            rows.append(LabelRow(label_sort_key(record), key, span, fixed))
        if on_batch is not None:
            on_batch(sum(n + 1 for _, n in batch))
    return rows


@dataclass(frozen=True)
class LabelFile:
    """A labels file that a release keeps as it stands, read from disk, never held whole.

    Every line is a valid, canonical label, newline-ended, in canonical order, and no two
    share a key (case, labeller, guideline version). At 1M cases the file (0.9 GB) and a row
    for each of its 2M labels held 2 GB of a first release's parent.
    """

    source: OnDisk
    """The file as read when it was validated (its size and XXH3-128)."""
    hashes: list[bytes]
    """Each line's hash, in file order."""
    case_ids: list[str]
    """The case each run of lines labels, in file order (one entry a case)."""


@dataclass(frozen=True)
class LabelLines:
    """A labels file's lines in canonical order: each read from the file, or held re-written.

    What a first release writes of a labels file that is not canonical as it stands (lines
    out of order, or not in canonical form), without holding the file: only the lines
    re-written are held, the others are read back by position, each checked against its hash.
    """

    source: OnDisk
    """The file as read when it was validated."""
    rewritten: list[bytes]
    """The lines re-written, joined, a block per share of the file."""
    block: array[int]
    """Of each line in canonical order: the block of ``rewritten`` holding it (-1: the file)."""
    where: array[int]
    sizes: array[int]
    """Of each line in canonical order: its offset (in its block or the file) and length."""
    hashes: list[bytes]
    """Each line's hash, in canonical order."""
    case_ids: list[str]
    """Each case labelled, once."""

    @contextlib.contextmanager
    def lines(self) -> Iterator[Callable[[int], bytes | memoryview]]:
        """A function giving line ``i`` in canonical order, without its newline.

        Lines asked for in :meth:`file_order` are read a block at a time; others, one each.

        Raises:
            Changed: A line read from the file no longer has its hash.
        """
        views = [memoryview(block) for block in self.rewritten]
        with self.source.reader() as read:

            def checked(i: int) -> bytes | memoryview:
                out = read(self.where[i], self.sizes[i])
                if line_hash(out) != self.hashes[i]:
                    raise Changed(str(self.source.path))
                return out

            def line(i: int) -> bytes | memoryview:
                block = self.block[i]
                if block >= 0:
                    at = self.where[i]
                    return views[block][at : at + self.sizes[i]]
                return checked(i)

            yield line

    def file_order(self) -> Sequence[int]:
        """Positions of the lines held first, then of those in the file, in its order.

        Read so, the file is read front to back in blocks, not a line at a time by position.
        """
        import numpy as np  # here: as in by_offset

        blocks = np.asarray(self.block)
        on_file = np.flatnonzero(blocks < 0)
        in_order = on_file[np.argsort(np.asarray(self.where)[on_file], kind="stable")]
        order: list[int] = np.concatenate([np.flatnonzero(blocks >= 0), in_order]).tolist()
        return order

    def pieces(self) -> Iterator[bytes]:
        """The file as a release writes it, in pieces of newline-ended lines."""
        with self.lines() as line:
            yield from joined_lines(line(i) for i in range(len(self.hashes)))


@dataclass(frozen=True)
class _InOrder:
    """What a worker sends back of a share of a labels file that is canonical as it stands."""

    hashes: bytes
    """Each line's 16-byte hash, joined."""
    first: str
    last: str
    """Sort keys (:func:`label_sort_key`) of the share's first and last lines."""
    case_ids: list[str]
    first_keys: frozenset[tuple[str, str]]
    last_keys: frozenset[tuple[str, str]]
    """Labeller and guideline version of each label of the first and of the last run."""


@dataclass(frozen=True)
class _Rows:
    """A share of a labels file as compact rows: what a worker sends back to be sorted.

    At 1M cases a row object a label (sort key, key, span, canonical line) took about 1.2 GB
    of the parent; here each is a sort key string and a few array entries.
    """

    sort_keys: list[str]
    where: array[int]
    """Each line's offset: in the labels file, or (when ``fixed``) in ``lines``."""
    sizes: array[int]
    fixed: bytes
    """One byte a line: 1 when its canonical form (in ``lines``) is not the file's line."""
    lines: bytes
    """The canonical form of the lines that are not canonical in the file, joined."""
    hashes: bytes
    """Each canonical line's 16-byte hash, joined."""
    keys: array[int]
    """A 64-bit hash of each label's key (case, labeller, guideline version)."""
    case_ids: list[str]
    """Each case labelled, once."""


def _rows_of(found: Sequence[LabelRow], view: memoryview, start: int) -> _Rows:
    """Compact rows of a share's labels (``view`` the share's bytes, at ``start`` in the file)."""
    where = array("q")
    sizes = array("q")
    fixed = bytearray()
    lines: list[bytes] = []
    hashes: list[bytes] = []
    at = 0
    case_ids: dict[str, None] = {}
    for row in found:
        offset, size = row.span
        if row.fixed is None:
            where.append(start + offset)
            sizes.append(size)
            fixed.append(0)
            hashes.append(line_hash(view[offset : offset + size]))
        else:
            where.append(at)
            sizes.append(len(row.fixed))
            fixed.append(1)
            lines.append(row.fixed)
            at += len(row.fixed)
            hashes.append(line_hash(row.fixed))
        case_ids[row.key[0]] = None
    keys = array("Q", (xxhash.xxh3_64_intdigest("\0".join(row.key).encode()) for row in found))
    return _Rows(
        [row.sort_key for row in found],
        where,
        sizes,
        bytes(fixed),
        b"".join(lines),
        b"".join(hashes),
        keys,
        list(case_ids),
    )


def label_share(
    path: Path, start: int, end: int, shown: str, rows: bool
) -> _InOrder | _Rows | None:
    """Validate the label lines in bytes ``start`` to ``end`` of ``path``.

    ``None``: a bad line, two labels sharing a key, or the file changed. Otherwise what the
    share holds compactly (:class:`_InOrder`) when its lines are canonical, newline-ended and
    in canonical order and ``rows`` is false, else its rows (:class:`_Rows`).
    """
    with path.open("rb") as handle:
        handle.seek(start)
        data = handle.read(end - start)
    if len(data) != end - start:
        return None  # cut short meanwhile: the full path reads it again
    spans = list(split_lines(data))
    with collector_paused():
        found = label_rows_here(data, spans, shown)
    if found is None:
        return None
    in_order = (
        not rows
        and data.endswith(b"\n")
        and all(r.fixed is None for r in found)
        and all(a.sort_key <= b.sort_key for a, b in pairwise(found))
    )
    view = memoryview(data)
    if not in_order:
        return _rows_of(found, view, start)
    case_ids: list[str] = []
    runs: list[set[tuple[str, str]]] = []
    for row in found:
        case_id, labeller, guideline = row.key
        if not case_ids or case_ids[-1] != case_id:
            case_ids.append(case_id)
            runs.append(set())
        if (labeller, guideline) in runs[-1]:
            return None  # two labels with one key: the full path reports them
        runs[-1].add((labeller, guideline))
    return _InOrder(
        b"".join(line_hash(view[o : o + n]) for o, n in spans),
        found[0].sort_key,
        found[-1].sort_key,
        case_ids,
        frozenset(runs[0]),
        frozenset(runs[-1]),
    )


class _NotInOrder(Exception):
    """A share of a labels file is not in canonical order as it stands, or two shares are not."""


Share = _InOrder | _Rows | None


def _label_file(source: OnDisk, parts: Sequence[Share]) -> LabelFile | None:
    """The shares' compact results as one file (``None``: a bad line, or two labels share a key).

    Raises:
        _NotInOrder: The file is not kept as it stands: its rows are wanted, share by share.
    """
    if any(part is None for part in parts):
        return None
    ordered = [part for part in parts if isinstance(part, _InOrder)]
    if len(ordered) != len(parts):
        raise _NotInOrder
    hashes: list[bytes] = []
    case_ids: list[str] = []
    run: set[tuple[str, str]] = set()  # the keys of the last case's labels so far
    for before, part in zip([None, *ordered], ordered, strict=False):
        if before is not None and before.last > part.first:
            raise _NotInOrder
        if case_ids and case_ids[-1] == part.case_ids[0]:  # one case's labels in two shares
            if run & part.first_keys:
                return None
            run |= part.first_keys
            case_ids += part.case_ids[1:]
        else:
            run = set(part.first_keys)
            case_ids += part.case_ids
        if len(part.case_ids) > 1:
            run = set(part.last_keys)
        hashes += _split_hashes(part.hashes)
    return LabelFile(source, hashes, case_ids)


def _split_hashes(joined: bytes) -> list[bytes]:
    view = memoryview(joined)
    return [bytes(view[i : i + 16]) for i in range(0, len(view), 16)]


def _label_lines(source: OnDisk, parts: Sequence[_Rows]) -> LabelLines | None:
    """The shares' rows sorted into canonical order (``None``: two labels may share a key).

    Two keys with one 64-bit hash count as a duplicate: the full path then decides.
    """
    keys = array("Q")
    for part in parts:
        keys.extend(part.keys)
    if len(set(keys)) != len(keys):
        return None
    del keys
    sort_keys = [key for part in parts for key in part.sort_keys]
    order = sorted(range(len(sort_keys)), key=sort_keys.__getitem__)  # stable, as before
    del sort_keys
    share = array("h")
    where = array("q")
    sizes = array("q")
    for i, part in enumerate(parts):
        share.extend(array("h", (i if flag else -1 for flag in part.fixed)))
        where.extend(part.where)
        sizes.extend(part.sizes)
    hashes = b"".join(part.hashes for part in parts)
    return LabelLines(
        source,
        [part.lines for part in parts],
        array("h", (share[i] for i in order)),
        array("q", (where[i] for i in order)),
        array("q", (sizes[i] for i in order)),
        [hashes[16 * i : 16 * i + 16] for i in order],
        list(dict.fromkeys(case_id for part in parts for case_id in part.case_ids)),
    )


def label_rows_or_file(
    source: OnDisk,
    shares: Sequence[tuple[int, int]],
    parts: list[Share],
    again: Callable[[list[tuple[int, int]]], list[Share]],
) -> LabelFile | LabelLines | None:
    """A labels file validated in ``shares`` (byte ranges) as one: kept as it stands, or sorted.

    ``parts`` are :func:`label_share`'s compact results of the shares; ``again`` asks the
    shares given for their rows (here or on workers) when the file cannot be kept as it
    stands. ``None``: a bad line, or two labels sharing a key.
    """
    try:
        return _label_file(source, parts)
    except _NotInOrder:
        pass
    redo = [i for i, part in enumerate(parts) if isinstance(part, _InOrder)]
    for i, part in zip(redo, again([shares[i] for i in redo]), strict=True):
        parts[i] = part
    rows = [part for part in parts if isinstance(part, _Rows)]
    return _label_lines(source, rows) if len(rows) == len(parts) else None
