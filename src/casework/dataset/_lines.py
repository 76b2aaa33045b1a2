"""Where a cases file's lines are: held in memory, or read back from the file by position.

:func:`scan_file` hashes each line of a file in one pass over chunks of it (holding none of it
afterwards); :class:`OnDisk` then reads lines back where they were, and its users check each
against its hash (:class:`Changed` when the file changed meanwhile); :class:`InMemory` serves
bytes already held. Entry points: :func:`scan_file`, :class:`OnDisk`, :class:`InMemory`,
:func:`by_offset`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import xxhash

from casework.dataset._objects import line_hash

__all__ = [
    "Changed",
    "InMemory",
    "OnDisk",
    "Source",
    "by_offset",
    "joined_lines",
    "scan_file",
    "split_lines",
]


class Changed(Exception):
    """A file's line no longer holds the bytes it was indexed with (it changed meanwhile)."""


@dataclass(frozen=True)
class InMemory:
    """Lines held in memory: a file's bytes."""

    data: bytes

    @contextlib.contextmanager
    def reader(self) -> Iterator[Callable[[int, int], bytes | memoryview]]:
        """A function reading ``length`` bytes at ``offset``."""
        view = memoryview(self.data)
        yield lambda offset, length: view[offset : offset + length]


@dataclass(frozen=True)
class OnDisk:
    """Lines read from a file when wanted, each checked against the hash it was indexed with.

    A first release of 100k cases held the 563 MB file in memory besides everything else
    (2.45 GB at peak); read back by position it holds a batch of lines at a time.
    """

    path: Path
    size: int = -1
    """The file's size when it was indexed (``-1``: not known)."""
    digest: bytes = b""
    """XXH3-128 of the file's bytes when it was indexed (empty: not known)."""

    def whole(self) -> Iterator[bytes]:
        """The file's bytes as indexed, in chunks, read in order.

        Raises:
            Changed: The file no longer holds those bytes (found once the last chunk is read).
        """
        seen = xxhash.xxh3_128()
        left = self.size
        with self.path.open("rb") as handle:
            while left > 0 and (chunk := handle.read(min(left, _SCANNED))):
                seen.update(chunk)
                left -= len(chunk)
                yield chunk
        if left or seen.digest() != self.digest:
            raise Changed(str(self.path))

    @contextlib.contextmanager
    def reader(self) -> Iterator[Callable[[int, int], bytes | memoryview]]:
        """A function reading ``length`` bytes at ``offset`` (:class:`Changed` when short).

        Lines asked for one after the other (each starting just past the last one's newline)
        are read ahead in blocks of :data:`_AHEAD` bytes: a first release of 100k cases read
        its file back a line at a time, 300k system calls between the workers and the store.
        """
        with self.path.open("rb", buffering=0) as handle:
            fd = handle.fileno()
            block = b""
            block_at = 0
            expected = -1  # where the line after the last one read starts

            def pread(length: int, offset: int) -> bytes:
                if hasattr(os, "pread"):
                    return os.pread(fd, length, offset)
                handle.seek(offset)  # Windows
                return handle.read(length)

            def read(offset: int, length: int) -> bytes:
                nonlocal block, block_at, expected
                end = offset + length
                if block_at <= offset and end <= block_at + len(block):
                    out = block[offset - block_at : end - block_at]
                elif offset == expected:
                    block = pread(max(length, _AHEAD), offset)
                    block_at = offset
                    out = block[:length]
                else:
                    out = pread(length, offset)
                if len(out) != length:
                    raise Changed(str(self.path))
                expected = end + 1
                return out

            yield read


_AHEAD = 1 << 20  # bytes read ahead when lines are read in file order


Source = InMemory | OnDisk


def scan_file(
    path: Path,
    chunks_seen: Callable[[bytes], object],
    lines_seen: Callable[[list[tuple[int, int]], list[bytes]], object] | None = None,
) -> tuple[OnDisk, list[tuple[int, int]], list[bytes], bool]:
    """Each line's offset, length and hash in one pass over a file read in chunks.

    ``chunks_seen`` is given every chunk as read (e.g. to fingerprint the same bytes);
    ``lines_seen``, the spans and hashes found so far after each chunk (the lists themselves,
    growing: e.g. to hand whole lines to workers before the end of the file is read). Returns
    the file as a source, the spans, the hashes and whether the file ends with a newline (or
    is empty).
    """
    spans: list[tuple[int, int]] = []
    hashes: list[bytes] = []
    carry = b""
    offset = 0  # file offset of carry's first byte
    whole = xxhash.xxh3_128()
    size = 0
    with path.open("rb") as handle:
        while chunk := handle.read(_SCANNED):
            chunks_seen(chunk)
            whole.update(chunk)
            size += len(chunk)
            data = carry + chunk if carry else chunk
            view = memoryview(data)
            start = 0
            while (stop := data.find(b"\n", start)) >= 0:
                spans.append((offset + start, stop - start))
                hashes.append(line_hash(view[start:stop]))
                start = stop + 1
            carry = data[start:]
            offset += start
            if lines_seen is not None:
                lines_seen(spans, hashes)
    if carry:
        spans.append((offset, len(carry)))
        hashes.append(line_hash(carry))
    return OnDisk(path, size, whole.digest()), spans, hashes, not carry


_SCANNED = 1 << 24  # bytes read at a time by :func:`scan_file`


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


def by_offset(offsets: Sequence[int]) -> list[int]:
    """Positions of ``offsets`` in increasing order of offset (ties by position).

    Lines read in this order come front to back from their file, a block at a time
    (:meth:`OnDisk.reader` reads ahead), where a first release of 1M cases read its lines
    out of file order, a system call each.
    """
    import numpy as np  # here: most dataset commands never order a file's lines

    order: list[int] = np.argsort(np.asarray(offsets, dtype=np.int64), kind="stable").tolist()
    return order


_JOINED = 500  # lines joined into one piece


def joined_lines(lines: Iterable[bytes | memoryview]) -> Iterator[bytes]:
    """Lines (without newlines) as newline-ended pieces of :data:`_JOINED` lines each."""
    batch: list[bytes | memoryview] = []
    for line in lines:
        batch.append(line)
        if len(batch) == _JOINED:
            batch.append(b"")  # ends the last line: one copy of the piece, not two
            yield b"\n".join(batch)
            batch.clear()
    if batch:
        batch.append(b"")
        yield b"\n".join(batch)
