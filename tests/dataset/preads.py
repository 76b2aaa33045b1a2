"""Counting the reads by position (``os.pread``) a test makes casework do."""

from __future__ import annotations

import os

import pytest


def counted_preads(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    """From now on, each ``os.pread``'s offset and length (casework reads ``os.pread`` when called)."""
    calls: list[tuple[int, int]] = []
    real = os.pread

    def pread(fd: int, length: int, offset: int) -> bytes:
        calls.append((offset, length))
        return real(fd, length, offset)

    monkeypatch.setattr(os, "pread", pread)
    return calls
