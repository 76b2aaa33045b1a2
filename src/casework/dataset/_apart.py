"""Work done in a forked child process beside the parent's threads: the line store's pack.

A release writes the store's pack and stages its files side by side. On two threads of one
process most of that work holds the GIL: at 1M cases the two threads' CPU seconds added up to
the stage's wall time (31 s), one core for the whole stage. :func:`apart` forks a child for the
pack (only while this process runs no other thread: a fork copies the locks a thread may hold
at that instant), returns at once, and :meth:`Apart.result` waits for it, passing on its
progress as it goes; its result or error comes back pickled. Entry points: :func:`apart`,
:func:`fork_ok`, :func:`told`.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from casework.errors import CaseworkError

if TYPE_CHECKING:
    import multiprocessing.connection

__all__ = ["Apart", "apart", "fork_ok", "told"]

T = TypeVar("T")

#: In a child of :func:`apart`: where progress goes (the pipe to the parent).
_child_tell: Callable[[int, int], None] | None = None


def fork_ok() -> bool:
    """Whether a child may be forked here, inheriting this process's memory.

    Only on Linux (fork is unsafe on macOS, absent on Windows) and only while this process runs
    no other Python thread: a fork copies the locks a thread may hold at that instant (the
    workbench writer's, a progress bar's, the logging module's), which can deadlock the child.
    The idle thread pool numpy's OpenBLAS starts at import is not one: OpenBLAS shuts it down
    around every fork itself. The one rule for every fork casework makes (parallel scans, a
    run's workers, the store's pack).
    """
    return sys.platform.startswith("linux") and threading.active_count() == 1


def told(on_progress: Callable[[int, int], None]) -> Callable[[int, int], None]:
    """``on_progress``, or in a child of :func:`apart` the pipe that passes it to the parent."""

    def tell(done: int, total: int) -> None:
        (_child_tell or on_progress)(done, total)

    return tell


class Apart(Generic[T]):
    """A job running in a forked child: :meth:`result` waits for it (once)."""

    def __init__(self, pid: int, conn: multiprocessing.connection.Connection) -> None:
        """The child ``pid``, sending on the other end of ``conn``."""
        self._pid = pid
        self._conn = conn
        self._done = False

    def result(self, on_progress: Callable[[int, int], None] | None = None) -> T:
        """The job's return value (its error raised), its progress given to ``on_progress``.

        Raises:
            CaseworkError: The child ended without a word (killed, or it could not send).
        """
        outcome: tuple[str, Any] | None = None
        try:
            while outcome is None:
                try:
                    message = pickle.loads(self._conn.recv_bytes())
                except EOFError:
                    break
                if message[0] == "progress":
                    if on_progress is not None:
                        on_progress(message[1], message[2])
                else:
                    outcome = message
        finally:
            self.close(kill=outcome is None)
        if outcome is None:
            raise CaseworkError(f"the store's writer (process {self._pid}) ended without a word")
        if outcome[0] == "error":
            raise outcome[1]
        value: T = outcome[1]
        return value

    def close(self, *, kill: bool = True) -> None:
        """Reap the child (stopping it first, when ``kill``: its temp file the next lock cleans)."""
        if self._done:
            return
        self._done = True
        self._conn.close()
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._pid, signal.SIGTERM)
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self._pid, 0)


def apart(job: Callable[[], T]) -> Apart[T]:
    """Start ``job`` in a forked child (check :func:`fork_ok` first) and return at once.

    The child runs ``job`` with progress passed on (:func:`told`), sends its result or error
    (pickled: an error that cannot be is sent as a :class:`CaseworkError` naming it), and
    ends with ``os._exit``: none of the parent's exit handlers or finalizers run in it.
    """
    import multiprocessing  # here: `dataset versions` starts without it (issue 13)

    receive, send = multiprocessing.Pipe(duplex=False)
    pid = os.fork()
    if pid:
        send.close()
        return Apart(pid, receive)
    try:  # pragma: no cover - runs in the child (coverage follows no fork)
        receive.close()
        global _child_tell

        def tell(done: int, total: int) -> None:
            send.send_bytes(pickle.dumps(("progress", done, total)))

        _child_tell = tell
        try:
            outcome: tuple[str, Any] = ("done", job())
        except BaseException as exc:  # sent to the parent, which raises it
            outcome = ("error", exc)
        try:
            payload = pickle.dumps(outcome)
        except Exception:
            payload = pickle.dumps(("error", CaseworkError(f"{outcome[1]!r}")))
        send.send_bytes(payload)
        send.close()
    finally:
        os._exit(0)
