"""The fit sample of a large build: a seeded bottom-k of failing conversations; the rest spilled.

:class:`Sampler` keeps the ``k`` failing conversations with the smallest seeded hash of their case
id (a uniform sample that does not depend on the order files are read in) and writes every other
one, scrubbed, to an anonymous temporary file in batches: memory holds the sample and one batch,
and the file has no name, so it vanishes with the process even when the build is killed.
"""

from __future__ import annotations

import hashlib
import heapq
import pickle
import struct
import tempfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from casework.shapes._traffic import Failing

_LENGTH = struct.Struct("<Q")


@dataclass(frozen=True)
class Row:
    """One failing conversation, scrubbed, as a build keeps it.

    Attributes:
        seq: Reading order: file index in the high 32 bits, position in the file below.
        case_id: Draft case id (`mined-<pseudonym>`).
        session: Session pseudonym.
        text: Scrubbed clustering text.
        situation: Scrubbed draft situation, as JSON text.
        signals: Failure signals.
    """

    seq: int
    case_id: str
    session: str
    text: str
    situation: str
    signals: tuple[str, ...]


def rows_of(part: Failing, file_index: int) -> Iterator[Row]:
    """The rows of one file's failing conversations, in file order."""
    for i, case_id in enumerate(part.case_ids):
        yield Row(
            (file_index << 32) | i,
            case_id,
            part.sessions[i],
            part.texts[i],
            part.situations[i],
            tuple(part.signals[i]),
        )


def seeded_hash(seed: int, case_id: str) -> int:
    """A 64-bit hash of ``case_id`` under ``seed``: the order of a seeded uniform sample."""
    digest = hashlib.blake2b(case_id.encode("utf-8"), digest_size=8, key=str(seed).encode())
    return int.from_bytes(digest.digest(), "big")


class Sampler:
    """Bottom-``k`` rows by :func:`seeded_hash` in memory; every other row spilled in batches.

    Args:
        k: Rows kept (the fit sample).
        seed: Seed of the hash.
        batch_size: Rows per spilled batch (the unit read back by :meth:`spilled`).
        spill_dir: Folder of the spill file (the project's ``.casework/tmp``: scrubbed traffic
            stays inside the project; default the system's temp folder).
    """

    def __init__(self, k: int, seed: int, batch_size: int, spill_dir: Path | None = None) -> None:
        self.k = k
        self.spill_dir = spill_dir
        self.seed = seed
        self.batch_size = batch_size
        self.seen = 0
        self.spilled_rows = 0
        # Max-heap of the k smallest (hash, seq): the root is the first to leave.
        self._heap: list[tuple[int, int, Row]] = []
        self._buffer: list[Row] = []
        self._file: IO[bytes] | None = None

    def add(self, row: Row) -> None:
        """Keep ``row`` in the sample, or spill it (or the sample row it displaces)."""
        self.seen += 1
        item = (-seeded_hash(self.seed, row.case_id), -row.seq, row)
        if len(self._heap) < self.k:
            heapq.heappush(self._heap, item)
            return
        if item[:2] > self._heap[0][:2]:
            item = heapq.heapreplace(self._heap, item)
        self._spill(item[2])

    def _spill(self, row: Row) -> None:
        self._buffer.append(row)
        if len(self._buffer) >= self.batch_size:
            self._flush()

    def _flush(self) -> None:
        if not self._buffer:
            return
        if self._file is None:
            # Lives as long as the sampler (closed by close()), not one block.
            if self.spill_dir is not None:
                self.spill_dir.mkdir(parents=True, exist_ok=True)
            self._file = tempfile.TemporaryFile(  # noqa: SIM115
                prefix="casework-shapes-", dir=self.spill_dir
            )
        blob = zlib.compress(pickle.dumps(self._buffer, protocol=pickle.HIGHEST_PROTOCOL), 1)
        self._file.write(_LENGTH.pack(len(blob)) + blob)
        self.spilled_rows += len(self._buffer)
        self._buffer = []

    def sample(self) -> list[Row]:
        """The sampled rows in reading order."""
        return sorted((r for _, _, r in self._heap), key=lambda r: r.seq)

    def spilled(self) -> Iterator[list[Row]]:
        """The spilled rows, one batch at a time, in the order they were spilled."""
        self._flush()
        if self._file is None:
            return
        self._file.seek(0)
        while header := self._file.read(_LENGTH.size):
            (length,) = _LENGTH.unpack(header)
            # The file is this process's own anonymous temporary file, never another's input.
            yield pickle.loads(zlib.decompress(self._file.read(length)))

    def __enter__(self) -> Sampler:
        """The sampler itself; leaving the block closes it."""
        return self

    def __exit__(self, *exc: object) -> None:
        """Close the spill file."""
        self.close()

    def close(self) -> None:
        """Drop the spill file (it has no name: closing it frees the disk)."""
        if self._file is not None:
            self._file.close()
            self._file = None
        self._buffer = []
