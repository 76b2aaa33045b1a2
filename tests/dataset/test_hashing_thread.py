"""`HashingThread`: the sha256 of pieces handed to another thread equals hashlib's of their join."""

from __future__ import annotations

import hashlib
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from casework.dataset._hashing import HashingThread


@given(prefix=st.binary(max_size=20), pieces=st.lists(st.binary(max_size=3000), max_size=40))
def test_equals_hashlib_over_the_joined_pieces(prefix: bytes, pieces: list[bytes]) -> None:
    with HashingThread(prefix) as digest:
        for i, piece in enumerate(pieces):
            digest.update(memoryview(piece) if i % 2 else piece)
        got = digest.hexdigest()
    assert got == hashlib.sha256(prefix + b"".join(pieces)).hexdigest()


def _sha_threads() -> int:
    return sum(t.name == "sha256" for t in threading.enumerate())


def test_a_bad_piece_is_raised_by_hexdigest_and_never_blocks_the_writer() -> None:
    before = _sha_threads()
    digest = HashingThread()
    digest.update(object())  # type: ignore[arg-type]  # not bytes: the thread's update fails
    for _ in range(100):  # far more than the queue holds: taken off all the same
        digest.update(b"x" * 1000)
    with pytest.raises(TypeError):
        digest.hexdigest()
    assert _sha_threads() == before


def test_leaving_the_block_on_an_error_stops_the_thread() -> None:
    before = _sha_threads()
    with pytest.raises(RuntimeError), HashingThread() as digest:
        digest.update(b"a")
        raise RuntimeError("the writer failed")
    assert _sha_threads() == before
    with pytest.raises(RuntimeError, match="finished"):
        digest.update(b"b")
