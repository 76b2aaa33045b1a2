"""Run the casework CLI in a subprocess with a hostile environment, for crash and race tests.

    python harness.py [--slow-read SECONDS] [--kill-at N] [--count FILE] -- CLI ARGS…

``--slow-read`` sleeps after every dataset read (widening the window between reading a dataset
and releasing it, as a slow disk or a big dataset would); ``--kill-at N`` kills the process the
moment it is about to make its N-th ``os.replace`` (every atomic write ends with one), so the N-th
file is written in full beside its target but never renamed; ``--count`` records how many
replaces a clean run makes.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

KILLED = 137


def _slow(original: Callable[..., Any], seconds: float) -> Callable[..., Any]:
    def slow(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        time.sleep(seconds)
        return result

    return slow


def _patch_reads(seconds: float) -> None:
    import casework.cli  # noqa: F401  (imports every module that may hold load_dataset)
    import casework.dataset.store as store

    original = store.load_dataset
    slow = _slow(original, seconds)
    for module in list(sys.modules.values()):
        if (
            module is not None
            and module.__name__.startswith("casework")
            and getattr(module, "load_dataset", None) is original
        ):
            setattr(module, "load_dataset", slow)  # noqa: B010


def _patch_replace(kill_at: int, count_file: Path | None) -> None:
    real = os.replace
    calls = 0

    def replace(src: Any, dst: Any, *args: Any, **kwargs: Any) -> None:
        nonlocal calls
        calls += 1
        if kill_at and calls == kill_at:
            os._exit(KILLED)
        real(src, dst, *args, **kwargs)
        if count_file is not None:
            count_file.write_text(str(calls), encoding="utf-8")

    os.replace = replace


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slow-read", type=float, default=0.0)
    parser.add_argument("--kill-at", type=int, default=0)
    parser.add_argument("--count", type=Path, default=None)
    parser.add_argument("args", nargs=argparse.REMAINDER)
    opts = parser.parse_args()
    args = opts.args[1:] if opts.args[:1] == ["--"] else opts.args
    if opts.slow_read:
        _patch_reads(opts.slow_read)
    _patch_replace(opts.kill_at, opts.count)
    from casework.cli import main as cli_main

    sys.argv = ["casework", *args]
    cli_main()


if __name__ == "__main__":
    main()
