"""sha256 of a stream of pieces, computed on a thread of its own beside the code that writes them.

hashlib releases the GIL while it hashes a large piece, so a writer that hands each piece over
goes on writing while another core hashes: a first release of 100k cases hashes its 563 MB of
cases for the version hash, about 0.3 s of CPU that would be on the writing stage's critical
path.
"""

from __future__ import annotations

import hashlib
import queue
import threading
from types import TracebackType

__all__ = ["HashingThread"]

#: Pieces waiting to be hashed at most (each about a megabyte): the writer waits beyond that.
_WAITING = 8


class HashingThread:
    """A sha256 fed piece by piece (:meth:`update`) and computed on its own thread.

    Use it as a context manager: leaving the block stops the thread even when the writer
    failed. Pieces must not change once given (``bytes``, or views of bytes).
    """

    def __init__(self, prefix: bytes = b"") -> None:
        """Start hashing; ``prefix`` is hashed first."""
        self._digest = hashlib.sha256(prefix)
        self._error: BaseException | None = None
        self._pieces: queue.Queue[bytes | memoryview | None] = queue.Queue(_WAITING)
        self._thread = threading.Thread(target=self._run, name="sha256", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        # Every piece is taken off the queue, even after a failure: a writer never waits forever.
        while (piece := self._pieces.get()) is not None:
            if self._error is None:
                try:
                    self._digest.update(piece)
                except BaseException as exc:  # given to the caller by hexdigest()
                    self._error = exc

    def update(self, piece: bytes | memoryview) -> None:
        """Hash ``piece`` after those given before it."""
        if not self._thread.is_alive():
            raise RuntimeError("sha256 of a finished stream")
        self._pieces.put(piece)

    def hexdigest(self) -> str:
        """The sha256 of everything given, once it is hashed (no more pieces may follow)."""
        self.close()
        if self._error is not None:
            raise self._error
        return self._digest.hexdigest()

    def close(self) -> None:
        """Stop hashing (what was given is hashed); nothing more may be given."""
        if self._thread.is_alive():
            self._pieces.put(None)
            self._thread.join()

    def __enter__(self) -> HashingThread:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()
