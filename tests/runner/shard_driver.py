"""A sharded run in a fresh process, for the tests: one without threads, so it forks its workers.

Usage: ``python -m tests.runner.shard_driver ROOT REQUEST_JSON WORKERS`` (``REQUEST_JSON``: the
fields of a `RunRequest`). Prints one JSON line: this process's pid, then the run's figures or
the message of the error it raised.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from casework.errors import CaseworkError
from casework.project import load_project
from casework.runner import RunRequest
from casework.runner.shards import run_sharded


def main(argv: list[str]) -> int:
    """Run the sharded run ``argv`` describes and print its outcome."""
    root, request, workers = Path(argv[0]), RunRequest(**json.loads(argv[1])), int(argv[2])
    try:
        summary = run_sharded(load_project(root), request, workers=workers)
    except CaseworkError as exc:
        print(json.dumps({"pid": os.getpid(), "error": str(exc)}))
        return 1
    out = {
        "pid": os.getpid(),
        "log": str(summary.log),
        "ran": summary.ran,
        "resumed": summary.resumed,
        "end": summary.end.model_dump(mode="json"),
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
