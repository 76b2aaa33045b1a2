"""Bounded decompression: what casework inflates from a user's file is capped while it inflates.

A file of a few hundred kilobytes can inflate to gigabytes (a decompression bomb). Every reader
of compressed input (Inspect ``.eval`` zips, compressed leakage corpora) reads through
:class:`Inflation`, which counts the bytes as the decompressor yields them (declared sizes are
never trusted) and stops with a located :class:`~casework.errors.InputError` naming the bound and
how to raise it. Entry points: :class:`DecompressionLimits` (``from_env``), :class:`Inflation`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from casework.errors import InputError, UsageError

__all__ = [
    "MAX_DECOMPRESSED_ENV",
    "MAX_RATIO_ENV",
    "DecompressionLimits",
    "Inflation",
]

#: Environment variable: most bytes decompressed from one file (``512M``, ``2G``, or bytes).
MAX_DECOMPRESSED_ENV = "CASEWORK_MAX_DECOMPRESSED"
#: Environment variable: largest ratio of decompressed to compressed bytes of one member.
MAX_RATIO_ENV = "CASEWORK_MAX_COMPRESSION_RATIO"

_MIB = 1 << 20
#: A member may inflate this much whatever its ratio: tiny members compress far past any ratio.
RATIO_FLOOR = _MIB
_CHUNK = _MIB
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


class _Readable(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...


def _size_text(n: float) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.4g} {unit}"
    return f"{int(n)} bytes"


@dataclass(frozen=True)
class DecompressionLimits:
    """How much casework decompresses from one file.

    Attributes:
        max_bytes: Most bytes inflated from one file (all its members together); for a corpus
            streamed a line at a time, the longest line.
        max_ratio: Largest ratio of a member's inflated bytes to its compressed bytes (checked
            once it passes 1 MiB: real JSON compresses 5-50 times, a bomb a thousand times).
    """

    max_bytes: int = 256 * _MIB
    max_ratio: float = 200.0

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> DecompressionLimits:
        """The limits from ``CASEWORK_MAX_DECOMPRESSED`` and ``CASEWORK_MAX_COMPRESSION_RATIO``.

        Unset variables keep the defaults (256 MiB, ratio 200).

        Raises:
            UsageError: A variable is not a positive size (``512M``, ``2G``, ``1000000``) or number.
        """
        env = os.environ if environ is None else environ
        limits = cls()
        raw = env.get(MAX_DECOMPRESSED_ENV)
        if raw is not None:
            found = _SIZE_RE.match(raw)
            size = float(found.group(1)) * _UNITS[found.group(2).lower()] if found else 0.0
            if size < 1:
                raise UsageError(
                    f"{MAX_DECOMPRESSED_ENV}: expected a size such as 512M, 2G or a number of "
                    f"bytes. Got '{raw}'."
                )
            limits = cls(int(size), limits.max_ratio)
        raw = env.get(MAX_RATIO_ENV)
        if raw is not None:
            try:
                ratio = float(raw)
            except ValueError:
                ratio = 0.0
            if not ratio >= 1 or ratio == float("inf"):
                raise UsageError(f"{MAX_RATIO_ENV}: expected a number of 1 or more. Got '{raw}'.")
            limits = cls(limits.max_bytes, ratio)
        return limits


class Inflation:
    """The bytes inflated from one file so far, checked against its limits as they come.

    Args:
        limits: The bounds (default: :meth:`DecompressionLimits.from_env`).
        shown: The file as the user names it, for messages.
    """

    def __init__(self, shown: str, limits: DecompressionLimits | None = None) -> None:
        """Start counting for the file ``shown``."""
        self.limits = limits if limits is not None else DecompressionLimits.from_env()
        self.shown = shown
        self.total = 0

    def chunks(self, stream: _Readable, compressed: int, where: str) -> Iterator[bytes]:
        """The inflated bytes of one member, a chunk at a time, each counted before it is yielded.

        Args:
            stream: A decompressing reader (``read(n)`` returns at most ``n`` bytes; ``b""`` at end).
            compressed: Bytes the member takes in the file (its real extent, not a declared size).
            where: The member, for messages (``log.eval!samples/1.json``).

        Raises:
            InputError: The file inflates past ``max_bytes`` or the member past ``max_ratio``.
        """
        return self._inflate(stream, compressed, where, whole=True)

    def read(self, stream: _Readable, compressed: int, where: str) -> bytes:
        """All the inflated bytes of one member (see :meth:`chunks`)."""
        return b"".join(self.chunks(stream, compressed, where))

    def lines(self, stream: _Readable, compressed: int | None, where: str) -> Iterator[bytes]:
        """The lines of a stream (each without its newline), none longer than ``max_bytes``.

        For a corpus streamed a line at a time only a line is held at once, so the whole may
        inflate past ``max_bytes``; not past ``max_ratio`` (``compressed`` is ``None`` for a
        file that is not compressed, whose ratio is not checked).

        Raises:
            InputError: A line is longer than ``max_bytes``, or the stream inflates past
                ``max_ratio``.
        """
        source = (
            self._inflate(stream, compressed, where, whole=False)
            if compressed is not None
            else iter(lambda: stream.read(_CHUNK), b"")
        )
        pieces: list[bytes] = []  # the line being read, in pieces: never copied as it grows
        held = 0
        for chunk in source:
            start = 0
            while (end := chunk.find(b"\n", start)) >= 0:
                self._check_line(held + end - start, where)
                pieces.append(chunk[start:end])
                yield b"".join(pieces)
                pieces, held, start = [], 0, end + 1
            if start < len(chunk):
                pieces.append(chunk[start:])
                held += len(chunk) - start
                self._check_line(held, where)
        if pieces:
            yield b"".join(pieces)

    def _check_line(self, length: int, where: str) -> None:
        if length > self.limits.max_bytes:
            raise self._error(
                where,
                f"holds a line longer than {_size_text(self.limits.max_bytes)}, the most "
                "casework reads at once",
                f"{MAX_DECOMPRESSED_ENV}=2G",
            )

    def _inflate(
        self, stream: _Readable, compressed: int, where: str, *, whole: bool
    ) -> Iterator[bytes]:
        own = 0
        allowed = max(RATIO_FLOOR, self.limits.max_ratio * max(compressed, 1))
        while chunk := stream.read(_CHUNK):
            own += len(chunk)
            self.total += len(chunk)
            if whole and self.total > self.limits.max_bytes:
                raise self._error(
                    where,
                    f"decompresses to more than {_size_text(self.limits.max_bytes)}, the most "
                    "casework inflates from one file",
                    f"{MAX_DECOMPRESSED_ENV}=2G",
                )
            if own > allowed:
                raise self._error(
                    where,
                    f"inflates more than {self.limits.max_ratio:g} times its "
                    f"{_size_text(compressed)} compressed (a decompression bomb?)",
                    f"{MAX_RATIO_ENV}={self.limits.max_ratio * 5:g}",
                )
            yield chunk

    def _error(self, where: str, what: str, example: str) -> InputError:
        return InputError(
            where,
            None,
            None,
            f"{what}; refused. If the file is trusted, raise the bound with {example}",
        )
